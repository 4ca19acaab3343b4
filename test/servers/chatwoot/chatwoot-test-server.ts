import { createHmac, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import { koaBody } from 'koa-body';

/**
 * A test tool, not part of the product: a helpdesk that speaks the part of Chatwoot's public REST
 * API the gateway's helpdesk bridge uses (../../../../shared/design/HELPDESK.md), written from
 * Chatwoot's API documentation. It keeps everything in memory and reproduces the behaviours that
 * matter to a client: numeric ids, `api_access_token` auth, 422 on a duplicate contact, the
 * per-conversation message limit, multipart attachments, and signed `message_created` callbacks
 * to the inbox's webhook URL (for agents' replies and, as Chatwoot does, for every message).
 */

export interface Inbox {
  id: number;
  name: string;
  channel_type: 'Channel::Api';
  webhook_url: string;
  inbox_identifier: string;
  secret: string;
}

export interface Contact {
  id: number;
  name: string;
  phone_number: string | null;
  identifier: string | null;
  email: string | null;
  additional_attributes: Record<string, unknown>;
}

export interface Conversation {
  id: number;
  account_id: number;
  inbox_id: number;
  contact_id: number;
  status: 'open' | 'pending' | 'resolved';
  source_id: string;
}

export interface Attachment {
  id: number;
  file_type: string;
  data_url: string;
  file_name: string;
  content_type: string;
  bytes: Buffer;
}

export interface Message {
  id: number;
  conversation_id: number;
  content: string | null;
  message_type: 'incoming' | 'outgoing' | 'activity';
  private: boolean;
  source_id: string | null;
  content_attributes: Record<string, unknown>;
  attachments: Attachment[];
  sender: { id: number; name: string; type: 'user' | 'contact' } | null;
  created_at: number;
  deleted: boolean;
}

export interface CallbackResult {
  url: string;
  status: number | null;
  body: string;
}

export interface ChatwootOptions {
  /** The user's access token every API call must carry. */
  token?: string;
  accountId?: number;
  /** Whether GET /inboxes shows each inbox's webhook secret (newer versions, administrators). */
  showSecrets?: boolean;
  /** Messages one conversation takes per minute before answering 422 (Chatwoot: 200). */
  messagesPerMinute?: number;
}

const MESSAGE_TYPE_CODE = { incoming: 0, outgoing: 1, activity: 2 } as const;
const MAX_ATTACHMENTS = 15;

export class ChatwootTestServer {
  readonly token: string;
  readonly accountId: number;
  showSecrets: boolean;
  messagesPerMinute: number;
  readonly inboxes: Inbox[] = [];
  readonly contacts: Contact[] = [];
  readonly conversations: Conversation[] = [];
  readonly messages: Message[] = [];
  readonly callbacks: CallbackResult[] = [];
  /** Every API request, in order, as `METHOD path`. */
  readonly requests: string[] = [];
  /** Answers the next requests whose `METHOD path` matches with this status (fault injection). */
  private readonly faults: { pattern: RegExp; status: number; times: number; afterHandling: boolean }[] = [];
  private readonly seen: { conversation: number; at: number }[] = [];
  private lastSeen = new Map<number, number>();
  private nextId = 1;
  private server: Server | undefined;
  private baseUrl = '';

  constructor(options: ChatwootOptions = {}) {
    this.token = options.token ?? `cw_${randomBytes(12).toString('hex')}`;
    this.accountId = options.accountId ?? 7;
    this.showSecrets = options.showSecrets ?? true;
    this.messagesPerMinute = options.messagesPerMinute ?? 200;
  }

  get url(): string {
    return this.baseUrl;
  }

  async start(): Promise<this> {
    const app = new Koa();
    app.silent = true;
    app.use(koaBody({ multipart: true, json: true, formidable: { maxFiles: 50, keepExtensions: true } }));
    app.use(async (ctx, next) => {
      this.requests.push(`${ctx.method} ${ctx.path}`);
      const fault = this.faults.find((f) => f.pattern.test(`${ctx.method} ${ctx.path}`));
      if (fault && --fault.times <= 0) this.faults.splice(this.faults.indexOf(fault), 1);
      if (fault && !fault.afterHandling) {
        ctx.status = fault.status;
        ctx.body = { error: 'injected fault' };
        return;
      }
      await next();
      if (fault) {
        // The request took effect, but its answer is lost on the way back.
        ctx.status = fault.status;
        ctx.body = { error: 'injected fault after handling' };
      }
    });
    app.use(this.publicRoutes().routes());
    app.use(this.apiRoutes().routes());
    this.server = createServer(app.callback());
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /**
   * The next `times` requests matching `METHOD path` answer `status`; with `afterHandling` they
   * take effect first (an answer lost on the way back).
   */
  fail(pattern: RegExp, status: number, times = 1, afterHandling = false): void {
    this.faults.push({ pattern, status, times, afterHandling });
  }

  /** An inbox made by an administrator beforehand (the gateway then finds it by name). */
  addInbox(name: string, webhookUrl = ''): Inbox {
    const inbox: Inbox = {
      id: this.id(),
      name,
      channel_type: 'Channel::Api',
      webhook_url: webhookUrl,
      inbox_identifier: randomBytes(12).toString('base64url'),
      secret: randomBytes(16).toString('hex'),
    };
    this.inboxes.push(inbox);
    return inbox;
  }

  /** A conversation an agent starts with a contact typed in by hand (a phone number, no WhatsApp id). */
  startConversation(inboxId: number, contact: { name: string; phone_number: string }): Conversation {
    const stored: Contact = { id: this.id(), name: contact.name, phone_number: contact.phone_number, identifier: null, email: null, additional_attributes: {} };
    this.contacts.push(stored);
    const conversation: Conversation = { id: this.id(), account_id: this.accountId, inbox_id: inboxId, contact_id: stored.id, status: 'open', source_id: randomBytes(8).toString('hex') };
    this.conversations.push(conversation);
    return conversation;
  }

  conversationMessages(conversationId: number): Message[] {
    return this.messages.filter((m) => m.conversation_id === conversationId && !m.deleted);
  }

  lastSeenAt(conversationId: number): number | undefined {
    return this.lastSeen.get(conversationId);
  }

  /**
   * An agent answers in the helpdesk: the message is stored and `message_created` is sent to the
   * inbox's webhook URL, signed when the inbox has a secret (unless `signWith` overrides it).
   */
  async agentReply(
    conversationId: number,
    reply: { content: string; private?: boolean; attachments?: { file_name: string; content_type: string; bytes: Buffer }[]; agent?: string },
    signWith?: string | null,
  ): Promise<{ message: Message; callback: CallbackResult }> {
    const conversation = this.conversationById(conversationId);
    if (!conversation) throw new Error(`no conversation ${conversationId}`);
    const message = this.storeMessage(conversation, {
      content: reply.content,
      message_type: 'outgoing',
      private: reply.private ?? false,
      source_id: null,
      content_attributes: {},
      sender: { id: 1, name: reply.agent ?? 'Agent Smith', type: 'user' },
      files: reply.attachments ?? [],
    });
    const callback = await this.notify(conversation, message, signWith);
    return { message, callback };
  }

  /** Posts a raw body to an inbox's webhook URL with the given headers (for tests of refusals). */
  async postToWebhook(url: string, body: string, headers: Record<string, string> = {}): Promise<CallbackResult> {
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      return { url, status: res.status, body: await res.text() };
    } catch (err) {
      return { url, status: null, body: (err as Error).message };
    }
  }

  /** Chatwoot's `message_created` webhook body for a message. */
  webhookBody(conversation: Conversation, message: Message): Record<string, unknown> {
    const contact = this.contacts.find((c) => c.id === conversation.contact_id);
    return {
      event: 'message_created',
      id: message.id,
      content: message.content,
      message_type: message.message_type,
      content_type: 'text',
      private: message.private,
      source_id: message.source_id,
      content_attributes: message.content_attributes,
      created_at: new Date(message.created_at * 1000).toISOString(),
      sender: message.sender,
      conversation: {
        id: conversation.id,
        inbox_id: conversation.inbox_id,
        status: conversation.status,
        contact_inbox: { source_id: conversation.source_id },
        meta: { sender: { id: contact?.id, name: contact?.name, phone_number: contact?.phone_number, identifier: contact?.identifier } },
      },
      inbox: { id: conversation.inbox_id, name: this.inboxes.find((i) => i.id === conversation.inbox_id)?.name },
      account: { id: this.accountId },
      attachments: message.attachments.map((a) => ({ id: a.id, file_type: a.file_type, data_url: a.data_url })),
    };
  }

  /** Signs a body the way Chatwoot signs its webhooks. */
  static sign(secret: string, timestamp: string, body: string): string {
    return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
  }

  private async notify(conversation: Conversation, message: Message, signWith?: string | null): Promise<CallbackResult> {
    const inbox = this.inboxes.find((i) => i.id === conversation.inbox_id);
    if (!inbox?.webhook_url) return { url: '', status: null, body: 'no webhook url' };
    const body = JSON.stringify(this.webhookBody(conversation, message));
    const headers: Record<string, string> = {};
    const secret = signWith === undefined ? inbox.secret : signWith;
    if (secret) {
      const timestamp = String(Math.floor(Date.now() / 1000));
      headers['x-chatwoot-timestamp'] = timestamp;
      headers['x-chatwoot-signature'] = ChatwootTestServer.sign(secret, timestamp, body);
    }
    const result = await this.postToWebhook(inbox.webhook_url, body, headers);
    this.callbacks.push(result);
    return result;
  }

  private publicRoutes(): Router {
    const router = new Router();
    // Attachments are served by URL without the API token, as Chatwoot's storage links are.
    router.get('/rails/active_storage/blobs/:id/:name', (ctx) => {
      const file = this.messages.flatMap((m) => m.attachments).find((a) => a.id === Number(ctx.params.id));
      if (!file) return notFound(ctx);
      ctx.type = file.content_type;
      ctx.body = file.bytes;
    });
    router.post('/public/api/v1/inboxes/:identifier/contacts/:sourceId/conversations/:id/update_last_seen', (ctx) => {
      const inbox = this.inboxes.find((i) => i.inbox_identifier === ctx.params.identifier);
      const conversation = this.conversationById(Number(ctx.params.id));
      if (!inbox || !conversation || conversation.inbox_id !== inbox.id || conversation.source_id !== ctx.params.sourceId) {
        ctx.status = 404;
        ctx.body = { error: 'not found' };
        return;
      }
      this.lastSeen.set(conversation.id, Date.now());
      ctx.body = {};
    });
    return router;
  }

  private apiRoutes(): Router {
    const router = new Router({ prefix: '/api/v1/accounts/:accountId' });
    router.use(async (ctx, next) => {
      if (ctx.get('api_access_token') !== this.token) {
        ctx.status = 401;
        ctx.body = { error: 'You need to sign in or sign up before continuing.' };
        return;
      }
      if (Number(ctx.params.accountId) !== this.accountId) {
        ctx.status = 404;
        ctx.body = { error: 'Resource could not be found' };
        return;
      }
      await next();
    });

    router.get('/inboxes', (ctx) => {
      ctx.body = { payload: this.inboxes.map((i) => this.presentInbox(i)) };
    });
    router.post('/inboxes', (ctx) => {
      const body = ctx.request.body as { name?: unknown; channel?: { type?: unknown; webhook_url?: unknown } };
      if (typeof body.name !== 'string' || body.name === '' || body.channel?.type !== 'api') {
        return unprocessable(ctx, 'name and an api channel are required');
      }
      const inbox = this.addInbox(body.name, typeof body.channel.webhook_url === 'string' ? body.channel.webhook_url : '');
      ctx.body = this.presentInbox(inbox);
    });
    router.patch('/inboxes/:id', (ctx) => {
      const inbox = this.inboxes.find((i) => i.id === Number(ctx.params.id));
      if (!inbox) return notFound(ctx);
      const body = ctx.request.body as { channel?: { webhook_url?: unknown } };
      if (typeof body.channel?.webhook_url === 'string') inbox.webhook_url = body.channel.webhook_url;
      ctx.body = this.presentInbox(inbox);
    });

    router.get('/contacts/search', (ctx) => {
      const q = String(ctx.query.q ?? '').toLowerCase();
      const found = q
        ? this.contacts.filter((c) => [c.name, c.phone_number, c.identifier, c.email].some((v) => v?.toLowerCase().includes(q)))
        : [];
      ctx.body = { meta: { count: found.length, current_page: 1 }, payload: found };
    });
    router.post('/contacts/filter', (ctx) => {
      const body = ctx.request.body as { payload?: { attribute_key?: string; filter_operator?: string; values?: unknown[]; query_operator?: string | null }[] };
      const rules = Array.isArray(body.payload) ? body.payload : [];
      const known = new Set(['phone_number', 'identifier', 'name', 'email']);
      if (rules.length === 0 || rules.some((r) => !known.has(r.attribute_key ?? '') || r.filter_operator !== 'equal_to')) {
        return unprocessable(ctx, 'Invalid attribute key or operator');
      }
      // Rules combine left to right by the operator each one carries to the next.
      const found = this.contacts.filter((c) => {
        let result = false;
        let op: string | null | undefined = 'or';
        for (const r of rules) {
          const value = c[r.attribute_key as 'phone_number' | 'identifier' | 'name' | 'email'];
          const hit = (r.values ?? []).some((v) => String(v) === value);
          result = op === 'and' ? result && hit : result || hit;
          op = r.query_operator?.toLowerCase();
        }
        return result;
      });
      ctx.body = { meta: { count: found.length, current_page: 1 }, payload: found };
    });
    router.post('/contacts', (ctx) => {
      const body = ctx.request.body as { inbox_id?: unknown; name?: unknown; phone_number?: unknown; identifier?: unknown };
      const phone = typeof body.phone_number === 'string' && body.phone_number ? body.phone_number : null;
      const identifier = typeof body.identifier === 'string' && body.identifier ? body.identifier : null;
      if (phone !== null && !/^\+[1-9]\d{1,14}$/.test(phone)) return unprocessable(ctx, 'Phone number should be in e164 format', 'phone_number');
      if (phone !== null && this.contacts.some((c) => c.phone_number === phone)) {
        return unprocessable(ctx, 'Phone number has already been taken', 'phone_number');
      }
      if (identifier !== null && this.contacts.some((c) => c.identifier === identifier)) {
        return unprocessable(ctx, 'Identifier has already been taken', 'identifier');
      }
      const contact: Contact = {
        id: this.id(),
        name: typeof body.name === 'string' && body.name ? body.name : (phone ?? identifier ?? 'Unknown'),
        phone_number: phone,
        identifier,
        email: null,
        additional_attributes: {},
      };
      this.contacts.push(contact);
      const inbox = this.inboxes.find((i) => i.id === Number(body.inbox_id));
      ctx.body = { payload: { contact, contact_inbox: inbox ? { source_id: randomBytes(8).toString('hex'), inbox } : null } };
    });
    router.get('/contacts/:id/conversations', (ctx) => {
      const contactId = Number(ctx.params.id);
      if (!this.contacts.some((c) => c.id === contactId)) return notFound(ctx);
      ctx.body = { payload: this.conversations.filter((c) => c.contact_id === contactId).map((c) => this.presentConversation(c)) };
    });

    router.post('/conversations', (ctx) => {
      const body = ctx.request.body as { inbox_id?: unknown; contact_id?: unknown; status?: unknown; source_id?: unknown };
      const inbox = this.inboxes.find((i) => i.id === Number(body.inbox_id));
      const contact = this.contacts.find((c) => c.id === Number(body.contact_id));
      if (!inbox || !contact) return unprocessable(ctx, 'inbox_id and contact_id must exist');
      const status = body.status === 'pending' || body.status === 'resolved' ? body.status : 'open';
      const conversation: Conversation = {
        id: this.id(),
        account_id: this.accountId,
        inbox_id: inbox.id,
        contact_id: contact.id,
        status,
        source_id: typeof body.source_id === 'string' ? body.source_id : randomBytes(8).toString('hex'),
      };
      this.conversations.push(conversation);
      ctx.body = this.presentConversation(conversation);
    });
    router.post('/conversations/:id/toggle_status', (ctx) => {
      const conversation = this.conversationById(Number(ctx.params.id));
      if (!conversation) return notFound(ctx);
      const status = (ctx.request.body as { status?: unknown }).status;
      if (status !== 'open' && status !== 'pending' && status !== 'resolved') return unprocessable(ctx, 'status must be open, pending or resolved');
      conversation.status = status;
      ctx.body = { payload: { success: true, current_status: status, conversation_id: conversation.id } };
    });
    router.post('/conversations/:id/messages', async (ctx) => {
      const conversation = this.conversationById(Number(ctx.params.id));
      if (!conversation) return notFound(ctx);
      const now = Date.now();
      const recent = this.seen.filter((s) => s.conversation === conversation.id && now - s.at < 60_000).length;
      if (recent >= this.messagesPerMinute) return unprocessable(ctx, 'Too many messages');
      const body = ctx.request.body as Record<string, unknown>;
      const files = attachedFiles(ctx);
      if (files.length > MAX_ATTACHMENTS) return unprocessable(ctx, `Too many attachments (max ${MAX_ATTACHMENTS})`);
      const type = body.message_type === 'incoming' ? 'incoming' : body.message_type === 'activity' ? 'activity' : 'outgoing';
      const message = this.storeMessage(conversation, {
        content: typeof body.content === 'string' ? body.content : null,
        message_type: type,
        private: body.private === true || body.private === 'true',
        source_id: typeof body.source_id === 'string' ? body.source_id : null,
        content_attributes: parseAttributes(body.content_attributes),
        sender: type === 'incoming' ? { id: conversation.contact_id, name: 'contact', type: 'contact' } : { id: 2, name: 'API', type: 'user' },
        files: await Promise.all(files.map(async (f) => ({ file_name: f.originalFilename ?? 'file', content_type: f.mimetype ?? 'application/octet-stream', bytes: await readFile(f.filepath) }))),
      });
      this.seen.push({ conversation: conversation.id, at: now });
      ctx.body = this.presentMessage(message);
      // Chatwoot tells the inbox's webhook about every message created, the API's own included.
      void this.notify(conversation, message);
    });
    router.get('/conversations/:id/messages', (ctx) => {
      const conversation = this.conversationById(Number(ctx.params.id));
      if (!conversation) return notFound(ctx);
      ctx.body = { meta: {}, payload: this.conversationMessages(conversation.id).map((m) => this.presentMessage(m)) };
    });
    router.delete('/conversations/:id/messages/:messageId', (ctx) => {
      const message = this.messages.find((m) => m.id === Number(ctx.params.messageId) && m.conversation_id === Number(ctx.params.id));
      if (!message) return notFound(ctx);
      message.deleted = true;
      message.content = 'This message was deleted';
      ctx.body = this.presentMessage(message);
    });

    return router;
  }

  private storeMessage(
    conversation: Conversation,
    m: Omit<Message, 'id' | 'conversation_id' | 'created_at' | 'deleted' | 'attachments'> & { files: { file_name: string; content_type: string; bytes: Buffer }[] },
  ): Message {
    const id = this.id();
    const attachments = m.files.map((f) => {
      const fileId = this.id();
      return {
        id: fileId,
        file_type: fileType(f.content_type),
        data_url: `${this.baseUrl}/rails/active_storage/blobs/${fileId}/${encodeURIComponent(f.file_name)}`,
        file_name: f.file_name,
        content_type: f.content_type,
        bytes: f.bytes,
      };
    });
    const { files: _files, ...rest } = m;
    const message: Message = { ...rest, id, conversation_id: conversation.id, created_at: Math.floor(Date.now() / 1000), deleted: false, attachments };
    this.messages.push(message);
    return message;
  }

  private presentInbox(inbox: Inbox) {
    const { secret, ...shown } = inbox;
    return this.showSecrets ? { ...shown, secret } : shown;
  }

  private presentConversation(c: Conversation) {
    const contact = this.contacts.find((x) => x.id === c.contact_id);
    return {
      id: c.id,
      account_id: c.account_id,
      inbox_id: c.inbox_id,
      status: c.status,
      contact_inbox: { source_id: c.source_id },
      meta: { sender: contact ?? null },
    };
  }

  private presentMessage(m: Message) {
    return {
      id: m.id,
      content: m.content,
      message_type: MESSAGE_TYPE_CODE[m.message_type],
      content_type: 'text',
      private: m.private,
      source_id: m.source_id,
      content_attributes: m.content_attributes,
      conversation_id: m.conversation_id,
      created_at: m.created_at,
      attachments: m.attachments.map((a) => ({ id: a.id, file_type: a.file_type, data_url: a.data_url, file_size: a.bytes.length })),
    };
  }

  private conversationById(id: number): Conversation | undefined {
    return this.conversations.find((c) => c.id === id);
  }

  private id(): number {
    return this.nextId++;
  }
}

function notFound(ctx: Context): void {
  ctx.status = 404;
  ctx.body = { error: 'Resource could not be found' };
}

function unprocessable(ctx: Context, message: string, attribute?: string): void {
  ctx.status = 422;
  ctx.body = attribute ? { message, attributes: [attribute] } : { message };
}

type UploadedFile = { filepath: string; originalFilename?: string | null; mimetype?: string | null };

function attachedFiles(ctx: Context): UploadedFile[] {
  const files = (ctx.request as unknown as { files?: Record<string, UploadedFile | UploadedFile[]> }).files ?? {};
  return Object.entries(files)
    .filter(([name]) => name === 'attachments[]' || name === 'attachments')
    .flatMap(([, f]) => (Array.isArray(f) ? f : [f]));
}

function parseAttributes(raw: unknown): Record<string, unknown> {
  if (typeof raw === 'object' && raw !== null) return raw as Record<string, unknown>;
  if (typeof raw === 'string') {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed === 'object' && parsed !== null) return parsed as Record<string, unknown>;
    } catch {
      // Not JSON: no attributes.
    }
  }
  return {};
}

function fileType(contentType: string): string {
  if (contentType.startsWith('image/')) return 'image';
  if (contentType.startsWith('video/')) return 'video';
  if (contentType.startsWith('audio/')) return 'audio';
  return 'file';
}
