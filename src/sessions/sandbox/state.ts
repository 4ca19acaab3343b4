import type { SessionEventData } from '../../domain/session/events.js';
import type { Collection, Document, DocumentStore, WriteOptions } from '../../infra/docstore/port.js';
import type { BusinessInput, SANDBOX_MESSAGE_TYPES } from './schemas.js';

/**
 * The sandbox world, kept in the document store so that it survives a restart. Every write is
 * durable: unlike read models, nothing can rebuild these documents.
 */
export const DURABLE: WriteOptions = { durable: true };

export const COLLECTIONS = {
  phones: 'sandbox_phones',
  messages: 'sandbox_messages',
  groups: 'sandbox_groups',
  links: 'sandbox_links',
  media: 'sandbox_media',
  mediaChunks: 'sandbox_media_chunks',
  calls: 'sandbox_calls',
  statuses: 'sandbox_statuses',
  pictures: 'sandbox_pictures',
  chatPresence: 'sandbox_chat_presence',
} as const;

/** The last typing state a chat showed a phone (instances' chat presence, as the phone sees it). */
export interface ChatPresenceDoc extends Document {
  /** `<phone>:<chat>`. */
  _id: string;
  phone: string;
  chat: string;
  from: string;
  state: 'composing' | 'recording' | 'paused';
  at: string;
}

export interface PhoneDoc extends Document {
  /** The phone digits: unique across the sandbox, because jids are global. */
  _id: string;
  account_id: string;
  jid: string;
  push_name: string;
  about?: string;
  business?: BusinessInput;
  contacts: string[];
  created_at: string;
  /** The phone's LID (`<15 digits>@lid`); phones made before LIDs existed here have none. */
  lid?: string;
  /** `lid`: instances see it by its LID, with the phone jid as alternate (privacy addressing). */
  addressing?: 'pn' | 'lid';
  /** What the account set on the network (account-admin.ts): picture, privacy, blocks, labels. */
  picture_id?: string;
  privacy?: Record<string, string>;
  /** Phones this account blocked: they can still send, nothing reaches this account. */
  blocked?: string[];
  /** Business accounts: their labels, and which chats carry which. */
  labels?: { id: string; name: string; color: number }[];
  chat_labels?: { chat: string; label_id: string }[];
  /** The network takes instances' sends to this phone, then refuses them (error 463). */
  restricted?: boolean;
  /** This many more of instances' sends to this phone time out (the network never answers them). */
  send_timeouts?: number;
}

export type StoredMedia = SessionEventData<'MessageReceived'>['message']['media'] & object;

export interface MessageDoc extends Document {
  /** The message id every party sees. */
  _id: string;
  account_id: string;
  /** Global send order: timestamps tie within a second. */
  seq: number;
  from: string;
  /** The sender's push name when sent, as the network stamps it. */
  push_name: string;
  /** Set for group messages. */
  group?: string;
  /** Phones the message was delivered to (the other party, or the other group members). */
  recipients: string[];
  type: (typeof SANDBOX_MESSAGE_TYPES)[number];
  text?: string;
  location?: { latitude: number; longitude: number; name?: string };
  contacts?: { display_name: string; vcard: string }[];
  poll?: { name: string; options: string[]; selectable_count: number; message_secret?: string };
  /** A vote on a poll (type poll_vote): encrypted with the poll's secret, as the network carries it. */
  poll_vote?: { poll_message_id: string; creator_jid: string; voter_jid: string; enc_payload: string; enc_iv: string };
  list?: NonNullable<SessionEventData<'MessageSent'>['message']['list']>;
  mentions?: string[];
  view_once?: boolean;
  forwarded?: boolean;
  /** A text's link preview, as the sender built it. */
  link_preview?: { url: string; title: string; description?: string };
  /** An edit (new `text`) or a deletion for everyone of one of the sender's messages. */
  edit?: { message_id: string };
  revoke?: { message_id: string };
  reply_to?: string;
  /** Recipients see only the sender's LID: the phone↔LID pair is not shared with this message. */
  lid_only?: boolean;
  media?: StoredMedia;
  /** `author`: the phone that wrote the reacted message (each viewer's key is made from it). */
  reaction?: { message_id: string; text: string; author?: string };
  buttons?: { footer?: string; items: { id: string; text: string }[] };
  timestamp_s: number;
  sent_at: string;
  delivered_to: string[];
  read_by: string[];
  /**
   * Recipients whose account had no live connection when the message was sent: the network keeps
   * it for them and hands it over when their account connects again, as WhatsApp does.
   */
  offline_for?: string[];
}

export interface GroupMember {
  phone: string;
  /** Set for a LID-addressed phone: groups show it by this LID, its phone jid as the alternate. */
  lid?: string;
  is_admin: boolean;
  is_super_admin: boolean;
}

export interface GroupDoc extends Document {
  _id: string;
  account_id: string;
  name: string;
  owner: string;
  participants: GroupMember[];
  topic?: string;
  announce: boolean;
  locked: boolean;
  ephemeral_seconds: number;
  created_s: number;
  /** The invite link's code (made on first ask; a revoke replaces it). */
  invite_code?: string;
  picture_id?: string;
}

