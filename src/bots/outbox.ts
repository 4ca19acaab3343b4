import type { BotSettings } from '../domain/bots/events.js';
import type { RecordedEvent } from '../domain/recorded.js';
import type { NetworkMessage } from '../domain/session/events.js';
import { idOfStream } from '../domain/streams.js';
import type { DocumentStore, WriteOp } from '../infra/docstore/port.js';
import type { Logger } from '../infra/logging/logger.js';
import { readAudit } from '../projections/history/audit-metadata.js';
import type { Projection } from '../projections/projection.js';
import { occurredAt } from '../projections/projection.js';
import { BOT_JOBS, botLane, ensureBotJobIndexes, IMAGE_PLACEHOLDER, type BotJobDoc, type BotWork, type ImageRef } from './jobs.js';

const OUTBOX_BOTS = 'bot_outbox_bots';

type OutboxBot = { _id: string; instance_id: string; bot_id: string; settings: BotSettings };

/** Status posts and newsletters are no conversation. */
const NOT_A_CONVERSATION = /(@broadcast|@newsletter)$/;
/** What a person can say to a bot; reactions, edits, deletions and votes are not messages to answer. */
const SAYS_SOMETHING = new Set<NetworkMessage['type']>(['text', 'media', 'buttons', 'list', 'location', 'contact']);

/** A contact's messages a minute that reach the bots; a flood beyond is dropped (and logged) here. */
export const PER_CONTACT_PER_MINUTE = 20;

/** The marker a bot's own sends carry as their actor: what tells them from a person's. */
export const botActorId = (botId: string) => `bot:${botId}`;

/**
 * The bots' outbox: for each stored event a bot must act on, a job, recorded in the same commit as
 * the checkpoint, so a restart neither loses nor repeats a decision (the runner carries jobs out,
 * and the conversation's events make a repeat harmless). It folds the bots' settings itself, so a
 * replay decides the same.
 */
export class BotOutbox implements Projection {
  readonly name = 'bot-outbox';
  readonly eventTypes: ReadonlySet<string> = new Set(['BotConfigured', 'BotRemoved', 'MessageReceived', 'MessageSent']);
  private bots = new Map<string, OutboxBot>();
  /** Per chat: the minute counted and the messages in it (in memory: a restart forgives a flood). */
  private readonly floods = new Map<string, { minute: number; count: number }>();

  constructor(
    private readonly onCommitted: () => void = () => undefined,
    private readonly logger?: Logger,
  ) {}

  async setup(docs: DocumentStore): Promise<void> {
    await ensureBotJobIndexes(docs);
    this.bots = new Map((await docs.collection<OutboxBot>(OUTBOX_BOTS).find({})).map((b) => [b._id, b]));
  }

  committed(): void {
    this.onCommitted();
  }

  apply(event: RecordedEvent): WriteOp[] {
    switch (event.type) {
      case 'BotConfigured': {
        const instanceId = idOfStream(event.streamId);
        const bot: OutboxBot = { _id: `${instanceId}:${event.data.bot_id}`, instance_id: instanceId, bot_id: event.data.bot_id, settings: event.data.settings };
        this.bots.set(bot._id, bot);
        return [{ collection: OUTBOX_BOTS, op: 'replaceOne', filter: { _id: bot._id }, doc: bot, upsert: true }];
      }
      case 'BotRemoved': {
        const id = `${idOfStream(event.streamId)}:${event.data.bot_id}`;
        this.bots.delete(id);
        return [{ collection: OUTBOX_BOTS, op: 'deleteOne', filter: { _id: id } }];
      }
      case 'MessageReceived': {
        const m = event.data.message;
        if (event.data.upsert !== 'notify' || m.from_me || !SAYS_SOMETHING.has(m.type)) return [];
        const instanceId = idOfStream(event.streamId);
        const bots = this.botsFor(instanceId, m.chat, (s) => s.enabled);
        if (bots.length === 0 || this.flooded(instanceId, m.chat, Date.parse(occurredAt(event)))) return [];
        const image = imageOf(m);
        const work: BotWork = { kind: 'message', message_id: m.id, text: textOf(m), push_name: m.push_name ?? '', at_ms: Date.parse(occurredAt(event)), ...(image ? { image } : {}) };
        return bots.flatMap((bot) => this.job(event, instanceId, bot.bot_id, m.chat, work));
      }
      case 'MessageSent': {
        const m = event.data.message;
        if (!SAYS_SOMETHING.has(m.type)) return [];
        const actor = readAudit(event.metadata).actor;
        // The bot's own answers carry its marker; anything else in the chat is a person's.
        const byBot = actor.kind === 'system' && typeof actor.id === 'string' && actor.id.startsWith('bot:');
        if (byBot) return [];
        const instanceId = idOfStream(event.streamId);
        const work: BotWork = { kind: 'human', message_id: m.id, at_ms: Date.parse(occurredAt(event)) };
        return this.botsFor(instanceId, m.chat, (s) => s.pause_on_human).flatMap((bot) => this.job(event, instanceId, bot.bot_id, m.chat, work));
      }
      default:
        return [];
    }
  }

