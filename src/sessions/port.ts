import type { DisconnectReason, NetworkMessage, SessionEvent } from '../domain/session/events.js';
import type { AccountOperations } from './account-port.js';
import type { MessageChange, OutgoingContent } from '../domain/session/outgoing.js';

/**
 * The messaging-network port. Two drivers implement it: `baileys` (the real network) and
 * `sandbox` (the simulated one). Each driver translates its own happenings into SessionEvents;
 * the session manager appends them to `session-<id>` and owns reconnects.
 */
export interface MessagingNetwork {
  readonly kind: 'baileys' | 'sandbox';
  /** Opens a connection for one instance. Resolves once the connection attempt has started. */
  connect(options: ConnectOptions): Promise<NetworkConnection>;
}

export interface ConnectOptions {
  instanceId: string;
  /** The account that owns the instance (the sandbox checks phone ownership with it). */
  accountId: string;
  /** Durable credentials of the session (Baileys creds and signal keys; the sandbox's link). */
  auth: AuthStateStore;
  handlers: ConnectionHandlers;
  /** A message of this session, sent or received, from the stored events (retry requests, quotes, read receipts), of `chat` when named. */
  storedMessage?: (messageId: string, chat?: string) => Promise<NetworkMessage | undefined>;
}

export interface ConnectionHandlers {
  /**
   * Happenings, in network order. The driver awaits each call before delivering the next, so
   * the events are stored in the order they happened; what happened meanwhile may come in the
   * next call together.
   */
  onEvents(events: SessionEvent[]): Promise<void>;
  /** Pairing material changes (QR strings rotate); ephemeral, never stored. */
  onQr(qr: string): void;
  /** The connection ended; the manager decides whether and when to reconnect. */
  onClose(close: NetworkClose): void;
  /** An incoming call offer (the manager rejects it when the instance says so). */
  onCall?(call: { id: string; from: string }): void;
}

/** Why a connection ended; `message` explains a close the operator must act on. */
export interface NetworkClose {
  reason: DisconnectReason;
  statusCode?: number;
  message?: string;
  /** The driver changed what the network refused (a newer client version): open the session again at once, once. */
  retry?: boolean;
}

export interface ProfileSnapshot {
  phone: string;
  jid: string;
  push_name?: string;
  about?: string;
  picture_id?: string;
  picture_url?: string;
  verified_name?: string;
  business_name?: string;
  business?: {
    business_hours_timezone?: string;
    categories?: { id: string; name: string }[];
    profile_options?: Record<string, string>;
    address?: string;
    email?: string;
    website?: string;
  };
}

export interface SendOptions {
  replyTo?: string;
  /**
   * Chosen by the caller so that sending again after a crash is the same message: the network
   * keeps one message per id (a reactor that cannot know whether its last send went out uses it).
   */
  messageId?: string;
}

export interface OutgoingMedia {
  kind: 'image' | 'video' | 'audio' | 'document';
  mimetype: string;
  bytes: Buffer;
  file_name?: string;
  caption?: string;
}

export interface ButtonsContent {
  text?: string;
  footer?: string;
  buttons: { id: string; text: string }[];
}

/**
 * A file to send as media, on local disk (plain bytes, read as a stream: never held whole). The
 * gateway has already read its kind from the bytes and converted it where the network needs
 * (voice notes to OGG/Opus with `seconds` and `waveform`, stickers to WebP).
 */
export interface MediaUpload {
  kind: 'image' | 'video' | 'audio' | 'document' | 'sticker';
  path: string;
  length: number;
  mimetype: string;
  file_name?: string;
  /** Audio: a voice note (push-to-talk). */
  ptt?: boolean;
  seconds?: number;
  /** Voice notes: 64 loudness samples, 0 to 100. */
  waveform?: Uint8Array;
  width?: number;
  height?: number;
  /** Video: plays as a GIF. */
  gif?: boolean;
  /** Small JPEG preview the sender shows before the download (images, videos). */
  thumbnail?: Uint8Array;
}

/** Uploaded media: what a message needs to carry it (the event keeps it; the bytes are the host's). */
export type UploadedMedia = NonNullable<NetworkMessage['media']>;

/** What a send put on the network, and what the driver did instead where the network would not render it. */
export interface SentMessage {
  message: NetworkMessage;
  fallback?: string;
}

/** Who authored a message that is acted on (reactions, deletions): needed to name it on the network. */
export interface MessageAuthor {
  from_me: boolean;
  /** The author of a group message not from this account. */
  participant?: string;
}

/** A message as app-state actions name it: the network keys them by id, direction and time. */
export interface MessageRef {
  id: string;
  from_me: boolean;
  timestamp_s: number;
  /** The sender of a group message not from this account. */
  participant?: string;
}

