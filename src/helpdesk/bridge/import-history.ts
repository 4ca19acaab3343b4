import { typedAs } from '../../domain/recorded.js';
import type { Clock } from '../../infra/clock.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { EventStore } from '../../infra/eventstore/port.js';
import type { HelpdeskDoc } from '../../projections/helpdesk/helpdesk-projection.js';
import { isGroupJid } from '../addresses.js';
import type { HelpdeskAccount } from '../port.js';
import { HELPDESK_JOBS, type JobDoc } from './jobs.js';
import type { ToHelpdesk } from './to-helpdesk.js';

/** Progress is written every so many messages: a resumed import redoes at most these checks. */
const PROGRESS_EVERY = 20;

const skipped = (config: HelpdeskDoc, jid: string) =>
  /(@broadcast|@newsletter)$/.test(jid) || config.ignore_jids.includes(jid) || (config.ignore_groups && isGroupJid(jid));

/**
 * Imports a synced history into the helpdesk through the REST API, by the same idempotent path as
 * live messages: contacts for the synced chats (`import_contacts`), and the messages of the last
 * `days_limit_import_messages` days (`import_messages`), oldest first. Resumable: a message
 * already bridged is known by its link and skipped, so a restart picks up where it stopped.
 */
export class ImportHistory {
  constructor(
    private readonly events: EventStore,
    private readonly docs: DocumentStore,
    private readonly toHelpdesk: ToHelpdesk,
    private readonly clock: Clock,
  ) {}

  async run(config: HelpdeskDoc, account: HelpdeskAccount, job: JobDoc & { work: { kind: 'import' } }): Promise<void> {
    if (config.inbox_id === null) return;
    const [stored] = await this.events.readStream(job.work.stream, { fromRevision: BigInt(job.work.revision), maxCount: 1 });
    // Retention may have removed it since (or it is malformed, which the projections report): nothing is left to import.
    const event = stored ? typedAs(stored, 'HistorySyncReceived') : null;
    if (!event) return;
    const sync = event.data;
    const cutoffS = this.clock.now().getTime() / 1000 - config.days_limit_import_messages * 86_400;
    const chats = config.import_contacts ? sync.chats.filter((c) => !skipped(config, c.jid)) : [];
    const messages = config.import_messages
      ? sync.messages.filter((m) => m.timestamp_s >= cutoffS && m.type !== 'other' && !skipped(config, m.chat)).sort((a, b) => a.timestamp_s - b.timestamp_s)
      : [];
    const progress = { contacts: 0, messages: 0, total: messages.length };
    const save = () => this.docs.collection<JobDoc>(HELPDESK_JOBS).updateOne({ _id: job._id }, { $set: { progress } });
    await save();
    for (const chat of chats) {
      await this.toHelpdesk.ensureContact(account, config.inbox_id, chat.jid, undefined, chat.name);
      progress.contacts++;
    }
    // Only the first message of a retried import can have been created without its link.
    let retry = job.attempts > 0;
    for (const message of messages) {
      await this.toHelpdesk.deliver(config, account, job.instance_id, message, retry);
      retry = false;
      if (++progress.messages % PROGRESS_EVERY === 0) await save();
    }
    await save();
  }
}
