import type { CommandHandler } from '../commands/command-handler.js';
import type { SendPacer } from '../commands/send-pacing/pacer.js';
import type { CommandContext } from '../domain/audit.js';
import { conversationDecider, idle, nextStep, type ConversationCommand, type ConversationState, type Incoming } from '../domain/bots/conversation-decider.js';
import { botConversationStream, type BotAnswer } from '../domain/bots/events.js';
import { DomainError } from '../domain/errors.js';
import { typedAs } from '../domain/recorded.js';
import type { OutgoingContent } from '../domain/session/outgoing.js';
import type { Clock } from '../infra/clock.js';
import { singleNodeClaims, type Claim, type DocClaims } from '../infra/doc-claims.js';
import type { DocumentStore } from '../infra/docstore/port.js';
import type { EventStore } from '../infra/eventstore/port.js';
import type { IdGenerator } from '../infra/ids.js';
import type { Logger } from '../infra/logging/logger.js';
import { Pump } from '../infra/pump.js';
import type { BotQueries } from '../projections/bots/bot-queries.js';
import type { BotDoc } from '../projections/bots/bots-projection.js';
import type { SessionLog } from '../sessions/session-log.js';
import { MAX_ANSWERS, type BotClient } from './bot-client.js';
import { BotServerError } from './bot-http.js';
import { BOT_JOBS, botLane, type BotJobDoc } from './jobs.js';
import { botActorId } from './outbox.js';
import { triggers } from './triggers.js';
import type { VisionImageFetcher } from './vision-image.js';
import { firstPendingPerKey } from '../infra/docstore/first-pending.js';

export interface BotRunnerOptions {
  docs: DocumentStore;
  events: EventStore;
  handler: CommandHandler;
  queries: BotQueries;
  /** Where the answers are queued: the session's log, as every paced send. */
  sessions: SessionLog;
  pacer: SendPacer;
  clients: { typebot: BotClient; openai: BotClient };
  openApiKey: (instanceId: string, botId: string, sealed: string) => string;
  /** An answer as it goes out (media uploaded first; a link when that fails). */
  content: (instanceId: string, answer: BotAnswer, delayMs: number) => Promise<OutgoingContent>;
  /** A contact's image for a model with vision; `null` when it cannot be used (the model reads "[image]"). */
  image?: VisionImageFetcher;
  ids: IdGenerator;
  clock: Clock;
  logger: Logger;
  pollMs?: number;
  /** A failing bot server is retried this many times (with back-off) before the message is given up. */
  maxAttempts?: number;
  retryBaseMs?: number;
  claims?: DocClaims;
}

const RETRY_MAX_MS = 5 * 60_000;
const SWEEP_EVERY_MS = 3_600_000;
const KEEP_FINISHED_MS = 7 * 86_400_000;
const EXPIRY_EVERY_MS = 15_000;

/**
 * Carries out the bots' jobs: one lane per conversation (bot and chat), one job at a time in log
 * order, lanes side by side. A contact's message is answered once: the conversation's events say
 * which messages were answered and with what, so a job repeated after a crash queues the same
 * answers under the same message ids (the send queue keeps one per id) and never asks the bot
 * again. A bot server that fails is retried with exponential back-off, each failure recorded in
 * the conversation; past the attempts the message is given up, recorded too. Idle conversations
 * are ended here as well.
 */
export class BotRunner {
  private readonly pump: Pump;
  private readonly claims: DocClaims;
  private sweptAt = 0;
  private expiredAt = 0;

  constructor(private readonly o: BotRunnerOptions) {
    this.claims = o.claims ?? singleNodeClaims;
    this.pump = new Pump(
      () => this.drain(),
      (err) => o.logger.error({ err }, 'the bot runner failed; retrying'),
    );
  }

  start(): void {
    this.pump.poke();
  }

  poke(): void {
    this.pump.poke();
  }

  stop(): Promise<void> {
    return this.pump.stop();
  }

  /** Jobs waiting (metrics). */
  pending(): Promise<number> {
    return this.o.docs.collection<BotJobDoc>(BOT_JOBS).count({ state: 'pending' });
  }

  private async drain(): Promise<number> {
    await this.housekeeping().catch((err: unknown) => this.o.logger.warn({ err }, 'bot housekeeping failed'));
    for (;;) {
      const { due, soonest } = await this.dueHeads();
      if (due.length === 0 || this.pump.stopping) return Math.min(soonest, this.o.pollMs ?? 1000);
      for (let i = 0; i < due.length; i += 8) await Promise.all(due.slice(i, i + 8).map((job) => this.run(job)));
    }
  }

  private async dueHeads(): Promise<{ due: BotJobDoc[]; soonest: number }> {
    const jobs = this.o.docs.collection<BotJobDoc>(BOT_JOBS);
    const heads = await firstPendingPerKey(jobs, 'lane', (job) => botLane(job.instance_id, job.bot_id, job.jid));
    const now = this.o.clock.now().getTime();
    let soonest = Infinity;
    const due = [...heads.values()].filter((job) => {
      if (job.due_ms > now) soonest = Math.min(soonest, job.due_ms - now);
      return job.due_ms <= now && !this.claims.heldElsewhere(job);
    });
    return { due, soonest };
  }