/** A status post as the network keeps it: who posted it and who may see it. */
export interface StatusDoc extends Document {
  _id: string;
  account_id: string;
  from: string;
  recipients: string[];
  text?: string;
  media?: { kind: string; mimetype: string; file_length: number; caption?: string };
  background_color?: string;
  font?: number;
  posted_at: string;
}

/** A profile or group picture (JPEG, base64), served publicly under its random id. */
export interface PictureDoc extends Document {
  _id: string;
  account_id: string;
  data: string;
  created_at: string;
}

/** Which instance a phone's linked device is. One each way. */
export interface LinkDoc extends Document {
  /** The instance id. */
  _id: string;
  phone: string;
  account_id: string;
  linked_at: string;
}

export interface MediaDoc extends Document {
  _id: string;
  account_id: string;
  length: number;
  chunks: number;
  created_at: string;
  /** The host no longer serves it (as the network's media expires); the sender's phone still has it. */
  expired?: boolean;
}

export interface MediaChunkDoc extends Document {
  _id: string;
  blob: string;
  index: number;
  /** The bytes (both adapters give a Buffer back); base64 in chunks stored by earlier versions. */
  data: Buffer | string;
}

/** A voice call one phone placed to another (a sandbox extension: SANDBOX.md has no calls). */
export interface CallDoc extends Document {
  /** The call id the callee's instance sees in its call offer. */
  _id: string;
  account_id: string;
  from: string;
  to: string;
  /** ringing until the callee's instance rejects it; nothing in the sandbox answers calls. */
  status: 'ringing' | 'rejected';
  offered_at: string;
  rejected_at?: string;
}

export class SandboxState {
  readonly phones: Collection<PhoneDoc>;
  readonly messages: Collection<MessageDoc>;
  readonly groups: Collection<GroupDoc>;
  readonly links: Collection<LinkDoc>;
  readonly media: Collection<MediaDoc>;
  readonly mediaChunks: Collection<MediaChunkDoc>;
  readonly calls: Collection<CallDoc>;
  readonly statuses: Collection<StatusDoc>;
  readonly pictures: Collection<PictureDoc>;
  readonly chatPresence: Collection<ChatPresenceDoc>;
  private setup: Promise<void> | undefined;
  private seq: Promise<number> | undefined;

  constructor(readonly docs: DocumentStore) {
    this.phones = docs.collection(COLLECTIONS.phones);
    this.messages = docs.collection(COLLECTIONS.messages);
    this.groups = docs.collection(COLLECTIONS.groups);
    this.links = docs.collection(COLLECTIONS.links);
    this.media = docs.collection(COLLECTIONS.media);
    this.mediaChunks = docs.collection(COLLECTIONS.mediaChunks);
    this.calls = docs.collection(COLLECTIONS.calls);
    this.statuses = docs.collection(COLLECTIONS.statuses);
    this.pictures = docs.collection(COLLECTIONS.pictures);
    this.chatPresence = docs.collection(COLLECTIONS.chatPresence);
  }

  /** Creates the indexes once per process (createIndex is idempotent). */
  ready(): Promise<void> {
    this.setup ??= (async () => {
      await this.phones.createIndex({ name: 'account', keys: { account_id: 1 } });
      await this.messages.createIndex({ name: 'seq', keys: { seq: 1 } });
      await this.messages.createIndex({ name: 'from', keys: { from: 1, seq: 1 } });
      await this.messages.createIndex({ name: 'recipients', keys: { recipients: 1, seq: 1 } });
      await this.messages.createIndex({ name: 'offline', keys: { offline_for: 1, seq: 1 } });
      await this.groups.createIndex({ name: 'members', keys: { 'participants.phone': 1 } });
      await this.links.createIndex({ name: 'phone', keys: { phone: 1 }, unique: true });
      await this.mediaChunks.createIndex({ name: 'blob', keys: { blob: 1, index: 1 } });
      await this.calls.createIndex({ name: 'from', keys: { from: 1, offered_at: 1 } });
      await this.calls.createIndex({ name: 'to', keys: { to: 1, offered_at: 1 } });
      await this.statuses.createIndex({ name: 'recipients', keys: { recipients: 1, posted_at: -1 } });
      await this.groups.createIndex({ name: 'invite', keys: { invite_code: 1 } });
      await this.phones.createIndex({ name: 'lid', keys: { lid: 1 } });
      await this.chatPresence.createIndex({ name: 'phone', keys: { phone: 1, chat: 1 } });
    })();
    return this.setup;
  }

  /** The next message sequence number; this process is the only writer of the sandbox. */
  nextSeq(): Promise<number> {
    const last = this.seq ?? this.messages.find({}, { sort: { seq: -1 }, limit: 1 }).then(([doc]) => doc?.seq ?? 0);
    // Chained synchronously, so concurrent senders never draw the same number.
    const next = last.then((n) => n + 1);
    this.seq = next;
    // A failed read is retried by the next caller instead of poisoning every later send.
    next.catch(() => {
      if (this.seq === next) this.seq = undefined;
    });
    return next;
  }
}
