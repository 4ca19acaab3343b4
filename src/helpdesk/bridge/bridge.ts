import { DomainError } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import { singleNodeClaims, type Claim, type DocClaims } from '../../infra/doc-claims.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { Logger } from '../../infra/logging/logger.js';
import type { HelpdeskDoc } from '../../projections/helpdesk/helpdesk-projection.js';
import type { HelpdeskQueries } from '../../projections/helpdesk/helpdesk-queries.js';
import { HelpdeskError, type HelpdeskAccount, type HelpdeskClient } from '../port.js';
import { Pump } from '../../infra/pump.js';
import { conversationKey, HELPDESK_JOBS, HELPDESK_LINKS, laneOf, linkId, type JobDoc, type LinkDoc } from './jobs.js';
import type { ImportHistory } from './import-history.js';
import { repeat } from '../../infra/repeat.js';
import { firstPendingPerKey } from '../../infra/docstore/first-pending.js';
import type { ToHelpdesk } from './to-helpdesk.js';
import { UndeliverableReply, type ToWhatsApp } from './to-whatsapp.js';

export interface BridgeOptions {
  docs: DocumentStore;
  configs: HelpdeskQueries;
  client: HelpdeskClient;
  toHelpdesk: ToHelpdesk;
  toWhatsApp: ToWhatsApp;
  importHistory: ImportHistory;
  openToken: (instanceId: string, sealed: string) => string;
  clock: Clock;
  logger: Logger;
  /** How often the outbox is read when nothing pokes the bridge. */
  pollMs?: number;
  /** Jobs of different lanes carried out at once. */
  parallel?: number;
  /** After this long a job that keeps failing is given up (a reply is reported back as a note). */
  horizonMs?: number;
  /** Several nodes share the jobs: each job is claimed by the node carrying it out. Default: this process is the only one. */
  claims?: DocClaims;
}

export interface ImportProgress {
  state: 'running' | 'done' | 'failed';
  contacts_imported: number;
  messages_imported: number;
  messages_total: number;
}

const SWEEP_EVERY_MS = 3_600_000;
const KEEP_FINISHED_MS = 7 * 86_400_000;
/**
 * The first sweep waits this long after start: its filter (a nested field) compiles a query in
 * the embedded store, whose engine took a busy restart a second to load before /ready, and jobs
 * kept a week can wait a minute more.
 */
const FIRST_SWEEP_AFTER_MS = 60_000;
const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 5 * 60_000;
/** The helpdesk's per-conversation limit counts a minute. */
const TOO_MANY_WAIT_MS = 60_000;

/**
 * Carries out the outbox's jobs. One lane per instance and direction runs in log order, one job
 * at a time, so a conversation sees its messages in order and two of them never race to open it;
 * lanes run side by side. A failure waits with exponential back-off (a minute when the helpdesk
 * says "too many messages"), holding its conversation but stepping aside for the lane's others;
 * a final refusal (not on WhatsApp, no address) is given up at once. A job is done only once its
 * effect is recorded.
 *
 * With several nodes, a job is claimed (on its document, expiring) by the node that carries it
 * out, and renewed while it runs (a history import takes a while); a lane whose head another node
 * holds is stepped over, so a lane still runs one job at a time, in order, across the nodes. A
 * node that dies leaves its claim to lapse, and another node carries the job out again (the
 * bridge is at-least-once: the echo guard and the links make a repeat harmless).
 */
export class HelpdeskBridge {
  private readonly pump: Pump;
  private sweptAt: number | null = null;
  private readonly claims: DocClaims;

  constructor(private readonly o: BridgeOptions) {
    this.claims = o.claims ?? singleNodeClaims;
    this.pump = new Pump(
      () => this.drain(),
      (err) => o.logger.error({ err }, 'the helpdesk bridge failed; retrying'),
    );
  }

  start(): void {
    this.pump.poke();
  }

  /** New jobs were committed, or a test moved the clock. */
  poke(): void {
    this.pump.poke();
  }

  stop(): Promise<void> {
    return this.pump.stop();
  }

  /** Jobs waiting (metrics). */
  pending(): Promise<number> {
    return this.o.docs.collection<JobDoc>(HELPDESK_JOBS).count({ state: 'pending' });
  }