  private async run(job: BotJobDoc): Promise<void> {
    const claim = await this.claims.claim(BOT_JOBS, job._id, { state: 'pending', attempts: job.attempts });
    if (!claim) return;
    try {
      const outcome = await this.carryOut(job);
      await this.finish(job, claim, outcome.state, outcome.note);
    } catch (err) {
      await this.failed(job, claim, err);
    }
  }

  private async carryOut(job: BotJobDoc): Promise<{ state: BotJobDoc['state']; note: string | null }> {
    const bot = await this.o.queries.byId(job.instance_id, job.bot_id);
    if (!bot) return { state: 'skipped', note: 'the bot was removed' };
    const expireMs = bot.settings.expire_minutes * 60_000;
    const stream = botConversationStream(job.instance_id, job.bot_id, job.jid);
    const key = { bot_id: job.bot_id, jid: job.jid };
    if (job.work.kind === 'human') {
      await this.decide(job, { type: 'Pause', data: { ...key, by: 'human', message_id: job.work.message_id, at_ms: job.work.at_ms, expire_ms: expireMs } });
      return { state: 'done', note: null };
    }
    if (!bot.settings.enabled) return { state: 'skipped', note: 'the bot is disabled' };
    const { state } = await this.o.handler.load(stream, conversationDecider);
    const incoming: Incoming = {
      message_id: job.work.message_id,
      text: job.work.text,
      at_ms: job.work.at_ms,
      expire_ms: expireMs,
      triggered: triggers(bot.settings.trigger, job.work.text),
      stop_keyword: bot.settings.stop_keyword,
    };
    const step = nextStep(state, incoming);
    switch (step.kind) {
      case 'ignore':
        return { state: 'skipped', note: step.reason };
      case 'stop':
        await this.decide(job, { type: 'Stop', data: { ...key, incoming } });
        return { state: 'done', note: null };
      case 'answered':
        // Recorded before a crash: the same answers are queued again, under the same ids.
        await this.queue(job, bot, step.answers, true);
        return { state: 'done', note: null };
      case 'start':
      case 'continue': {
        const answers = await this.ask(job, bot, state, step.kind === 'start', incoming);
        try {
          await this.decide(job, { type: 'Answer', data: { ...key, incoming, answers: answers.answers, bot_session: answers.bot_session, choices: answers.choices } });
        } catch (err) {
          // A person took over (or the stop keyword came) while the bot was thinking: its answer is dropped.
          if (err instanceof DomainError && err.type === 'conflict') return { state: 'skipped', note: err.message };
          throw err;
        }
        await this.queue(job, bot, answers.answers, job.attempts > 0);
        return { state: 'done', note: null };
      }
    }
  }

  /** The bot's answer to the message, each part given the id it goes out under. */
  private async ask(job: BotJobDoc, bot: BotDoc, state: ConversationState, fresh: boolean, incoming: Incoming) {
    if (job.work.kind !== 'message') throw new Error('not a message');
    const client = bot.settings.kind === 'typebot' ? this.o.clients.typebot : this.o.clients.openai;
    const phone = /^(\d+)@s\.whatsapp\.net$/.exec(job.jid)?.[1] ?? '';
    // Only a model with vision is sent the picture; the others read the placeholder.
    const ref = bot.settings.kind === 'openai' && bot.settings.vision === true ? job.work.image : undefined;
    const image = ref && this.o.image ? await this.o.image(job.instance_id, ref) : null;
    const turn = await client.turn({
      ...(image ? { image } : {}),
      settings: bot.settings,
      apiKey: bot.api_key_sealed ? this.o.openApiKey(job.instance_id, job.bot_id, bot.api_key_sealed) : null,
      fresh: fresh || idle(state, incoming.at_ms, incoming.expire_ms),
      bot_session: fresh ? null : state.bot_session,
      choices: fresh ? [] : state.choices,
      text: incoming.text,
      history: fresh ? [] : state.history,
      contact: { jid: job.jid, name: job.work.push_name, phone },
    });
    if (turn.answers.length > MAX_ANSWERS) {
      this.o.logger.warn({ instanceId: job.instance_id, botId: job.bot_id, answers: turn.answers.length }, `a bot answered more than ${MAX_ANSWERS} messages at once (a flow that loops?): the rest is dropped`);
    }
    const answers: BotAnswer[] = turn.answers.slice(0, MAX_ANSWERS).map((a) => ({ ...a, message_id: `3EB0${this.o.ids.alphanumeric(16)}` }));
    return { answers, bot_session: turn.bot_session, choices: turn.choices };
  }

