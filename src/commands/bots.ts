import type { CommandContext } from '../domain/audit.js';
import { botsDecider } from '../domain/bots/bots-decider.js';
import { conversationDecider, type ConversationCommand } from '../domain/bots/conversation-decider.js';
import { botConversationStream, botsStream, type BotSettings } from '../domain/bots/events.js';
import { notFound } from '../domain/errors.js';
import { maskToken } from '../domain/helpdesk/helpdesk-decider.js';
import type { SecretBox } from '../infra/crypto/secret-box.js';
import type { Clock } from '../infra/clock.js';
import type { CommandHandler } from './command-handler.js';
import type { ReadYourWrites } from './read-your-writes.js';

const CONFIG_MODELS = ['bots'];
const SESSION_MODELS = ['bot-sessions'];

/** Saves and removes an instance's bots, and lets an operator pause or resume one conversation. */
export class BotCommands {
  constructor(
    private readonly handler: CommandHandler,
    private readonly rw: ReadYourWrites,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  static keyContext = (instanceId: string, botId: string) => `bot-api-key:${instanceId}:${botId}`;

  openApiKey(instanceId: string, botId: string, sealed: string): string {
    return this.box.open(sealed, BotCommands.keyContext(instanceId, botId)).toString('utf8');
  }

  /** `api_key`: omitted keeps the current one, '' removes it. */
  async save(instanceId: string, botId: string, settings: BotSettings, apiKey: string | undefined, context: CommandContext): Promise<void> {
    const api_key = apiKey === undefined ? undefined : apiKey === '' ? null : { sealed: this.box.seal(apiKey, BotCommands.keyContext(instanceId, botId)), masked: maskToken(apiKey) };
    const { position } = await this.handler.handle(
      botsStream(instanceId),
      botsDecider,
      { type: 'SaveBot', data: { bot_id: botId, settings, ...(api_key === undefined ? {} : { api_key }) } },
      { ...context, instanceId },
    );
    if (position !== null) await this.rw.settle(position, CONFIG_MODELS);
  }

  async remove(instanceId: string, botId: string, context: CommandContext): Promise<void> {
    const { position } = await this.handler.handle(botsStream(instanceId), botsDecider, { type: 'RemoveBot', data: { bot_id: botId } }, { ...context, instanceId });
    if (position !== null) await this.rw.settle(position, CONFIG_MODELS);
  }

  async pause(instanceId: string, botId: string, jid: string, expireMinutes: number, context: CommandContext): Promise<void> {
    await this.conversation(instanceId, botId, jid, { type: 'Pause', data: { bot_id: botId, jid, by: 'operator', message_id: null, ...this.now(expireMinutes) } }, context);
  }

  async resume(instanceId: string, botId: string, jid: string, expireMinutes: number, context: CommandContext): Promise<void> {
    await this.conversation(instanceId, botId, jid, { type: 'Resume', data: { bot_id: botId, jid, ...this.now(expireMinutes) } }, context);
  }

  private now(expireMinutes: number) {
    return { at_ms: this.clock.now().getTime(), expire_ms: expireMinutes * 60_000 };
  }

  private async conversation(instanceId: string, botId: string, jid: string, command: ConversationCommand, context: CommandContext): Promise<void> {
    const stream = botConversationStream(instanceId, botId, jid);
    const { state } = await this.handler.load(stream, conversationDecider);
    if (state.status === 'none') throw notFound(`no conversation of bot ${botId} with ${jid}`);
    const { position } = await this.handler.handle(stream, conversationDecider, command, { ...context, instanceId });
    if (position !== null) await this.rw.settle(position, SESSION_MODELS);
  }
}