  /** The history imports of an instance, summed: what its configuration shows. */
  async importProgress(instanceId: string): Promise<ImportProgress | null> {
    const imports = await this.o.docs.collection<JobDoc>(HELPDESK_JOBS).find({ instance_id: instanceId, 'work.kind': 'import' });
    if (imports.length === 0) return null;
    const sum = (f: (j: JobDoc) => number) => imports.reduce((n, j) => n + f(j), 0);
    return {
      state: imports.some((j) => j.state === 'pending') ? 'running' : imports.some((j) => j.state === 'failed') ? 'failed' : 'done',
      contacts_imported: sum((j) => j.progress?.contacts ?? 0),
      messages_imported: sum((j) => j.progress?.messages ?? 0),
      messages_total: sum((j) => j.progress?.total ?? 0),
    };
  }

  /** Carries out every lane's head that is due; answers when to look again. */
  private async drain(): Promise<number> {
    await this.sweep().catch((err: unknown) => this.o.logger.warn({ err }, 'sweeping finished helpdesk jobs failed'));
    for (;;) {
      const heads = await this.dueHeads();
      if (heads.length === 0 || this.pump.stopping) return this.o.pollMs ?? 1000;
      const parallel = this.o.parallel ?? 8;
      for (let i = 0; i < heads.length; i += parallel) await Promise.all(heads.slice(i, i + parallel).map((job) => this.run(job)));
    }
  }

  /**
   * The job each lane carries out next. A lane is an instance's direction, run in log order one job
   * at a time; a head that failed and waits for its retry steps aside for the other conversations
   * (it holds only its own, whose later jobs wait behind it), so one conversation that cannot be
   * served never holds the others. A waiting history import holds its whole lane (it touches every
   * conversation). So only each conversation's first pending job can be a head: a lane's head is
   * the first of those, in log order, that is due, unless a waiting import or a job another node
   * holds comes before it.
   */
  private async dueHeads(): Promise<JobDoc[]> {
    const jobs = this.o.docs.collection<JobDoc>(HELPDESK_JOBS);
    const firsts = await firstPendingPerKey(jobs, 'conversation_key', conversationKey);
    const lanes = new Map<string, JobDoc[]>();
    for (const job of firsts.values()) {
      const lane = lanes.get(laneOf(job));
      if (lane) lane.push(job);
      else lanes.set(laneOf(job), [job]);
    }
    const now = this.o.clock.now().getTime();
    const heads: JobDoc[] = [];
    for (const lane of lanes.values()) {
      for (const job of lane.sort((a, b) => a.pos - b.pos)) {
        // A head another node is carrying out holds its lane there.
        if (this.claims.heldElsewhere(job)) break;
        if (job.due_ms <= now) {
          heads.push(job);
          break;
        }
        if (job.work.kind === 'import') break;
      }
    }
    return heads;
  }

  private async run(job: JobDoc): Promise<void> {
    // Claimed as read: a job another node has since carried out, or holds, is not run here.
    const claim = await this.claims.claim(HELPDESK_JOBS, job._id, { state: 'pending', attempts: job.attempts });
    if (!claim) return;
    const renewing = keepClaimed(claim, this.o.clock.now().getTime(), (err) => this.o.logger.warn({ err, jobId: job._id }, 'a helpdesk job claim could not be renewed'));
    try {
      await this.runClaimed(job, claim);
    } finally {
      clearInterval(renewing);
    }
  }

  private async runClaimed(job: JobDoc, claim: Claim): Promise<void> {
    const config = await this.o.configs.byInstance(job.instance_id);
    if (!config?.enabled) return this.finish(job, claim, 'skipped', 'the helpdesk is not configured or is disabled');
    const account: HelpdeskAccount = { url: config.url, accountId: config.account_id, token: this.o.openToken(job.instance_id, config.token_sealed) };
    const retry = job.attempts > 0;
    try {
      switch (job.work.kind) {
        case 'to_helpdesk':
          await this.o.toHelpdesk.deliver(config, account, job.instance_id, job.work.message, retry);
          break;
        case 'to_whatsapp':
          await this.o.toWhatsApp.deliver(config, job.instance_id, job.work.reply, job.work.event_id, retry);
          break;
        case 'seen':
          await this.seen(config, account, job.instance_id, job.work.message_ids);
          break;
        case 'import':
          await this.o.importHistory.run(config, account, job as JobDoc & { work: { kind: 'import' } });
          break;
      }
      await this.finish(job, claim, 'done', null);
    } catch (err) {
      await this.failed(job, claim, account, err);
    }
  }

