import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are read field by field
  body: any;
  at: number;
}

/** What the receiver answers for one request; `hang` never answers (until the server closes). */
export type Responder = (req: Received, count: number) => number | { status: number; delayMs?: number; body?: string } | 'hang';

/** A local webhook receiver that records everything and answers as the test tells it. */
export class Receiver {
  readonly received: Received[] = [];
  /** Every request, answered or not. */
  requests = 0;
  sockets = 0;
  /** Requests received and not yet answered (or closed), now and at the most. */
  inFlight = 0;
  peak = 0;
  /** The same, per instance (by the body's instance_id): every request, retries with first attempts. */
  readonly peakOf = new Map<string, number>();
  private readonly inFlightOf = new Map<string, number>();
  /**
   * The same again, counting first attempts only: what WEBHOOK_CONCURRENCY_PER_INSTANCE bounds
   * (CONTRACT.md). A retry carries the very bytes of the first attempt, so the wire cannot tell
   * them apart: `isFirst` decides, by default "the first request of its delivery (webhook-id)".
   * A test that restarts the gateway tells it what the new process sends as retries.
   */
  readonly peakFirstOf = new Map<string, number>();
  private readonly firstInFlightOf = new Map<string, number>();
  /** Delivery ids requested so far, answered or not. */
  readonly requestedIds = new Set<string>();
  isFirst: (req: Received) => boolean = (req) => !this.requestedIds.has(String(req.body?.id));
  respond: Responder = () => 200;
  /** Called once a request is answered or its connection goes: the attempt is over for its sender. */
  onDone: (req: Received) => void = () => {};
  private server: Server | undefined;
  private port = 0;
  private readonly hanging = new Set<ServerResponse>();

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(port = 0): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const entry: Received = { headers: req.headers, raw, body: safeJson(raw), at: Date.now() };
        this.track(res, String(entry.body?.instance_id), this.isFirst(entry));
        this.requestedIds.add(String(entry.body?.id));
        res.once('close', () => this.onDone(entry));
        const answer = this.respond(entry, ++this.requests);
        if (answer === 'hang') {
          this.hanging.add(res);
          return;
        }
        const { status, delayMs = 0, body = '' } = typeof answer === 'number' ? { status: answer } : answer;
        const send = () => {
          if (status >= 200 && status < 300) this.received.push(entry);
          res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
        };
        if (delayMs > 0) setTimeout(send, delayMs);
        else send();
      });
    });
    server.keepAliveTimeout = 30_000;
    server.on('connection', () => this.sockets++);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** Counts the request in flight until it is answered or its connection goes. */
  private track(res: ServerResponse, instanceId: string, first: boolean): void {
    this.inFlight++;
    this.peak = Math.max(this.peak, this.inFlight);
    const mine = (this.inFlightOf.get(instanceId) ?? 0) + 1;
    this.inFlightOf.set(instanceId, mine);
    this.peakOf.set(instanceId, Math.max(this.peakOf.get(instanceId) ?? 0, mine));
    if (first) {
      const firsts = (this.firstInFlightOf.get(instanceId) ?? 0) + 1;
      this.firstInFlightOf.set(instanceId, firsts);
      this.peakFirstOf.set(instanceId, Math.max(this.peakFirstOf.get(instanceId) ?? 0, firsts));
    }
    res.once('close', () => {
      this.inFlight--;
      this.inFlightOf.set(instanceId, (this.inFlightOf.get(instanceId) ?? 1) - 1);
      if (first) this.firstInFlightOf.set(instanceId, (this.firstInFlightOf.get(instanceId) ?? 1) - 1);
    });
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Same port again (the receiver "comes back"). */
  async restart(): Promise<void> {
    await this.start(this.port);
  }

  ofType(type: string): Received[] {
    return this.received.filter((r) => r.body?.type === type);
  }
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/**
 * The Standard Webhooks verification, written from the spec rather than taken from our signer:
 * HMAC-SHA256 over `id.timestamp.body` with the base64-decoded `whsec_` key, any `v1,` signature
 * matching, timestamp within five minutes.
 */
export function verifies(secret: string, r: Received, nowS = Math.floor(Date.now() / 1000)): boolean {
  const id = r.headers['webhook-id'];
  const timestamp = r.headers['webhook-timestamp'];
  const signatures = r.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (Math.abs(nowS - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${r.raw}`).digest();
  return signatures.split(' ').some((s) => {
    const [version, sig] = s.split(',');
    if (version !== 'v1' || !sig) return false;
    const given = Buffer.from(sig, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
