import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How a test bot server misbehaves on purpose: refuses (503), answers garbage, or answers slowly. */
export type Mood = 'ok' | 'down' | 'garbage';

export type Handler = (req: IncomingMessage, body: unknown, res: ServerResponse) => Promise<void> | void;

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A small JSON server on a free local port; `mood` applies to every request. */
export abstract class JsonTestServer {
  mood: Mood = 'ok';
  /** Requests refused or spoiled by the mood so far. */
  refused = 0;
  private server: Server | null = null;
  url = '';

  protected abstract handle: Handler;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (this.mood === 'down') {
          this.refused++;
          return json(res, 503, { message: 'down for maintenance' });
        }
        if (this.mood === 'garbage') {
          this.refused++;
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end('{"this is": not json');
        }
        let body: unknown = null;
        try {
          body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : null;
        } catch {
          return json(res, 400, { message: 'invalid JSON' });
        }
        Promise.resolve(this.handle(req, body, res)).catch((err: unknown) => json(res, 500, { message: String(err) }));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