  /**
   * The answers, as paced sends from the session's log (the send queue sends them, each once,
   * typing first). After a crash some may be queued already: those are not queued twice.
   */
  private async queue(job: BotJobDoc, bot: BotDoc, answers: BotAnswer[], maybeQueued: boolean): Promise<void> {
    const already = maybeQueued ? await this.queuedAlready(job.instance_id, answers) : new Set<string>();
    const left = answers.filter((a) => !already.has(a.message_id));
    if (left.length === 0) return;
    const events = [];
    for (const answer of left) {
      const content = await this.o.content(job.instance_id, answer, bot.settings.delay_ms);
      events.push({ type: 'SendQueued' as const, data: { message_id: answer.message_id, to: job.jid, content } });
    }
    this.o.pacer.queued(job.instance_id, events.length);
    try {
      await this.o.sessions.record(job.instance_id, job.account_id, events, this.context(job));
    } catch (err) {
      for (let i = 0; i < events.length; i++) this.o.pacer.dequeued(job.instance_id, false);
      throw err;
    }
  }

  private async queuedAlready(instanceId: string, answers: BotAnswer[]): Promise<Set<string>> {
    const ids = new Set(answers.map((a) => a.message_id));
    const recent = await this.o.events.readStream(`session-${instanceId}`, { direction: 'backwards', maxCount: 1000 });
    const found = new Set<string>();
    for (const e of recent) {
      const id = typedAs(e, 'SendQueued')?.data.message_id;
      if (id !== undefined && ids.has(id)) found.add(id);
    }
    return found;
  }

  /** The bot's doings are the bot's (its actor marks its sends), caused by the job's event. */
  private context(job: BotJobDoc): CommandContext {
    const eventId = job._id.slice(0, job._id.lastIndexOf(':'));
    return { actor: { kind: 'system', id: botActorId(job.bot_id) }, correlationId: eventId, causationId: eventId, instanceId: job.instance_id, ...(job.account_id ? { accountId: job.account_id } : {}) };
  }

  private async decide(job: BotJobDoc, command: ConversationCommand): Promise<void> {
    await this.o.handler.handle(botConversationStream(job.instance_id, job.bot_id, job.jid), conversationDecider, command, this.context(job));
  }

  private async failed(job: BotJobDoc, claim: Claim, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    const now = this.o.clock.now().getTime();
    const attempt = job.attempts + 1;
    const gaveUp = (err instanceof BotServerError && err.permanent) || attempt >= (this.o.maxAttempts ?? 8);
    if (err instanceof BotServerError && job.work.kind === 'message') {
      await this.decide(job, { type: 'ReportFailure', data: { bot_id: job.bot_id, jid: job.jid, message_id: job.work.message_id, attempt, error: message, gave_up: gaveUp, at_ms: now } }).catch(
        (e: unknown) => this.o.logger.warn({ err: e }, 'a bot server failure could not be recorded'),
      );
    }
    if (gaveUp) {
      this.o.logger.warn({ err, jobId: job._id, instanceId: job.instance_id, botId: job.bot_id }, 'a bot job was given up');
      return this.finish(job, claim, 'failed', message);
    }
    const waitMs = Math.min(RETRY_MAX_MS, (this.o.retryBaseMs ?? 1000) * 2 ** job.attempts);
    this.o.logger.info({ jobId: job._id, attempt, waitMs, error: message }, 'a bot job failed; retrying later');
    await this.o.docs
      .collection<BotJobDoc>(BOT_JOBS)
      .updateOne({ ...claim.fence, _id: job._id }, { $set: { attempts: attempt, due_ms: now + waitMs, last_error: message.slice(0, 500), ...claim.ended } }, { durable: true });
  }

  private async finish(job: BotJobDoc, claim: Claim, state: BotJobDoc['state'], note: string | null): Promise<void> {
    await this.o.docs
      .collection<BotJobDoc>(BOT_JOBS)
      .updateOne({ ...claim.fence, _id: job._id }, { $set: { state, last_error: note, attempts: job.attempts + 1, finished_ms: this.o.clock.now().getTime(), ...claim.ended } }, { durable: true });
  }

  /** Idle conversations end; finished jobs are swept after a week. */
  private async housekeeping(): Promise<void> {
    const now = this.o.clock.now().getTime();
    if (now - this.expiredAt >= EXPIRY_EVERY_MS) {
      this.expiredAt = now;
      for (const s of await this.o.queries.live(500)) {
        const bot = await this.o.queries.byId(s.instance_id, s.bot_id);
        if (!bot) continue;
        const expireMs = bot.settings.expire_minutes * 60_000;
        if (now - Date.parse(s.last_activity_at) < expireMs) continue;
        const job = { instance_id: s.instance_id, bot_id: s.bot_id, jid: s.jid, _id: `expiry:${s._id}`, account_id: '' } as BotJobDoc;
        await this.decide(job, { type: 'Expire', data: { bot_id: s.bot_id, jid: s.jid, at_ms: now, expire_ms: expireMs } });
      }
    }
    if (now - this.sweptAt >= SWEEP_EVERY_MS) {
      this.sweptAt = now;
      await this.o.docs.collection<BotJobDoc>(BOT_JOBS).deleteMany({ finished_ms: { $lt: now - KEEP_FINISHED_MS } });
    }
  }
}
