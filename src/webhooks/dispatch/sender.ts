import { AxiosError, type AxiosInstance } from 'axios';
import type { Readable } from 'node:stream';
import { BoundedMap } from '../../infra/bounded-map.js';
import type { Clock } from '../../infra/clock.js';
import { checkOutboundUrl } from '../../infra/http/outbound-policy.js';
import type { DeliveryDoc } from '../deliveries/documents.js';
import type { Outcome } from '../deliveries/outcomes.js';
import { parseRetryAfter, retryDelayMs, verdictFor, type RetryTiming } from '../retry-policy.js';
import { signedHeaders } from '../signing.js';

export interface SenderOptions {
  /** Set up with responseType 'stream', validateStatus accepting all, JSON content type, the timeout. */
  http: AxiosInstance;
  clock: Clock;
  allowPrivate: boolean;
  timing: RetryTiming;
  random: () => number;
}

/** Enough of an error answer to explain it in the delivery log. */
const EXCERPT_BYTES = 200;
/** Past this, the rest of an answer is not read (the connection is dropped instead). */
const DRAIN_LIMIT = 64 * 1024;

/**
 * One attempt: sign, POST, and turn the answer into an outcome. The body is sent as the exact
 * stored bytes, so every attempt of a delivery carries the same body and signature input.
 */
export class Sender {
  /** The policy's answer by URL (a pure function of it): refusal reason, or null when allowed. */
  private readonly refusals = new BoundedMap<string, string | null>(1024);

  constructor(private readonly options: SenderOptions) {}

  /** Resolves with the outcome, or null when the attempt was aborted by a stop (left pending). */
  async attempt(delivery: DeliveryDoc, key: Buffer, signal: AbortSignal): Promise<Outcome | null> {
    const refusal = this.refusalOf(delivery.url);
    if (refusal !== null) return { kind: 'failed', statusCode: null, error: `webhook URL refused: ${refusal}` };

    const body = Buffer.from(delivery.body, 'utf8');
    const timestampS = Math.floor(this.options.clock.now().getTime() / 1000);
    try {
      // The instance carries the constant settings (JSON, stream answers, every status judged here).
      // request() rather than post(): post merges its arguments into a config first, one more
      // pass over every setting on each attempt.
      const res = await this.options.http.request<Readable>({
        url: delivery.url,
        method: 'post',
        data: body,
        headers: signedHeaders(key, delivery._id, timestampS, delivery.body),
        signal,
      });
      // A receiver that answered and then broke its body off has still answered.
      const excerpt = await drain(res.data, res.status >= 300).catch(() => '');

      const retryAfter = res.headers['retry-after'];
      return this.judge(delivery, res.status, excerpt, typeof retryAfter === 'string' ? retryAfter : undefined);
    } catch (err) {
      if (signal.aborted) return null;
      return this.networkFailure(delivery, err);
    }
  }

  /** The URL is checked on every attempt (the policy may be stricter than when it was configured), parsed once. */
  private refusalOf(url: string): string | null {
    let refusal = this.refusals.get(url);
    if (refusal === undefined) {
      const verdict = checkOutboundUrl(url, this.options.allowPrivate);
      refusal = verdict.ok ? null : verdict.reason;
      this.refusals.set(url, refusal);
    }
    return refusal;
  }

  private judge(delivery: DeliveryDoc, status: number, excerpt: string, retryAfter: string | undefined): Outcome {
    const verdict = verdictFor(status);
    if (verdict === 'delivered') return { kind: 'delivered', statusCode: status };
    const error = excerpt ? `HTTP ${status}: ${excerpt}` : `HTTP ${status}`;
    if (verdict === 'final') return { kind: 'failed', statusCode: status, error };
    return this.retryOrGiveUp(delivery, status, error, retryAfter);
  }

  private networkFailure(delivery: DeliveryDoc, err: unknown): Outcome {
    const cause = err instanceof AxiosError && err.cause ? err.cause : err;
    const code = (cause as { code?: unknown }).code;
    const message = err instanceof Error ? err.message : String(err);
    // The name now resolves to an internal address: a policy refusal, not a passing fault.
    if (code === 'EBLOCKEDADDRESS') return { kind: 'failed', statusCode: null, error: `webhook URL refused: ${message}` };
    return this.retryOrGiveUp(delivery, null, message || String(code ?? 'network error'));
  }

  private retryOrGiveUp(delivery: DeliveryDoc, statusCode: number | null, error: string, retryAfter?: string): Outcome {
    const { timing, random, clock } = this.options;
    const nowMs = clock.now().getTime();
    const dueMs = nowMs + retryDelayMs(timing, delivery.attempts + 1, random, parseRetryAfter(retryAfter, nowMs));
    if (dueMs > delivery.horizon_from_ms + timing.horizonMs) {
      return { kind: 'failed', statusCode, error: `${error} (retry horizon reached)` };
    }
    return { kind: 'retry', statusCode, error, dueMs };
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
