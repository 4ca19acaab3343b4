import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Leases } from '../../src/cluster/leases.js';
import { systemClock } from '../../src/infra/clock.js';
import { SecretBox } from '../../src/infra/crypto/secret-box.js';
import { ExpiringDocClaims } from '../../src/infra/doc-claims.js';
import { openDocumentStore } from '../../src/infra/docstore/open-document-store.js';
import type { DocumentStore } from '../../src/infra/docstore/port.js';
import { DeliveryRepo } from '../../src/webhooks/deliveries/delivery-repo.js';
import { DELIVERIES, ensureDeliveryIndexes, HOOKS, type DeliveryDoc, type HookDoc } from '../../src/webhooks/deliveries/documents.js';
import { Dispatcher } from '../../src/webhooks/dispatch/dispatcher.js';
import type { PostAnswer, PostRequest, WebhookPost } from '../../src/webhooks/dispatch/post/port.js';
import { Sender } from '../../src/webhooks/dispatch/sender.js';
import { SigningKeys } from '../../src/webhooks/dispatch/signing-keys.js';
import { sharedTestServerUrl } from '../servers/mongodb/targets.js';
import { waitFor } from '../support/sandbox.js';

const TTL_MS = 2000;
const PER_INSTANCE = 4;
const TOTAL = 8;
const INSTANCE = 'inst-retaken';
const URL = 'http://127.0.0.1:9/hook';
const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** The receiver, faked: while `hold` is set each POST waits for the test to answer it, whatever its signal says. */
class HeldPost implements WebhookPost {
  hold = true;
  /** Seqs in the order their POSTs started. */
  readonly sent: number[] = [];
  readonly held: { seq: number; signal: AbortSignal; answer: (a: PostAnswer) => void }[] = [];
  private inFlight = 0;
  peak = 0;

  async send(request: PostRequest, signal: AbortSignal): Promise<PostAnswer> {
    const seq = (JSON.parse(request.body) as { seq: number }).seq;
    this.sent.push(seq);
    this.peak = Math.max(this.peak, ++this.inFlight);
    try {
      if (!this.hold) return { kind: 'answered', status: 200, excerpt: '' };
      return await new Promise<PostAnswer>((answer) => this.held.push({ seq, signal, answer }));
    } finally {
      this.inFlight--;
    }
  }

  /** The held POSTs end now: as aborted when their signal aborted, as answered otherwise. */
  answerHeld(): void {
    for (const h of this.held.splice(0)) h.answer(h.signal.aborted ? { kind: 'aborted' } : { kind: 'answered', status: 200, excerpt: '' });
  }

  async close(): Promise<void> {}
}

/**
 * One key, at once: the real keys read the hook from the store on first use, and concurrent reads
 * answer in any order, so attempts started in seq order would reach the receiver out of it.
 */
class FixedKeys extends SigningKeys {
  private readonly key = randomBytes(32);
  override async forInstance(): Promise<Buffer> {
    return this.key;
  }
}

/** The store's leases, with a renewal the test can make fail once (the lane lapses) and the acquisitions counted. */
class LapsingLeases extends Leases {
  lapse = false;
  acquired = 0;
  /** Reads of the lanes the repo had started when the lane was taken for the second time. */
  readsAtRetake = Infinity;
  constructor(docs: DocumentStore, private readonly repo: CountingRepo) {
    super(docs, 'node-a', systemClock);
  }
  override async renew(name: string, token: number, ttlMs: number): Promise<boolean> {
    if (!this.lapse) return super.renew(name, token, ttlMs);
    // As if the renewal came too late and another node had taken the lease meanwhile.
    this.lapse = false;
    return false;
  }
  override async acquire(name: string, ttlMs: number): Promise<number | null> {
    const token = await super.acquire(name, ttlMs);
    if (token !== null && ++this.acquired === 2) this.readsAtRetake = this.repo.started;
    return token;
  }
}

/** The delivery log, with its lane reads counted as they start and end. */
class CountingRepo extends DeliveryRepo {
  started = 0;
  /** The highest start number among the reads that have returned. */
  lastEnded = 0;
  private async counted(read: () => Promise<DeliveryDoc[]>): Promise<DeliveryDoc[]> {
    const n = ++this.started;
    const docs = await read();
    this.lastEnded = Math.max(this.lastEnded, n);
    return docs;
  }
  override queued(instanceId: string, limit: number, afterSeq: number): Promise<DeliveryDoc[]> {
    return this.counted(() => super.queued(instanceId, limit, afterSeq));
  }
  override queuedAfter(lanes: readonly { instanceId: string; afterSeq: number }[], limit: number): Promise<DeliveryDoc[]> {
    return this.counted(() => super.queuedAfter(lanes, limit));
  }
}

