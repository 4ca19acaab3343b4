import { invalidInput, notFound } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { IdGenerator } from '../../infra/ids.js';
import type { ConnectOptions, MessagingNetwork, NetworkConnection } from '../port.js';
import { parseAddress } from './addresses.js';
import { AccountAdmin } from './account-admin.js';
import { SandboxAccountOperations } from './account-operations.js';
import { Calls } from './calls.js';
import { SandboxConnection } from './connection.js';
import { Conversations } from './conversations.js';
import { announceGroup, announceParticipants } from './group-events.js';
import { Groups } from './groups.js';
import { GroupAdmin } from './group-admin.js';
import { SandboxFarEnd } from './far-end.js';
import { Pictures } from './pictures.js';
import { InstanceActions } from './instance-actions.js';
import { InstanceSending } from './instance-sending.js';
import { blobIdOf, MediaStore } from './media-store.js';
import { Messaging, type Content, type Route } from './messaging.js';
import { StatusPosts } from './status-posts.js';
import { Numbers } from './numbers.js';
import { OfflineMessages } from './offline.js';
import { Pairing } from './pairing.js';
import { Phones } from './phones.js';
import { Registry } from './registry.js';
import {
  MEDIA_KINDS,
  type CallEntry,
  type CallInput,
  type ChatPresenceInput,
  type CreateGroupInput,
  type CreatePhoneInput,
  type InboxEntry,
  type ParticipantsInput,
  type PresenceInput,
  type ReadInput,
  type ReceiptsInput,
  type SendInput,
  type StatusInput,
  type EditInput,
  type VoteInput,
} from './schemas.js';
import { encryptPollVote } from '../../infra/crypto/poll-vote.js';
import { userJid } from './addresses.js';
import { Signals } from './signals.js';
import { SandboxState, type MessageDoc } from './state.js';
import { changesOf, inboxEntry } from './views.js';

export interface SandboxOptions {
  docs: DocumentStore;
  clock: Clock;
  ids: IdGenerator;
  /** The gateway's public address: media URLs point at its /sandbox/media route. */
  publicUrl: string;
  /** Delay of every delivery to an instance; 0 (the default) never sleeps. */
  latencyMs?: number;
}

/**
 * The simulated messaging network (SANDBOX.md): a driver behind the same port as Baileys, plus the
 * operations the /sandbox routes call on behalf of an account's simulated phones. Every operation
 * takes the caller's account; another account's phones and groups answer 404.
 */
export class SandboxNetwork implements MessagingNetwork {
  readonly kind = 'sandbox' as const;
  private readonly state: SandboxState;
  private readonly registry = new Registry();
  private readonly phones: Phones;
  private readonly groups: Groups;
  private readonly conversations: Conversations;
  private readonly media: MediaStore;
  private readonly messaging: Messaging;
  private readonly signals: Signals;
  private readonly pairing: Pairing;
  private readonly actions: InstanceActions;
  private readonly calls: Calls;
  private readonly statusPosts: StatusPosts;
  private readonly latencyMs: number;
  private readonly groupAdmin: GroupAdmin;
  private readonly accountAdmin: AccountAdmin;
  private readonly pictures: Pictures;
  /** What phones see of what instances do, and what a phone does to a group by hand (far-end.ts). */
  readonly farEnd: SandboxFarEnd;
  private readonly ids: IdGenerator;

  constructor(options: SandboxOptions) {
    const { docs, clock, ids } = options;
    this.ids = ids;
    this.latencyMs = Math.max(0, options.latencyMs ?? 0);
    this.state = new SandboxState(docs);
    this.phones = new Phones(this.state, clock, ids);
    this.groups = new Groups(this.state, this.phones, ids, clock);
    this.conversations = new Conversations(this.state);
    this.media = new MediaStore(this.state, ids, clock, options.publicUrl);
    const offline = new OfflineMessages(this.state, this.phones, this.registry);
    this.messaging = new Messaging(this.state, this.phones, this.groups, this.conversations, this.registry, ids, clock, offline);
    this.signals = new Signals(this.phones, this.groups, this.conversations, this.registry, clock);
    this.pairing = new Pairing(this.state, this.phones, this.groups, this.conversations, this.registry, ids, clock, offline);
    this.calls = new Calls(this.state, this.phones, this.registry, ids, clock);
    this.statusPosts = new StatusPosts(this.phones, this.registry, ids, clock);
    const numbers = new Numbers(this.phones);
    const sending = new InstanceSending(this.state, this.phones, this.groups, this.conversations, this.messaging, numbers, this.media, this.registry, ids, clock);
    this.actions = new InstanceActions(this.phones, this.conversations, this.messaging, this.signals, this.pairing, this.registry, this.calls, numbers, this.media, sending);
    const pictures = (this.pictures = new Pictures(this.state, ids, clock, options.publicUrl));
    this.groupAdmin = new GroupAdmin(this.state, this.phones, this.groups, new Numbers(this.phones), pictures, this.registry, ids, clock);
    this.accountAdmin = new AccountAdmin(this.state, this.phones, new Numbers(this.phones), pictures, this.media, this.registry, ids, clock);
    this.farEnd = new SandboxFarEnd(this.state, this.phones, this.groupAdmin, pictures);
  }