  private async seen(config: HelpdeskDoc, account: HelpdeskAccount, instanceId: string, messageIds: string[]): Promise<void> {
    const links = this.o.docs.collection<LinkDoc>(HELPDESK_LINKS);
    const link = (await links.find({ _id: { $in: messageIds.map((id) => linkId(instanceId, id)) } }))[0];
    if (!link || !config.inbox_identifier || !link.contact_source_id) return;
    await this.o.client.markSeen(account, config.inbox_identifier, link.contact_source_id, link.conversation_id);
  }

  private async failed(job: JobDoc, claim: Claim, account: HelpdeskAccount, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    const now = this.o.clock.now().getTime();
    const final = finalRefusal(err);
    const expired = now - (job.first_failed_ms ?? now) > (this.o.horizonMs ?? 86_400_000);
    if (final || expired) {
      this.o.logger.warn({ err, jobId: job._id, instanceId: job.instance_id }, 'helpdesk bridge gave a job up');
      if (job.work.kind === 'to_whatsapp') await this.reportBack(account, job.work.reply.conversation_id, message);
      return this.finish(job, claim, 'failed', message);
    }
    const waitMs =
      err instanceof HelpdeskError && (err.status === 422 || err.status === 429)
        ? Math.max(TOO_MANY_WAIT_MS, (err.retryAfterS ?? 0) * 1000)
        : Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** job.attempts);
    await this.o.docs.collection<JobDoc>(HELPDESK_JOBS).updateOne(
      { ...claim.fence, _id: job._id },
      { $set: { attempts: job.attempts + 1, due_ms: now + waitMs, last_error: message.slice(0, 500), first_failed_ms: job.first_failed_ms ?? now, ...claim.ended } },
      { durable: true },
    );
  }

  /** HELPDESK.md: a failed send is reported back as a private note on the conversation. */
  private async reportBack(account: HelpdeskAccount, conversationId: number, reason: string): Promise<void> {
    await this.o.client
      .createMessage(account, conversationId, { content: `Not delivered to WhatsApp: ${reason}`, message_type: 'outgoing', private: true })
      .catch((err: unknown) => this.o.logger.warn({ err, conversationId }, 'could not report a failed send to the helpdesk'));
  }

  /** Fenced: a node whose claim lapsed and was taken over records nothing. */
  private async finish(job: JobDoc, claim: Claim, state: JobDoc['state'], error: string | null): Promise<void> {
    const finished_ms = this.o.clock.now().getTime();
    await this.o.docs
      .collection<JobDoc>(HELPDESK_JOBS)
      .updateOne({ ...claim.fence, _id: job._id }, { $set: { state, last_error: error, attempts: job.attempts + 1, finished_ms, ...claim.ended } }, { durable: true });
  }

  /** Finished jobs are kept a week for inspection, imports for good (they are the import's progress). */
  private async sweep(): Promise<void> {
    const now = this.o.clock.now().getTime();
    this.sweptAt ??= now - SWEEP_EVERY_MS + FIRST_SWEEP_AFTER_MS;
    if (now - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = now;
    await this.o.docs.collection<JobDoc>(HELPDESK_JOBS).deleteMany({ finished_ms: { $lt: now - KEEP_FINISHED_MS }, 'work.kind': { $ne: 'import' } });
  }
}

/**
 * A refusal that retrying cannot change: no address to send to, a number that is not on
 * WhatsApp, content the network refuses. Final at once, and reported back as a private note.
 */
function finalRefusal(err: unknown): boolean {
  if (err instanceof UndeliverableReply) return true;
  if (err instanceof DomainError) return err.type === 'invalid_input' || err.type === 'payload_too_large';
  return err instanceof HelpdeskError && err.status !== null && err.status >= 400 && err.status < 500 && ![408, 422, 425, 429].includes(err.status);
}

/** Renews a claim every third of its life while the work runs; nothing to do on one node. */
function keepClaimed(claim: Claim, nowMs: number, onError: (err: unknown) => void): NodeJS.Timeout | undefined {
  const lifeMs = claim.until - nowMs;
  if (!Number.isFinite(lifeMs)) return undefined;
  return repeat(Math.max(100, Math.floor(lifeMs / 3)), () => claim.renew(), onError);
}