  private botsFor(instanceId: string, chat: string, wanted: (s: BotSettings) => boolean): OutboxBot[] {
    if (NOT_A_CONVERSATION.test(chat)) return [];
    const group = chat.endsWith('@g.us');
    return [...this.bots.values()].filter(
      (b) => b.instance_id === instanceId && wanted(b.settings) && (b.settings.scope === 'both' || (b.settings.scope === 'groups') === group) && !b.settings.ignore_jids.includes(chat),
    );
  }

  /** A contact sending more than the bound in a minute: the rest of that minute is not answered. */
  private flooded(instanceId: string, chat: string, atMs: number): boolean {
    const key = `${instanceId}:${chat}`;
    const minute = Math.floor(atMs / 60_000);
    const seen = this.floods.get(key);
    const count = seen && seen.minute === minute ? seen.count + 1 : 1;
    this.floods.set(key, { minute, count });
    if (this.floods.size > 100_000) this.floods.clear();
    if (count === PER_CONTACT_PER_MINUTE + 1) this.logger?.warn({ instanceId, chat }, `a contact sent more than ${PER_CONTACT_PER_MINUTE} messages in a minute: the bots skip the rest of that minute`);
    return count > PER_CONTACT_PER_MINUTE;
  }

  private job(event: RecordedEvent, instanceId: string, botId: string, jid: string, work: BotWork): WriteOp[] {
    const accountId = typeof event.metadata.accountId === 'string' ? event.metadata.accountId : '';
    const fields: Omit<BotJobDoc, '_id'> = { instance_id: instanceId, account_id: accountId, bot_id: botId, jid, lane: botLane(instanceId, botId, jid), pos: Number(event.position), state: 'pending', attempts: 0, due_ms: 0, last_error: null, work };
    // Keyed by the event and the bot, written only if absent: a replay never brings a done job back.
    return [{ collection: BOT_JOBS, op: 'updateOne', filter: { _id: `${event.id}:${botId}` }, update: { $setOnInsert: fields }, upsert: true }];
  }
}

function textOf(m: NetworkMessage): string {
  const text = m.text ?? m.media?.caption;
  if (text !== undefined && text !== '') return text.slice(0, 4096);
  if (m.type === 'media') return m.media?.kind === 'image' ? IMAGE_PLACEHOLDER : `[${m.media?.kind ?? 'media'}]`;
  if (m.type === 'location') return `[location ${m.location?.latitude ?? ''},${m.location?.longitude ?? ''}]`;
  return `[${m.type}]`;
}

/** An image's reference, kept with the job: a bot with vision fetches it when it answers. */
function imageOf(m: NetworkMessage): ImageRef | null {
  const media = m.media;
  if (m.type !== 'media' || media?.kind !== 'image') return null;
  return {
    url: media.url,
    media_key: media.media_key,
    file_sha256: media.file_sha256,
    file_length: media.file_length,
    mimetype: media.mimetype,
    ...(media.direct_path === undefined ? {} : { direct_path: media.direct_path }),
    ...(media.file_enc_sha256 === undefined ? {} : { file_enc_sha256: media.file_enc_sha256 }),
  };
}
