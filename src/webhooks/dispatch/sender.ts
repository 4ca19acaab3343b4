import { BoundedMap } from '../../infra/bounded-map.js';
import type { Clock } from '../../infra/clock.js';
import { checkOutboundUrl } from '../../infra/http/outbound-policy.js';
import type { DeliveryDoc } from '../deliveries/documents.js';
import type { Outcome } from '../deliveries/outcomes.js';
import { parseRetryAfter, retryDelayMs, verdictFor, type RetryTiming } from '../retry-policy.js';
import type { WebhookPost } from './post/port.js';

export interface SenderOptions {
  post: WebhookPost;
  clock: Clock;
  allowPrivate: boolean;
  timing: RetryTiming;
  random: () => number;
}

/**
 * One attempt: check the URL against the outbound policy, have it POSTed signed, and turn the
 * answer into an outcome (delivered, retry when, or failed for good).
 */
export class Sender {
  /** The policy's answer by URL (a pure function of it): refusal reason, or null when allowed. */
  private readonly refusals = new BoundedMap<string, string | null>(1024);

  constructor(private readonly options: SenderOptions) {}

  /** Resolves with the outcome, or null when the attempt was aborted by a stop (left pending). */
  async attempt(delivery: DeliveryDoc, key: Buffer, signal: AbortSignal): Promise<Outcome | null> {
    const refusal = this.refusalOf(delivery.url);
    if (refusal !== null) return { kind: 'failed', statusCode: null, error: `webhook URL refused: ${refusal}` };

    const timestampS = Math.floor(this.options.clock.now().getTime() / 1000);
    const request = { url: delivery.url, id: delivery._id, timestampS, body: delivery.body, key, ...(delivery.correlation_id ? { requestId: delivery.correlation_id } : {}) };
    const answer = await this.options.post.send(request, signal);
    switch (answer.kind) {
      case 'aborted':
        return null;
      case 'answered':
        return this.judge(delivery, answer.status, answer.excerpt, answer.retryAfter);
      case 'failed':
        // The name now resolves to an internal address: a policy refusal, not a passing fault.
        if (answer.code === 'EBLOCKEDADDRESS') return { kind: 'failed', statusCode: null, error: `webhook URL refused: ${answer.message}` };
        return this.retryOrGiveUp(delivery, null, answer.message || answer.code || 'network error');
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