  async connect(options: ConnectOptions): Promise<NetworkConnection> {
    await this.state.ready();
    const conn = new SandboxConnection(options.instanceId, options.accountId, options.auth, options.handlers, this.actions, this.latencyMs);
    conn.account = new SandboxAccountOperations(conn, this.phones, this.groupAdmin, this.accountAdmin, this.pictures);
    this.registry.open(conn);
    await this.pairing.start(conn);
    return conn;
  }

  async createPhone(accountId: string, input: CreatePhoneInput): Promise<{ phone: string; jid: string; lid?: string }> {
    await this.state.ready();
    const doc = await this.phones.create(accountId, input);
    return { phone: doc._id, jid: doc.jid, ...(doc.lid ? { lid: doc.lid } : {}) };
  }

  /**
   * Which instance's live session a phone route needs, so that with many nodes it is forwarded to
   * the node holding it: the one showing the scanned QR; else the one linked to the phone addressed
   * (`to`); else the one linked to the acting phone. Null when none is linked: handled anywhere.
   * Another account's phones name nothing (the route answers 404 where it lands).
   */
  async sessionOf(accountId: string, phone: string, body: unknown): Promise<string | null> {
    const input = (typeof body === 'object' && body !== null ? body : {}) as { qr?: unknown; to?: unknown };
    if (typeof input.qr === 'string') return /^sandbox:([^~]+)~/.exec(input.qr)?.[1] ?? null;
    let target = phone;
    if (typeof input.to === 'string') {
      try {
        const to = parseAddress('to', input.to);
        if (to.kind === 'phone') target = to.phone;
      } catch {
        return null;
      }
    }
    const link = await this.state.links.findOne({ phone: target });
    return link && link.account_id === accountId ? link._id : null;
  }

  async scan(accountId: string, phone: string, input: { qr: string }): Promise<void> {
    const doc = await this.phone(accountId, phone);
    if (typeof input.qr !== 'string' || input.qr === '') throw invalidInput('qr', 'must not be empty');
    await this.pairing.scan(accountId, doc, input.qr);
  }

  async link(accountId: string, phone: string, input: { code: string }): Promise<void> {
    const doc = await this.phone(accountId, phone);
    if (typeof input.code !== 'string' || input.code === '') throw invalidInput('code', 'must not be empty');
    await this.pairing.link(accountId, doc, input.code);
  }

  async sendFromPhone(accountId: string, phone: string, input: SendInput): Promise<{ message_id: string }> {
    const sender = await this.phone(accountId, phone);
    const given = (['text', 'media', 'location', 'contact', 'poll'] as const).filter((k) => input[k] !== undefined);
    if (given.length === 0) throw invalidInput('text', 'text, media, location, contact or poll is required');
    if (given.length > 1) throw invalidInput(given[1] as string, `send one of text, media, location, contact or poll, not ${given.join(' and ')} (media.caption carries text)`);
    if (input.text !== undefined && (typeof input.text !== 'string' || input.text === '')) throw invalidInput('text', 'must not be empty');
    if (input.media !== undefined && !MEDIA_KINDS.includes(input.media.kind)) throw invalidInput('media.kind', 'must be image, video, audio, document or sticker');
    if (input.poll !== undefined && input.poll.selectable_count > input.poll.options.length) throw invalidInput('poll.selectable_count', 'must not exceed the number of options');
    // Checked before the media is encrypted and stored, so a refused message leaves no blob behind.
    const route = await this.messaging.route(sender, parseAddress('to', input.to), 'to', input.reply_to);
    if (input.lid_only === true && (sender.addressing !== 'lid' || route.group !== undefined)) {
      throw invalidInput('lid_only', 'only a 1:1 message of a phone created with addressing "lid" can hide its phone number');
    }
    const content = await this.content(accountId, input);
    const message = await this.messaging.send(sender, route, input.lid_only === true ? { ...content, lid_only: true } : content, 'phone');
    return { message_id: message._id };
  }

