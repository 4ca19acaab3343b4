import type { IncomingHttpHeaders } from 'node:http';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { Agent } from 'undici';
import { DomainError } from '../../domain/errors.js';

/**
 * Set on a request one node forwards to another. The owner reads it only as "handle this here,
 * never forward again": it grants nothing (the owner authenticates the request again), so a client
 * that sends it merely gets the local answer a single node would give.
 */
export const FORWARDED_BY = 'x-gateway-forwarded-by';

/** Where a live session is, as the leases say (the ownership module implements it). */
export interface SessionOwners {
  /** The node owning the instance's live session and its internal address; null when it is this node or nobody. */
  ownerElsewhere(instanceId: string): Promise<{ node: string; address: string } | null>;
}

export interface ForwardToOwnerOptions {
  owners: SessionOwners;
  /** This node, named in the hop header for the owner's logs. */
  nodeId: string;
  logger: Logger;
  /** What a client is told to wait when the owner does not answer: about the time its lease takes to move. */
  retryAfterSeconds: number;
  /** A dead owner must not hold the request long: the client is better told to retry. */
  connectTimeoutMs?: number;
  /**
   * How long a connected owner may take to start its answer, or pause within it: a frozen node
   * accepts connections (the kernel does) but never answers. Long enough for a QR or a send.
   */
  answerTimeoutMs?: number;
}

export type ForwardDecision = { forward: false; why: 'forwarded already' | 'no other owner' | 'bad address' } | { forward: true; node: string; origin: string };

/** RFC 9110 hop-by-hop headers, plus those the next hop sets itself (host) or undici refuses (expect). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'expect']);

/** The router's copy of a body it had to read before deciding (a route with `liveSessionOf`): forwarded as received. */
export const FORWARD_BODY = 'forwardBody';

/** The router marks a request that needs the live session of this instance (a route flagged `liveSession`). */
export const LIVE_INSTANCE = 'liveInstance';

/**
 * Decides where a request about a live session is handled: here when it was forwarded to us
 * already, when no other node holds the session's lease, or when the lease's address is not a
 * plain http(s) origin; otherwise at the owner's origin. The address comes only from our own lease
 * documents, never from the request.
 */
export async function decideForward(headers: IncomingHttpHeaders, instanceId: string, owners: SessionOwners): Promise<ForwardDecision> {
  if (headers[FORWARDED_BY] !== undefined) return { forward: false, why: 'forwarded already' };
  const owner = await owners.ownerElsewhere(instanceId);
  if (!owner) return { forward: false, why: 'no other owner' };
  const origin = originOf(owner.address);
  return origin ? { forward: true, node: owner.node, origin } : { forward: false, why: 'bad address' };
}

function originOf(address: string): string | null {
  try {
    const url = new URL(address);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return null;
    return url.origin;
  } catch {
    return null;
  }
}

/** Whether a header of this message is for one hop only: a standard one, or one its Connection header names. */
function hopByHop(headers: IncomingHttpHeaders): (name: string) => boolean {
  const named = new Set(String(headers.connection ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean));
  return (name) => HOP_BY_HOP.has(name) || named.has(name);
}

/** Request headers as the owner should see them: end-to-end ones only, and the hop mark. */
function forwardedHeaders(headers: IncomingHttpHeaders, nodeId: string, requestId: string | undefined): Record<string, string | string[]> {
  const hop = hopByHop(headers);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || hop(name) || name === FORWARDED_BY) continue;
    out[name] = value;
  }
  out[FORWARDED_BY] = nodeId;
  // One id in both nodes' access logs.
  if (requestId !== undefined) out['x-request-id'] = requestId;
  return out;
}

/**
 * Many nodes (issue 15): a request that needs an instance's live session goes to the node that
 * owns it, streamed both ways with the same method, path, query and end-to-end headers
 * (Authorization and Idempotency-Key included, so the owner authenticates and deduplicates). Runs
 * after authentication, so a bad token is refused here before anything is forwarded.
 */
export class ForwardToOwner {
  private readonly agent: Agent;

  constructor(private readonly o: ForwardToOwnerOptions) {
    // One keep-alive pool per owner origin; a connect that does not succeed quickly means a dead node.
    const answerTimeout = o.answerTimeoutMs ?? 60_000;
    this.agent = new Agent({ connect: { timeout: o.connectTimeoutMs ?? 2_000 }, headersTimeout: answerTimeout, bodyTimeout: answerTimeout });
  }

  readonly middleware = async (ctx: Context, next: Next): Promise<void> => {
    const instanceId = ctx.state[LIVE_INSTANCE] as string | undefined;
    if (instanceId === undefined) return next();
    const decision = await decideForward(ctx.req.headers, instanceId, this.o.owners).catch((err: unknown) => {
      // The leases could not be read (the database is away): where the session lives is unknown.
      this.o.logger.warn({ err, instanceId }, 'session owner not found');
      throw this.unavailable('where this session lives cannot be read now; retry shortly');
    });
    if (!decision.forward) {
      if (decision.why === 'bad address') this.o.logger.warn({ instanceId }, 'session owner advertises no usable address: handled here');
      return next();
    }
    await this.forward(ctx, decision.origin, decision.node, instanceId);
  };

  private unavailable(message: string): DomainError {
    return new DomainError('unavailable', message, undefined, this.o.retryAfterSeconds);
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private async forward(ctx: Context, origin: string, node: string, instanceId: string): Promise<void> {
    const headers = ctx.req.headers;
    const read = ctx.state[FORWARD_BODY] as string | undefined;
    const hasBody = headers['content-length'] !== undefined ? headers['content-length'] !== '0' : headers['transfer-encoding'] !== undefined;
    const sent = forwardedHeaders(headers, this.o.nodeId, ctx.state.requestId as string | undefined);
    if (read !== undefined) {
      // Read here already: the same bytes, now of a known length.
      delete sent['transfer-encoding'];
      sent['content-length'] = String(Buffer.byteLength(read));
    }
    let answer;
    try {
      answer = await this.agent.request({
        origin,
        path: ctx.originalUrl,
        method: ctx.method as 'GET',
        headers: sent,
        body: read !== undefined ? read : hasBody ? ctx.req : null,
      });
    } catch (err) {
      // The owner is down or cut off: its lease lapses and the session moves, so a retry succeeds.
      this.o.logger.warn({ err, instanceId, node }, 'session owner unreachable');
      throw this.unavailable('the node holding this session does not answer; retry shortly');
    }
    ctx.status = answer.statusCode;
    const hop = hopByHop(answer.headers);
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined || hop(name)) continue;
      ctx.set(name, value);
    }
    if (answer.statusCode === 204 || answer.statusCode === 304 || ctx.method === 'HEAD') {
      // No body to pass on: drain it so the connection goes back to the pool.
      await answer.body.dump();
      return;
    }
    ctx.body = answer.body;
  }
}
