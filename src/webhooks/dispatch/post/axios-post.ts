import { AxiosError, type AxiosInstance } from 'axios';
import type { Readable } from 'node:stream';
import { leanAxios } from '../../../infra/http/lean-axios.js';
import { createOutboundAgent } from '../../../infra/http/outbound-agent.js';
import { undiciAdapter } from '../../../infra/http/undici-axios-adapter.js';
import { signedHeaders } from '../../signing.js';
import type { PostAnswer, PostRequest, WebhookPost } from './port.js';

export interface PostSettings {
  /** ALLOW_PRIVATE_TARGETS: skip the connect-time address check. */
  allowPrivate: boolean;
  /** Keep-alive connections per receiver origin (the dispatcher's per-host cap). */
  perHost: number;
  /** Per attempt; CONTRACT.md says 10 s. */
  timeoutMs: number;
}

/** Enough of an error answer to explain it in the delivery log. */
const EXCERPT_BYTES = 200;
/** Past this, the rest of an answer is not read (the connection is dropped instead). */
const DRAIN_LIMIT = 64 * 1024;

/**
 * Webhook POSTs through axios over an undici pool per receiver origin: keep-alive connections,
 * and names checked against the outbound policy each time a connection is opened. The body goes
 * out as the exact stored bytes, so every attempt of a delivery carries the same signed input.
 */
export class AxiosPost implements WebhookPost {
  private readonly agent;
  private readonly http: AxiosInstance;

  constructor(settings: PostSettings) {
    this.agent = createOutboundAgent({ allowPrivate: settings.allowPrivate, connectionsPerOrigin: settings.perHost, timeoutMs: settings.timeoutMs });
    this.http = leanAxios({
      adapter: undiciAdapter(this.agent),
      // Bodies go out as the stored bytes and answers are drained, not parsed: nothing to transform.
      transformRequest: [],
      transformResponse: [],
      responseType: 'stream',
      // Every status is an answer for the retry policy to judge, and a redirect is not a 2xx.
      validateStatus: () => true,
      maxRedirects: 0,
      timeout: settings.timeoutMs,
      headers: { 'content-type': 'application/json', 'user-agent': 'messaging-gateway-webhooks/1.0' },
    });
  }

  async send(request: PostRequest, signal: AbortSignal): Promise<PostAnswer> {
    const key = Buffer.from(request.key.buffer, request.key.byteOffset, request.key.byteLength);
    try {
      // request() rather than post(): post merges its arguments into a config first, one more
      // pass over every setting on each attempt.
      const res = await this.http.request<Readable>({
        url: request.url,
        method: 'post',
        data: Buffer.from(request.body, 'utf8'),
        headers: request.requestId
          ? { ...signedHeaders(key, request.id, request.timestampS, request.body), 'x-request-id': request.requestId }
          : signedHeaders(key, request.id, request.timestampS, request.body),
        signal,
      });
      // A receiver that answered and then broke its body off has still answered. The timeout
      // covers the body too (a trickled one is cut off), so the answer stands with what came.
      const excerpt = await drain(res.data, res.status >= 300).catch(() => '');
      const retryAfter = res.headers['retry-after'];
      return { kind: 'answered', status: res.status, excerpt, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) };
    } catch (err) {
      if (signal.aborted) return { kind: 'aborted' };
      const cause = err instanceof AxiosError && err.cause ? err.cause : err;
      const code = (cause as { code?: unknown } | null)?.code;
      const message = err instanceof Error ? err.message : String(err);
      return { kind: 'failed', ...(typeof code === 'string' ? { code } : {}), message };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** undici's body can discard itself without handing over each chunk. */
type Dumpable = Readable & { dump?: (options: { limit: number }) => Promise<void> };

/** Reads the answer so the connection can be reused; keeps the start of it when asked. */
async function drain(body: Dumpable, keep: boolean): Promise<string> {
  if (!keep && body.dump) {
    await body.dump({ limit: DRAIN_LIMIT });
    return '';
  }
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let read = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    read += chunk.length;
    if (keep && keptBytes < EXCERPT_BYTES) {
      kept.push(chunk.subarray(0, EXCERPT_BYTES - keptBytes));
      keptBytes += Math.min(chunk.length, EXCERPT_BYTES - keptBytes);
    }
    if (read > DRAIN_LIMIT) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(kept).toString('utf8').replace(/\s+/g, ' ').trim();
}
