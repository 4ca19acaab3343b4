import type { Filter } from '../../infra/docstore/port.js';
import type { Address } from './addresses.js';
import { DURABLE, type MessageDoc, type SandboxState } from './state.js';

const BY_SEQ = { sort: { seq: 1 as const } };

/**
 * Every message of the sandbox, whichever side sent it. A phone's conversations are the messages
 * it sent plus those it received; they exist whether or not an instance is linked to it.
 */
export class Conversations {
  constructor(private readonly state: SandboxState) {}

  /**
   * Stores a new message and resolves once it is committed (readable), not yet on disk: the
   * caller waits for the disk (`state.docs.flush()`) while it hands the message on.
   */
  append(message: MessageDoc): Promise<void> {
    return this.state.messages.insertOne(message);
  }

  /** What the phone received, oldest first. */
  inbox(phone: string): Promise<MessageDoc[]> {
    return this.state.messages.find({ recipients: phone }, BY_SEQ);
  }

  /** Everything the phone sent or received, oldest first. */
  involving(phone: string): Promise<MessageDoc[]> {
    return this.state.messages.find({ $or: [{ from: phone }, { recipients: phone }] }, BY_SEQ);
  }

  /** The phone's received messages among `ids`, oldest first; others' messages are left out. */
  received(phone: string, ids: string[]): Promise<MessageDoc[]> {
    return this.state.messages.find({ _id: { $in: [...new Set(ids)] }, recipients: phone }, BY_SEQ);
  }

  /** A message the phone sent or received. */
  known(phone: string, id: string): Promise<MessageDoc | null> {
    return this.state.messages.findOne({ _id: id, $or: [{ from: phone }, { recipients: phone }] });
  }

  /** What the phone received in one chat, oldest first. */
  receivedIn(phone: string, chat: Address): Promise<MessageDoc[]> {
    const filter: Filter =
      chat.kind === 'group' ? { recipients: phone, group: chat.jid } : { recipients: phone, from: chat.phone, group: { $exists: false } };
    return this.state.messages.find(filter, BY_SEQ);
  }

  async haveTalked(a: string, b: string): Promise<boolean> {
    const direct = { group: { $exists: false } };
    const count = await this.state.messages.count({ $or: [{ ...direct, from: a, recipients: b }, { ...direct, from: b, recipients: a }] });
    return count > 0;
  }

  /** Records receipts; reading implies delivery. */
  async mark(phone: string, ids: string[], state: 'Delivered' | 'Read'): Promise<void> {
    if (ids.length === 0) return;
    const add = state === 'Read' ? { delivered_to: phone, read_by: phone } : { delivered_to: phone };
    await this.state.messages.updateMany({ _id: { $in: ids } }, { $addToSet: add }, DURABLE);
  }
}
