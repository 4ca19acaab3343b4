import { invalidInput } from '../domain/errors.js';
import type { SessionEventData } from '../domain/session/events.js';
import type { Clock } from '../infra/clock.js';
import type { ChatQueries } from '../projections/chats/chat-queries.js';
import type { ChatDoc } from '../projections/chats/chats-projection.js';
import type { InstanceDoc } from '../projections/instances/instances-projection.js';
import type { ChatAction, MessageRef } from '../sessions/port.js';
import type { SessionManager } from '../sessions/session-manager.js';
import type { SessionRecorder } from '../sessions/session-recorder.js';
import type { CommandContext } from '../domain/audit.js';
import { toJid } from '../domain/session/phone-numbers.js';
import { onNetwork } from '../sessions/network-call.js';
import type { ReadYourWrites } from './read-your-writes.js';

type Changes = SessionEventData<'ChatUpdated'>['changes'];

/** What the chat routes ask for, in API terms (times in unix seconds). */
export type ChatActionRequest =
  | { type: 'archive'; archived: boolean }
  | { type: 'pin'; pinned: boolean }
  /** Unix seconds; 0 unmutes, -1 mutes forever. */
  | { type: 'mute'; until: number }
  | { type: 'mark_unread'; unread: boolean }
  /** Without a message id the whole chat goes; with one, that message (for this account only). */
  | { type: 'delete'; message_id?: string; from_me?: boolean }
  | { type: 'clear' };

/**
 * Archive, pin, mute, mark unread, delete and clear. Each goes to the network through the live
 * connection, then is recorded as ChatUpdated so the chat list shows it; the answer waits for the
 * chat list, so a client that reads it next sees its own change.
 */
export class ChatActionCommands {
  constructor(
    private readonly manager: SessionManager,
    private readonly recorder: SessionRecorder,
    private readonly chats: ChatQueries,
    private readonly rw: ReadYourWrites,
    private readonly clock: Clock,
  ) {}

  async apply(instance: InstanceDoc, phone: string, request: ChatActionRequest, context: CommandContext): Promise<void> {
    const jid = toJid(phone);
    const chat = await this.chats.byJid(instance._id, jid);
    const { action, changes } = this.translate(request, chat);
    await onNetwork(this.manager, instance._id, (c) => c.modifyChat(jid, action));
    if (!changes) return;
    const position = await this.recorder.record(instance._id, instance.account_id, [{ type: 'ChatUpdated', data: { jid, changes } }], context);
    await this.rw.settle(position, ['chats']);
  }

  /** The network's action and what it changes in the chat list (nothing for one message). */
  private translate(request: ChatActionRequest, chat: ChatDoc | null): { action: ChatAction; changes?: Changes } {
    const last = lastMessage(chat);
    switch (request.type) {
      case 'archive':
        return { action: { type: 'archive', archived: request.archived, last }, changes: { archived: request.archived } };
      case 'pin':
        return { action: { type: 'pin', pinned: request.pinned }, changes: { pinned: request.pinned } };
      case 'mute': {
        const nowS = Math.floor(this.clock.now().getTime() / 1000);
        if (request.until > 0 && request.until <= nowS) throw invalidInput('until', 'must be in the future (unix seconds), 0 to unmute or -1 for always');
        const untilMs = request.until > 0 ? request.until * 1000 : request.until;
        return { action: { type: 'mute', until_ms: untilMs }, changes: { mute_end_ms: untilMs } };
      }
      case 'mark_unread':
        return {
          action: { type: 'mark_unread', unread: request.unread, last },
          // Marking read clears the count as well as the mark, as the phone does.
          changes: request.unread ? { marked_as_unread: true } : { marked_as_unread: false, unread_count: 0 },
        };
      case 'delete':
        if (request.message_id === undefined) return { action: { type: 'delete_chat', last }, changes: { deleted: true } };
        return { action: { type: 'delete_message', message: this.messageRef(request.message_id, request.from_me, last) } };
      case 'clear':
        return { action: { type: 'clear', last }, changes: { cleared: true } };
    }
  }

  /** We keep no messages: the chat's newest is known in full, any other by what the caller says. */
  private messageRef(id: string, fromMe: boolean | undefined, last: MessageRef | undefined): MessageRef {
    if (last && last.id === id) return fromMe === undefined ? last : { ...last, from_me: fromMe };
    return { id, from_me: fromMe ?? false, timestamp_s: Math.floor(this.clock.now().getTime() / 1000) };
  }
}

function lastMessage(chat: ChatDoc | null): MessageRef | undefined {
  if (!chat?.last_message_id) return undefined;
  const ref: MessageRef = { id: chat.last_message_id, from_me: chat.last_message_from_me, timestamp_s: Math.floor(chat.last_message_timestamp_ms / 1000) };
  if (chat.last_message_sender && !chat.last_message_from_me) ref.participant = chat.last_message_sender;
  return ref;
}