/**
 * Chat-level actions, synced to the account's other devices. `last` is the chat's newest known
 * message: the network scopes archive, read state, clear and delete to a message range, so the
 * other devices do not apply the action to messages they have and we had not seen.
 */
export type ChatAction =
  | { type: 'archive'; archived: boolean; last?: MessageRef }
  | { type: 'pin'; pinned: boolean }
  /** The network takes an absolute end: unix ms, -1 forever, 0 unmutes. */
  | { type: 'mute'; until_ms: number }
  | { type: 'mark_unread'; unread: boolean; last?: MessageRef }
  | { type: 'delete_message'; message: MessageRef }
  | { type: 'delete_chat'; last?: MessageRef }
  | { type: 'clear'; last?: MessageRef };

/** Whether a number is on the network, and the jid the network knows it by (variants tried). */
export type NumberCheck = { exists: true; jid: string } | { exists: false };

export interface NetworkConnection {
  /**
   * Looks a phone number (digits with country code) up on the network, a Brazilian mobile with and
   * without its ninth digit. Sends to a number resolve through it first.
   */
  checkNumber(phone: string): Promise<NumberCheck>;
  /** Links by code instead of QR: `phone` is digits with country code. */
  requestPairingCode(phone: string): Promise<string>;
  /** The connected account's profile, fetched fresh. Throws NotConnectedError when not open. */
  profile(): Promise<ProfileSnapshot>;
  sendText(to: string, text: string, options?: SendOptions): Promise<NetworkMessage>;
  /** Where buttons cannot be rendered, the driver sends its best fallback and says so in `fallback`. */
  sendButtons(to: string, content: ButtonsContent, options?: Pick<SendOptions, 'messageId'>): Promise<{ message: NetworkMessage; fallback?: string }>;
  /** A file sent as the network's media message of its kind (encrypted and uploaded by the driver). */
  sendMedia(to: string, media: OutgoingMedia, options?: Pick<SendOptions, 'messageId'>): Promise<NetworkMessage>;
  markRead(chat: string, messageIds: string[], sender?: string): Promise<void>;
  /** `author` names the reacted message on the network (ours, or a group member's); default: the peer's. */
  react(chat: string, messageId: string, reaction: string, author?: MessageAuthor): Promise<NetworkMessage>;
  /** Encrypts a file as the network's media of its kind and uploads it to the network's media host. */
  uploadMedia(file: MediaUpload): Promise<UploadedMedia>;
  /**
   * Sends one message of any kind (media already uploaded) under `messageId` when given: sending
   * the same id again is the same message. Kinds the network will not render are sent as their
   * honest fallback, named in `fallback`.
   */
  sendMessage(to: string, content: OutgoingContent, options?: Pick<SendOptions, 'messageId'>): Promise<SentMessage>;
  /** Edits or deletes a message for everyone (the network's protocol message), answered as sent. */
  change(chat: string, change: MessageChange): Promise<NetworkMessage>;
  /** Shows the chat that the account is typing, recording, or stopped. */
  sendChatPresence(chat: string, state: 'composing' | 'recording' | 'paused'): Promise<void>;
  rejectCall(callId: string, from: string): Promise<void>;
  /** Archive, pin, mute, mark unread, delete or clear, as the account's phone would. */
  modifyChat(chat: string, action: ChatAction): Promise<void>;
  /** The invite code of a group the account administers (the network refuses non-admins). */
  groupInviteCode(group: string): Promise<string>;
  /**
   * Asks the sender's phone to upload a message's media again (the media host answered 404/410):
   * the new location, or undefined when the network has no way to (the sandbox's media never expires).
   */
  refreshMedia?(message: NetworkMessage): Promise<NetworkMessage['media'] | undefined>;
  /** Groups, profile, block list, privacy, labels and status posts (account-port.ts). */
  readonly account: AccountOperations;
  /** Unlinks the device on the network and wipes nothing locally (the manager does). */
  logout(): Promise<void>;
  /** Closes the socket without unlinking; no onClose follows. */
  end(): Promise<void>;
}

/** Credentials kept by the session manager, encrypted at rest, written in bulk. */
export interface AuthStateStore {
  /** Reads values by type and ids; absent ids are missing from the result. */
  get(type: string, ids: string[]): Promise<Record<string, unknown>>;
  /** Writes (value) or deletes (null) many keys in one durable write. */
  set(data: Record<string, Record<string, unknown | null>>): Promise<void>;
  clear(): Promise<void>;
}

export class NotConnectedError extends Error {
  override name = 'NotConnectedError';
}