  private async content(accountId: string, input: SendInput): Promise<Content> {
    if (input.media) return { type: 'media', media: await this.media.upload(accountId, input.media) };
    if (input.location) return { type: 'location', location: input.location };
    if (input.contact) return { type: 'contact', contacts: [input.contact] };
    if (input.poll) return { type: 'poll', poll: { ...input.poll, message_secret: this.ids.bytes(32).toString('base64') } };
    return { type: 'text', text: input.text };
  }

  /** The phone posts a status: instances of phones that have it as a contact receive it on status@broadcast. */
  async postStatus(accountId: string, phone: string, input: StatusInput): Promise<{ message_id: string }> {
    const poster = await this.phone(accountId, phone);
    if (typeof input.text !== 'string' || input.text === '') throw invalidInput('text', 'must not be empty');
    return this.statusPosts.post(poster, input.text);
  }

  /** Edit for everyone: the recipients of one of the phone's messages receive the network's edit. */
  async editMessage(accountId: string, phone: string, messageId: string, input: EditInput): Promise<{ message_id: string }> {
    const sender = await this.phone(accountId, phone);
    if (typeof input.text !== 'string' || input.text === '') throw invalidInput('text', 'must not be empty');
    const original = await this.ownMessage(sender._id, messageId);
    if (original.type !== 'text') throw invalidInput('message_id', 'only text messages can be edited');
    const message = await this.messaging.send(sender, routeOf(original), { type: 'edit', text: input.text, edit: { message_id: messageId } }, 'phone');
    return { message_id: message._id };
  }

  /** Delete for everyone: the recipients receive the network's revoke of that message. */
  async deleteMessage(accountId: string, phone: string, messageId: string): Promise<{ message_id: string }> {
    const sender = await this.phone(accountId, phone);
    const original = await this.ownMessage(sender._id, messageId);
    const message = await this.messaging.send(sender, routeOf(original), { type: 'revoke', revoke: { message_id: messageId } }, 'phone');
    return { message_id: message._id };
  }

  private async ownMessage(phone: string, messageId: string) {
    const message = await this.conversations.known(phone, messageId);
    if (!message || message.from !== phone || message.type === 'edit' || message.type === 'revoke') {
      throw notFound(`message ${messageId} of phone ${phone} not found`);
    }
    return message;
  }

  async inbox(accountId: string, phone: string): Promise<{ messages: InboxEntry[] }> {
    const doc = await this.phone(accountId, phone);
    const messages = await this.conversations.inbox(doc._id);
    // Edits and deletions change the messages they name; they are not items of their own.
    const changes = changesOf(messages);
    return { messages: messages.filter((m) => m.type !== 'edit' && m.type !== 'revoke').map((m) => inboxEntry(m, doc._id, changes)) };
  }

  /** The decrypted bytes of media the phone received (what the phone would show). */
  async inboxMedia(accountId: string, phone: string, messageId: string): Promise<{ mimetype: string; bytes: Buffer }> {
    const doc = await this.phone(accountId, phone);
    const [message] = await this.conversations.received(doc._id, [messageId]);
    if (!message?.media) throw notFound(`phone ${phone} received no media message ${messageId}`);
    const bytes = await this.media.decrypted(message.media);
    if (!bytes) throw notFound('the media host no longer has this file');
    return { mimetype: message.media.mimetype, bytes };
  }

  /** The phone votes on a poll it received: the vote goes to the poll's chat, encrypted with the poll's secret. */
  async vote(accountId: string, phone: string, messageId: string, input: VoteInput): Promise<{ message_id: string }> {
    const voter = await this.phone(accountId, phone);
    const [poll] = await this.conversations.received(voter._id, [messageId]);
    if (!poll?.poll || poll.type !== 'poll') throw notFound(`phone ${phone} received no poll ${messageId}`);
    const options = input.options ?? [];
    if (new Set(options).size !== options.length) throw invalidInput('options', 'names an option twice');
    const unknown = options.find((o) => !poll.poll?.options.includes(o));
    if (unknown !== undefined) throw invalidInput('options', `${unknown} is not an option of the poll`);
    if (poll.poll.selectable_count > 0 && options.length > poll.poll.selectable_count) throw invalidInput('options', `at most ${poll.poll.selectable_count} may be chosen`);
    if (!poll.poll.message_secret) throw invalidInput('message_id', 'the poll carries no secret to vote with');
    const binding = { pollMessageId: poll._id, creatorJid: userJid(poll.from), voterJid: voter.jid };
    const { encPayload, encIv } = encryptPollVote(Buffer.from(poll.poll.message_secret, 'base64'), binding, options);
    const route = await this.messaging.route(voter, poll.group !== undefined ? { kind: 'group', jid: poll.group } : parseAddress('to', poll.from), 'message_id');
    const poll_vote = { poll_message_id: poll._id, creator_jid: binding.creatorJid, voter_jid: binding.voterJid, enc_payload: encPayload.toString('base64'), enc_iv: encIv.toString('base64') };
    const message = await this.messaging.send(voter, route, { type: 'poll_vote', poll_vote }, 'phone');
    return { message_id: message._id };
  }

