import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IDEMPOTENCY_KEYS, IdempotencyStore, KEY_TTL_MS, LEASE_MS } from '../../src/api/idempotency/idempotency-store.js';
import { canonicalJson } from '../../src/api/idempotency/request-key.js';
import { DomainError } from '../../src/domain/errors.js';
import { SecretBox } from '../../src/infra/crypto/secret-box.js';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';

describe('IdempotencyStore', () => {
  let dir: string;
  let docs: EmbeddedDocumentStore;
  let now = Date.parse('2026-01-01T00:00:00Z');
  let store: IdempotencyStore;
  const answer = { status: 200, body: { token: 'it_secret_token', id: 'x' }, headers: { 'x-fallback': 'text' } };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'idem-'));
    docs = await EmbeddedDocumentStore.open({ path: dir });
    store = new IdempotencyStore(docs, new SecretBox(randomBytes(32)), { now: () => new Date(now) });
    await store.setup();
  });
  afterEach(async () => {
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  const conflictOf = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.fail('expected 409'),
      (err: unknown) => err as DomainError,
    );

  it('given a key answered, when the same request comes, then the answer is replayed', async () => {
    expect(await store.claim('k1', 'acc', 'fp')).to.deep.equal({ kind: 'run' });
    await store.answer('k1', answer);
    expect(await store.claim('k1', 'acc', 'fp')).to.deep.equal({ kind: 'replay', answer });
  });

  it('keeps the answer sealed: the stored document carries no part of it in clear', async () => {
    await store.claim('k2', 'acc', 'fp');
    await store.answer('k2', answer);
    const doc = await docs.collection(IDEMPOTENCY_KEYS).findOne({ _id: 'k2' });
    expect(JSON.stringify(doc)).to.not.include('it_secret_token');
  });

  it('given a key in flight, when it comes again, then 409 with Retry-After; after the lease it may be taken over', async () => {
    await store.claim('k3', 'acc', 'fp');
    const busy = await conflictOf(store.claim('k3', 'acc', 'fp'));
    expect(busy.type).to.equal('conflict');
    expect(busy.retryAfterSeconds).to.equal(1);
    now += LEASE_MS + 1;
    expect(await store.claim('k3', 'acc', 'fp')).to.deep.equal({ kind: 'run' });
  });

  it('given a key, when another request uses it, then 409 conflict', async () => {
    await store.claim('k4', 'acc', 'fp');
    await store.answer('k4', answer);
    expect((await conflictOf(store.claim('k4', 'acc', 'other'))).type).to.equal('conflict');
  });

  it('a released key runs again', async () => {
    await store.claim('k5', 'acc', 'fp');
    await store.release('k5');
    expect(await store.claim('k5', 'acc', 'fp')).to.deep.equal({ kind: 'run' });
  });

  it('sweeps keys older than 24 hours, and only those', async () => {
    await store.claim('old', 'acc', 'fp');
    await store.answer('old', answer);
    now += KEY_TTL_MS / 2;
    await store.claim('young', 'acc', 'fp');
    now += KEY_TTL_MS / 2;
    expect(await store.sweep()).to.equal(1);
    expect(await docs.collection(IDEMPOTENCY_KEYS).count()).to.equal(1);
    expect(await store.claim('old', 'acc', 'other body is fine now')).to.deep.equal({ kind: 'run' });
  });

  it('fingerprints JSON independently of key order', () => {
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null })).to.equal(canonicalJson({ a: null, b: [1, { c: 2, d: 1 }] }));
    expect(canonicalJson({ a: 1 })).to.not.equal(canonicalJson({ a: '1' }));
  });
});
