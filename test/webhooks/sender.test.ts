import { expect } from 'chai';
import type { DeliveryDoc } from '../../src/webhooks/deliveries/documents.js';
import type { PostAnswer, PostRequest, WebhookPost } from '../../src/webhooks/dispatch/post/port.js';
import { Sender } from '../../src/webhooks/dispatch/sender.js';
import { FakeClock } from './support/harness.js';

/** A WebhookPost that answers what the test says and remembers what it was asked. */
class ScriptedPost implements WebhookPost {
  readonly asked: PostRequest[] = [];
  answer: PostAnswer = { kind: 'answered', status: 204, excerpt: '' };
  async send(request: PostRequest): Promise<PostAnswer> {
    this.asked.push(request);
    return this.answer;
  }
  async close(): Promise<void> {}
}

const timing = { baseMs: 1000, maxMs: 60_000, horizonMs: 3_600_000 };

function delivery(over: Partial<DeliveryDoc> = {}): DeliveryDoc {
  return {
    _id: 'evt_0123456789abcdef0123456789abcdef',
    event_id: '01234567-89ab-cdef-0123-456789abcdef',
    instance_id: 'i1',
    seq: 1,
    type: 'Message',
    pos: 1,
    url: 'https://hooks.example.com/in',
    host: 'https://hooks.example.com',
    body: '{"a":1}',
    state: 'queued',
    attempts: 0,
    last_status_code: null,
    last_error: null,
    created_at: new Date(0).toISOString(),
    delivered_at: null,
    next_attempt_at: null,
    due_ms: 0,
    retry_host: null,
    // Retries stop an hour after now.
    horizon_from_ms: Date.now(),
    ...over,
  };
}

describe('webhook sender (what an answer means)', () => {
  let post: ScriptedPost;
  let clock: FakeClock;
  let sender: Sender;
  const key = Buffer.alloc(32, 7);
  const attempt = (d = delivery()) => sender.attempt(d, key, new AbortController().signal);

  beforeEach(() => {
    post = new ScriptedPost();
    clock = new FakeClock();
    sender = new Sender({ post, clock, allowPrivate: false, timing, random: () => 0.5 });
  });

  it('asks for the stored body, signed with the instance key at the clock time', async () => {
    expect(await attempt()).to.deep.equal({ kind: 'delivered', statusCode: 204 });
    expect(post.asked).to.have.length(1);
    expect(post.asked[0]).to.deep.include({ url: 'https://hooks.example.com/in', id: delivery()._id, body: '{"a":1}', timestampS: Math.floor(clock.now().getTime() / 1000) });
    expect(Buffer.from(post.asked[0]!.key).equals(key)).to.equal(true);
  });

  it('refuses a URL the outbound policy forbids without sending, every time it is asked', async () => {
    for (const url of ['http://hooks.example.com/in', 'https://127.0.0.1/in', 'https://metadata.google.internal/x']) {
      for (let i = 0; i < 2; i++) {
        const outcome = await attempt(delivery({ url }));
        expect(outcome).to.include({ kind: 'failed', statusCode: null });
        expect((outcome as { error: string }).error).to.match(/^webhook URL refused: /);
      }
    }
    expect(post.asked).to.have.length(0);
  });

  it('fails for good when the name turned out to point inside (connect-time refusal), and retries other network faults', async () => {
    post.answer = { kind: 'failed', code: 'EBLOCKEDADDRESS', message: 'hooks.example.com resolves to a non-public address' };
    expect(await attempt()).to.deep.equal({ kind: 'failed', statusCode: null, error: 'webhook URL refused: hooks.example.com resolves to a non-public address' });
    post.answer = { kind: 'failed', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' };
    expect(await attempt()).to.deep.include({ kind: 'retry', statusCode: null, error: 'connect ECONNREFUSED' });
    post.answer = { kind: 'failed', code: 'ECONNRESET', message: '' };
    expect(await attempt()).to.deep.include({ kind: 'retry', error: 'ECONNRESET' });
  });

  it('judges statuses: 2xx delivered, 4xx final but 408/425/429, 5xx retried after Retry-After at the least', async () => {
    const answered = (status: number, retryAfter?: string): PostAnswer => ({ kind: 'answered', status, excerpt: 'why', ...(retryAfter ? { retryAfter } : {}) });
    post.answer = answered(400);
    expect(await attempt()).to.deep.equal({ kind: 'failed', statusCode: 400, error: 'HTTP 400: why' });
    for (const status of [408, 425, 429, 500, 503]) {
      post.answer = answered(status);
      expect(await attempt()).to.include({ kind: 'retry', statusCode: status });
    }
    post.answer = answered(503, '30');
    const outcome = (await attempt()) as { dueMs: number };
    expect(outcome.dueMs - clock.now().getTime()).to.equal(30_000);
  });

  it('leaves an aborted attempt uncounted, and gives up at the retry horizon', async () => {
    post.answer = { kind: 'aborted' };
    expect(await attempt()).to.equal(null);
    post.answer = { kind: 'answered', status: 500, excerpt: '' };
    const old = delivery({ horizon_from_ms: clock.now().getTime() - timing.horizonMs });
    expect(await attempt(old)).to.deep.equal({ kind: 'failed', statusCode: 500, error: 'HTTP 500 (retry horizon reached)' });
  });
});