const delivery = (seq: number): DeliveryDoc => ({
  _id: `evt_retaken_${seq}`,
  event_id: `retaken-${seq}`,
  instance_id: INSTANCE,
  seq,
  type: 'Message',
  pos: seq,
  url: URL,
  host: new globalThis.URL(URL).origin,
  body: JSON.stringify({ seq }),
  state: 'queued',
  attempts: 0,
  last_status_code: null,
  last_error: null,
  created_at: new Date().toISOString(),
  delivered_at: null,
  next_attempt_at: null,
  due_ms: 0,
  retry_host: null,
  horizon_from_ms: Date.now(),
});

/**
 * A node's webhook lane lapses while its first attempts hang, and the node takes the lane back
 * before those aborted attempts end (TEST_DOCSTORE=mongodb: the log and the leases on MongoDB).
 * The retaken lane must not go past them: once they end with nothing recorded they are still
 * queued in the log, and no later read of the lane would start before them again.
 */
describe('a webhook lane taken back while its aborted first attempts are still unfinished', function () {
  this.timeout(30_000);
  let dir: string;
  let docs: DocumentStore;
  let post: HeldPost;
  let dispatcher: Dispatcher | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lane-retaken-'));
    const mongo = process.env.TEST_DOCSTORE === 'mongodb' ? { MONGODB_URL: await sharedTestServerUrl(dir) } : {};
    docs = await openDocumentStore({ DATA_DIR: dir, ...mongo });
    await ensureDeliveryIndexes(docs);
    post = new HeldPost();
  });
  afterEach(async () => {
    post.hold = false;
    post.answerHeld();
    await dispatcher?.stop();
    dispatcher = undefined;
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sends them again at once after they end, before the deliveries after them', async () => {
    const box = new SecretBox(randomBytes(32));
    const hook: HookDoc = { _id: INSTANCE, url: URL, events: ['Message'], secret_sealed: box.seal(`whsec_${randomBytes(24).toString('base64')}`, `webhook-secret:${INSTANCE}`), seq: 0 };
    await docs.collection<HookDoc>(HOOKS).insertOne(hook);
    for (let seq = 1; seq <= TOTAL; seq++) await docs.collection<DeliveryDoc>(DELIVERIES).insertOne(delivery(seq));
    const repo = new CountingRepo(docs);
    const leases = new LapsingLeases(docs, repo);
    dispatcher = new Dispatcher({
      docs,
      repo,
      sender: new Sender({ post, clock: systemClock, allowPrivate: true, random: Math.random, timing: { baseMs: 20, maxMs: 200, horizonMs: 3_600_000 } }),
      keys: new FixedKeys(repo, box),
      clock: systemClock,
      logger,
      limits: { perInstance: PER_INSTANCE, perHost: 64, global: 64, laneHeld: 16, hostRetriesHeld: 16 },
      horizonMs: 3_600_000,
      stopGraceMs: 0,
      cluster: { leases, claims: new ExpiringDocClaims(docs, leases.nodeId, systemClock, TTL_MS), ttlMs: TTL_MS, clock: systemClock },
    });
    await dispatcher.start();

    // The lane's first attempts in flight, up to the bound, their receiver not answering.
    await waitFor(() => post.held.length === PER_INSTANCE, 'the first attempts in flight');
    expect(post.sent).to.deep.equal([1, 2, 3, 4]);

    // The claim lapses: the attempts are aborted (they hang on), the node takes the lane back and reads it.
    leases.lapse = true;
    await waitFor(() => repo.lastEnded > leases.readsAtRetake, 'the lane taken back and read again', 10 * TTL_MS);
    expect(post.held.every((h) => h.signal.aborted), 'attempts under the lapsed claim aborted').to.equal(true);

    // The aborted attempts end now, with nothing recorded; the receiver answers from here on.
    post.hold = false;
    const endedAt = Date.now();
    post.answerHeld();
    const log = docs.collection<DeliveryDoc>(DELIVERIES);
    // No other lapse comes in this test: on the old code 1-4 stay queued (sent again only at the next lapse or a restart).
    const delivered = async () => (await log.find({ instance_id: INSTANCE, state: 'delivered' })).map((d) => d.seq).sort((a, b) => a - b);
    await waitFor(async () => (await delivered()).length === TOTAL, 'every delivery recorded delivered', 10_000).catch(async (err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}: delivered ${JSON.stringify(await delivered())}, sent after the lapse ${JSON.stringify(post.sent.slice(PER_INSTANCE))}`);
    });
    const tookMs = Date.now() - endedAt;

    // After the lapse, the first attempts start in seq order: the aborted ones again first, then the rest.
    expect(post.sent.slice(PER_INSTANCE)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(post.peak, 'first attempts in flight together').to.be.at.most(PER_INSTANCE);
    // Well within a lease TTL: not left to a later lapse of the claim.
    expect(tookMs).to.be.below(TTL_MS);
    console.log(`      lane retaken: the aborted attempts sent again and all ${TOTAL} recorded ${tookMs} ms after they ended`);
  });
});