  /** The last typing state each chat showed the phone. */
  async chatPresenceSeen(accountId: string, phone: string): Promise<{ presences: { chat: string; from: string; state: 'composing' | 'recording' | 'paused'; at: string }[] }> {
    const doc = await this.phone(accountId, phone);
    const seen = await this.state.chatPresence.find({ phone: doc._id }, { sort: { chat: 1 } });
    return { presences: seen.map((p) => ({ chat: p.chat, from: p.from, state: p.state, at: p.at })) };
  }

  async receipts(accountId: string, phone: string, input: ReceiptsInput): Promise<void> {
    const doc = await this.phone(accountId, phone);
    if (!Array.isArray(input.message_ids) || input.message_ids.length === 0) throw invalidInput('message_ids', 'at least one message id');
    if (input.state !== 'Delivered' && input.state !== 'Read') throw invalidInput('state', 'must be Delivered or Read');
    await this.signals.receipts(doc, input.message_ids, input.state);
  }

  async readSelf(accountId: string, phone: string, input: ReadInput): Promise<void> {
    const doc = await this.phone(accountId, phone);
    await this.signals.readSelf(doc, parseAddress('chat', input.chat));
  }

  async presence(accountId: string, phone: string, input: PresenceInput): Promise<void> {
    const doc = await this.phone(accountId, phone);
    if (input.state !== 'available' && input.state !== 'unavailable') throw invalidInput('state', 'must be available or unavailable');
    await this.signals.presence(doc, input.state);
  }

  async chatPresence(accountId: string, phone: string, input: ChatPresenceInput): Promise<void> {
    const doc = await this.phone(accountId, phone);
    if (!['composing', 'recording', 'paused'].includes(input.state)) throw invalidInput('state', 'must be composing, recording or paused');
    await this.signals.chatPresence(doc, parseAddress('to', input.to), input.state);
  }

  async unlink(accountId: string, phone: string): Promise<void> {
    await this.pairing.unlink(await this.phone(accountId, phone));
  }

  /** Sandbox extension: the phone calls another; that phone's instance sees a call offer. */
  async placeCall(accountId: string, phone: string, input: CallInput): Promise<{ call_id: string }> {
    const call = await this.calls.place(await this.phone(accountId, phone), input.to);
    return { call_id: call._id };
  }

  async callLog(accountId: string, phone: string): Promise<{ calls: CallEntry[] }> {
    return { calls: await this.calls.log(await this.phone(accountId, phone)) };
  }

  async createGroup(accountId: string, input: CreateGroupInput): Promise<{ jid: string }> {
    await this.state.ready();
    const group = await this.groups.create(accountId, input);
    await announceGroup(this.registry, group);
    return { jid: group._id };
  }

  async changeParticipants(accountId: string, jid: string, input: ParticipantsInput): Promise<void> {
    await this.state.ready();
    const change = await this.groups.changeParticipants(accountId, jid, input);
    await announceParticipants(this.registry, change, input.by);
  }

  /** The encrypted bytes behind a media URL, or null. Public: the URL's random id is the secret. */
  async mediaFile(file: string): Promise<Buffer | null> {
    const blobId = blobIdOf(file);
    if (!blobId) return null;
    await this.state.ready();
    return this.media.get(blobId);
  }

  /** The media host forgets a file of the account's phones: downloads get 404 until re-uploaded. */
  async expireMedia(accountId: string, file: string): Promise<void> {
    const blobId = blobIdOf(file);
    await this.state.ready();
    if (!blobId || !(await this.media.expire(accountId, blobId))) throw notFound('media not found');
  }

  private async phone(accountId: string, phone: string) {
    await this.state.ready();
    return this.phones.owned(accountId, phone);
  }
}

/** A change to a message goes where the message went. */
function routeOf(original: MessageDoc): Route {
  return original.group !== undefined ? { recipients: original.recipients, group: original.group } : { recipients: original.recipients };
}
