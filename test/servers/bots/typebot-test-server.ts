import type { ServerResponse } from 'node:http';
import sharp from 'sharp';
import { json, JsonTestServer, type Handler } from './http-json.js';

/**
 * A test tool, not part of the product: a Typebot viewer speaking the public chat API the bot
 * runner uses (POST /api/v1/typebots/{publicId}/startChat, POST /api/v1/sessions/{id}/continueChat),
 * written from Typebot's API documentation: answers are blocks (rich text, image, video, audio,
 * embed), an input (a choice of items, or text) waits for the user's reply, and the flow's
 * variables can be prefilled at the start.
 *
 * Flows it knows:
 * - `shop`: greets the contact by the prefilled `name`, offers a choice (Sales / Support), then on
 *   "Sales" answers with an image (served here) and asks for an e-mail (text input), then thanks and ends.
 * - `loop`: a flow that never waits for input: every call answers 500 text blocks.
 */
export interface TypebotSession {
  id: string;
  typebot: string;
  step: number;
  variables: Record<string, string>;
  replies: string[];
}

type Block = { id: string; type: string; content: unknown };

const rich = (id: string, ...children: { text: string; bold?: boolean; italic?: boolean }[]): Block => ({ id, type: 'text', content: { type: 'richText', richText: [{ type: 'p', children }] } });

export class TypebotTestServer extends JsonTestServer {
  readonly sessions = new Map<string, TypebotSession>();
  /** Every call, in order: what a test checks the runner sent. */
  readonly calls: { path: string; body: unknown }[] = [];
  private next = 0;
  /** The flow's picture, served here (GET /media/catalog.png) so the gateway can fetch it. */
  private png: Buffer = Buffer.alloc(0);

  override async start(): Promise<this> {
    this.png = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#c03' } }).png().toBuffer();
    return super.start();
  }

  protected handle: Handler = (req, body, res) => {
    const path = req.url ?? '';
    if (req.method === 'GET' && path === '/media/catalog.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': this.png.length });
      return void res.end(this.png);
    }
    this.calls.push({ path, body });
    const start = /^\/api\/v1\/typebots\/([^/]+)\/startChat$/.exec(path);
    if (req.method === 'POST' && start) return this.startChat(decodeURIComponent(start[1] ?? ''), body as { prefilledVariables?: Record<string, string> } | null, res);
    const cont = /^\/api\/v1\/sessions\/([^/]+)\/continueChat$/.exec(path);
    if (req.method === 'POST' && cont) return this.continueChat(decodeURIComponent(cont[1] ?? ''), body as { message?: unknown } | null, res);
    json(res, 404, { message: 'Not found' });
  };

  private startChat(typebot: string, body: { prefilledVariables?: Record<string, string> } | null, res: ServerResponse): void {
    if (typebot !== 'shop' && typebot !== 'loop') return json(res, 404, { message: "Typebot doesn't exist" });
    const session: TypebotSession = { id: `sess_${++this.next}`, typebot, step: 0, variables: { ...body?.prefilledVariables }, replies: [] };
    this.sessions.set(session.id, session);
    json(res, 200, { sessionId: session.id, typebot: { id: typebot, theme: {}, settings: {} }, ...this.turn(session) });
  }

  private continueChat(sessionId: string, body: { message?: unknown } | null, res: ServerResponse): void {
    const session = this.sessions.get(sessionId);
    if (!session || session.step < 0) return json(res, 404, { message: 'Session not found.' });
    const m = body?.message;
    const text = typeof m === 'string' ? m : typeof m === 'object' && m !== null && typeof (m as { text?: unknown }).text === 'string' ? (m as { text: string }).text : '';
    session.replies.push(text);
    json(res, 200, this.turn(session, text));
  }

  private turn(s: TypebotSession, reply?: string): { messages: Block[]; input?: unknown } {
    if (s.typebot === 'loop') return { messages: Array.from({ length: 500 }, (_, i) => rich(`l${i}`, { text: `again ${i}` })) };
    if (s.step === 0) {
      s.step = 1;
      return {
        messages: [rich('b1', { text: 'Hello ' }, { text: s.variables.name ?? 'there', bold: true }, { text: '!' }), rich('b2', { text: 'What can we do for you?', italic: true })],
        input: { id: 'choice1', type: 'choice input', items: [{ id: 'i1', content: 'Sales' }, { id: 'i2', content: 'Support' }] },
      };
    }
    if (s.step === 1) {
      if (reply !== 'Sales' && reply !== 'Support') {
        return { messages: [rich('b3', { text: 'Please pick one of the options.' })], input: { id: 'choice1', type: 'choice input', items: [{ id: 'i1', content: 'Sales' }, { id: 'i2', content: 'Support' }] } };
      }
      s.step = 2;
      s.variables.department = reply;
      return {
        messages: [
          rich('b4', { text: `${reply}, great.` }),
          { id: 'b5', type: 'image', content: { url: `${this.url}/media/catalog.png` } },
          { id: 'b6', type: 'embed', content: { url: 'https://shop.example/catalog', height: 400 } },
          rich('b7', { text: 'Your e-mail?' }),
        ],
        input: { id: 'email1', type: 'email input', options: { labels: { placeholder: 'you@example.com' } } },
      };
    }
    s.step = -1;
    return { messages: [rich('b8', { text: `Thanks, we will write to ${reply ?? ''}.` })] };
  }
}
