import Cookies from 'cookies';
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { DomainError, forbidden, invalidInput } from '../../domain/errors.js';
import { parseEventList, type WebhookEventName } from '../../domain/events-table.js';
import type { EventStore } from '../../infra/eventstore/port.js';
import type { Logger } from '../../infra/logging/logger.js';
import type { RealtimeHub } from '../../realtime/hub.js';
import type { Authenticator } from '../auth/authenticate.js';
import { SESSION_COOKIE } from '../auth/session-cookie.js';
import { toHttpError } from '../errors.js';
import { DEFAULT_LIMITS, RealtimeStream, type StreamLimits } from './stream.js';
import { fromOwnOrigin } from './upgrade-origin.js';

export interface RealtimeOptions {
  authenticator: Authenticator;
  hub: RealtimeHub;
  store: EventStore;
  logger: Logger;
  /** Open streams one account may hold. */
  maxPerAccount: number;
  /** The gateway's public URL: its origin may open a stream with the web app's session cookie. */
  publicUrl?: string;
  ackTimeoutMs?: number;
  limits?: Partial<StreamLimits>;
  now?: () => number;
}

const PATH = /^\/instances\/([^/]{1,64})\/events\/ws\/?$/;

/**
 * `GET /instances/{id}/events/ws` (CONTRACT.md, Realtime stream): the upgrade is authenticated
 * like any instance route (a JWT as `access_token` or bearer header, or the token pair, or the
 * web app's session cookie from the gateway's own origin only), refused with an HTTP error
 * answer before it is accepted, and capped per account.
 */
export class RealtimeServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  private readonly streams = new Set<RealtimeStream>();
  private readonly perAccount = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly limits: StreamLimits;

  constructor(private readonly o: RealtimeOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...o.limits };
    this.timer = setInterval(() => {
      for (const stream of this.streams) stream.tick(o.ackTimeoutMs ?? 60_000);
    }, 200);
    this.timer.unref();
  }

  /** Takes the upgrades of this route; others are left to whoever else listens (none: they close). */
  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      void this.upgrade(req, socket, head).catch((err: unknown) => {
        if (toHttpError(err).status >= 500) this.o.logger.error({ err }, 'realtime upgrade failed');
        refuse(socket, err);
      });
    });
  }

  /** The streams' socket buffers and how often each stopped at the high water mark, for tests and metrics. */
  stats(): { streams: number; bufferedBytes: number[]; pressure: RealtimeStream['pressure'][] } {
    return { streams: this.streams.size, bufferedBytes: [...this.streams].map((s) => s.buffered), pressure: [...this.streams].map((s) => s.pressure) };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    for (const stream of this.streams) stream.close(1001, 'the gateway is shutting down');
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const match = PATH.exec(url.pathname);
    if (!match) throw new DomainError('not_found', 'no such route');
    const instanceId = decodedSegment(match[1] as string);
    const types = typesOf(url.searchParams.get('types'));
    const afterSeq = afterSeqOf(url.searchParams.get('after_seq'));
    const queryToken = url.searchParams.get('access_token');
    const headers = (name: string) => {
      if (name === 'authorization' && queryToken && !req.headers.authorization) return `Bearer ${queryToken}`;
      const value = req.headers[name];
      return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
    };
    const { principal } = await this.o.authenticator.authenticate(this.credentials(req, headers), 'instance', instanceId);
    const accountId = principal?.accountId as string;
    if ((this.perAccount.get(accountId) ?? 0) >= this.o.maxPerAccount) {
      throw new DomainError('rate_limited', `at most ${this.o.maxPerAccount} realtime streams per account`, undefined, 5);
    }
    // Without after_seq the stream starts live: at the head of the instance's session stream.
    const start = afterSeq ?? (await this.headSeq(instanceId));
    // The client may have gone while the credential was checked: nothing to count then.
    if (socket.destroyed) return;
    // Counted before the handshake (two upgrades at once must not both pass the cap), and given
    // back when the socket closes without becoming a stream: ws aborts a handshake it refuses
    // (a bad version or key) by closing the socket, and never calls back.
    const release = () => {
      const left = (this.perAccount.get(accountId) ?? 1) - 1;
      if (left > 0) this.perAccount.set(accountId, left);
      else this.perAccount.delete(accountId);
    };
    this.perAccount.set(accountId, (this.perAccount.get(accountId) ?? 0) + 1);
    socket.once('close', release);
    this.wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      // A stream now: its own close gives the place back.
      socket.off('close', release);
      const stream = new RealtimeStream(ws, instanceId, this.o.store, types, start, this.limits, this.o.logger, this.o.now ?? Date.now);
      this.streams.add(stream);
      const unlisten = this.o.hub.listen(instanceId, (event) => stream.live(event));
      ws.on('close', () => {
        stream.markClosed();
        unlisten();
        this.streams.delete(stream);
        release();
      });
      ws.on('error', () => ws.terminate());
      stream.begin();
    });
  }

  /**
   * What authenticates the upgrade: its headers, and the session cookie only when the page that
   * opens the socket is the gateway's (see upgrade-origin.ts). A cookie from another origin with
   * no other credential is refused as such, not as "no credentials", so the cause is plain.
   */
  private credentials(req: IncomingMessage, headers: (name: string) => string): Parameters<Authenticator['authenticate']>[0] {
    const cookies = new Cookies(req, new ServerResponse(req));
    if (fromOwnOrigin(req, this.o.publicUrl)) return { get: headers, cookies, method: 'GET' };
    const otherCredential = headers('authorization') !== '' || headers('x-instance-token') !== '' || headers('x-client-token') !== '';
    if (!otherCredential && cookies.get(SESSION_COOKIE)) throw forbidden('the session cookie opens the stream only from the gateway\'s own pages');
    return { get: headers };
  }

  private async headSeq(instanceId: string): Promise<number> {
    const [last] = await this.o.store.readStream(`session-${instanceId}`, { direction: 'backwards', maxCount: 1 });
    return last ? Number(last.revision) + 1 : 0;
  }
}

/** The path's instance id, decoded; bad percent-encoding is the client's error. */
function decodedSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalidInput('id', 'bad percent-encoding');
  }
}

function typesOf(raw: string | null): ReadonlySet<WebhookEventName> {
  if (raw === null || raw === '') return new Set(['All']);
  if (raw.length > 512) throw invalidInput('types', 'too long');
  const parsed = parseEventList(raw);
  if (!parsed.ok) throw invalidInput('types', `unknown event name '${parsed.bad}'`);
  return new Set(parsed.names);
}

function afterSeqOf(raw: string | null): number | null {
  if (raw === null) return null;
  if (!/^\d{1,15}$/.test(raw)) throw invalidInput('after_seq', 'must be a non-negative integer');
  return Number(raw);
}

/** An upgrade that is not accepted is answered as any request is: status, JSON error, close. */
function refuse(socket: Duplex, err: unknown): void {
  const { status, body, headers } = toHttpError(err);
  const text = JSON.stringify(body);
  const lines = [`HTTP/1.1 ${status} ${status === 429 ? 'Too Many Requests' : 'Error'}`, 'Connection: close', 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(text)}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (socket.writable) socket.end(`${lines.join('\r\n')}\r\n\r\n${text}`);
  else socket.destroy();
}
