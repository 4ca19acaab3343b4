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
 * How often an open stream's credential is checked again, the way a REST request would check it
 * now: a revoked, rotated, signed-out or expired credential closes the stream (4401) within this
 * of REST refusing it on the same node (and within the registry's RECHECK_MS on another node).
 */
const RECHECK_EVERY_MS = 200;

type Credentials = Parameters<Authenticator['authenticate']>[0];

/** What a stream keeps to check its credential again. */
interface Holder {
  credentials: Credentials;
  instanceId: string;
  lastCheck: number;
  checking: boolean;
}

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
  private readonly holders = new Map<RealtimeStream, Holder>();
  private readonly timer: NodeJS.Timeout;
  private readonly limits: StreamLimits;

  constructor(private readonly o: RealtimeOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...o.limits };
    this.timer = setInterval(() => {
      for (const stream of this.streams) stream.tick(o.ackTimeoutMs ?? 60_000);
      this.recheckCredentials();
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
    const credentials = this.credentials(req, headers);
    const { principal } = await this.o.authenticator.authenticate(credentials, 'instance', instanceId);
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
      this.holders.set(stream, { credentials, instanceId, lastCheck: Date.now(), checking: false });
      const unlisten = this.o.hub.listen(instanceId, (event) => stream.live(event));
      ws.on('close', () => {
        stream.markClosed();
        unlisten();
        this.streams.delete(stream);
        this.holders.delete(stream);
        release();
      });
      ws.on('error', () => ws.terminate());
      stream.begin();
    });
  }

  /**
   * Checks each open stream's credential again as a REST request would (same authenticator, same
   * caches and read models, so the same revocations, rotations and expiry), one check per stream
   * at a time. Refused: the stream closes with 4401. A store that cannot answer closes nothing.
   */
  private recheckCredentials(): void {
    const now = Date.now();
    for (const [stream, holder] of this.holders) {
      if (holder.checking || now - holder.lastCheck < RECHECK_EVERY_MS) continue;
      holder.checking = true;
      this.o.authenticator
        .authenticate(holder.credentials, 'instance', holder.instanceId)
        .then(
          () => undefined,
          (err: unknown) => {
            if (err instanceof DomainError && REFUSALS.has(err.type)) stream.close(4401, closeReason(`credential refused: ${err.message}`));
            else this.o.logger.warn({ err, instanceId: holder.instanceId }, 'realtime stream credential could not be checked again');
          },
        )
        .finally(() => {
          holder.checking = false;
          holder.lastCheck = Date.now();
        });
    }
  }

  /**
   * What authenticates the upgrade: its headers, and the session cookie only when the page that
   * opens the socket is the gateway's (see upgrade-origin.ts). A cookie from another origin with
   * no other credential is refused as such, not as "no credentials", so the cause is plain.
   */
  private credentials(req: IncomingMessage, headers: (name: string) => string): Credentials {
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

/** What a credential checked again can be refused with: each ends the stream. */
const REFUSALS: ReadonlySet<string> = new Set(['unauthorized', 'forbidden', 'not_found']);

/** A close frame's reason holds at most 123 bytes. */
function closeReason(text: string): string {
  const bytes = Buffer.from(text);
  return bytes.length <= 123 ? text : bytes.subarray(0, 120).toString('utf8').replace(/\uFFFD$/, '');
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
