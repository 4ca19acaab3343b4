import { expect } from 'chai';
import { ExpiringDocClaims, singleNodeClaims } from '../../src/infra/doc-claims.js';
import type { DocumentStore } from '../../src/infra/docstore/port.js';
import { MongoDocumentStore } from '../../src/infra/docstore/mongodb/mongodb-document-store.js';
import { freshDatabase, testServerTarget, type MongoTarget } from '../servers/mongodb/targets.js';

/**
 * Job claims on the shared document store (the MongoDB adapter over the wire-protocol test
 * server): the helpdesk bridge, queued sends and webhook retries claim each job this way.
 */
describe('job claims on a shared MongoDB (two nodes)', () => {
  let server: MongoTarget;
  let store: DocumentStore;
  let nowMs = 1_000_000;
  const clock = { now: () => new Date(nowMs) };
  const TTL = 5000;
  let a: ExpiringDocClaims;
  let b: ExpiringDocClaims;

  before(async () => (server = await testServerTarget()));
  after(async () => server?.stop());
  beforeEach(async () => {
    store = await MongoDocumentStore.open({ url: server.url(freshDatabase('claims')) });
    a = new ExpiringDocClaims(store, 'node-a', clock, TTL);
    b = new ExpiringDocClaims(store, 'node-b', clock, TTL);
    await store.collection('jobs').insertOne({ _id: 'j1', state: 'pending', attempts: 0 });
  });
  afterEach(async () => store.close());

  it('gives a job to exactly one of two nodes claiming it at once', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `r${i}`);
    for (const _id of ids) await store.collection('jobs').insertOne({ _id, state: 'pending', attempts: 0 });
    const won = await Promise.all(ids.flatMap((id) => [a.claim('jobs', id, { state: 'pending' }), b.claim('jobs', id, { state: 'pending' })]));
    for (let i = 0; i < ids.length; i++) expect([won[2 * i], won[2 * i + 1]].filter(Boolean), ids[i]).to.have.length(1);
  });

  it('refuses a job held by another node, and one no longer as read', async () => {
    expect(await a.claim('jobs', 'j1', { state: 'pending' })).to.not.equal(null);
    expect(await b.claim('jobs', 'j1', { state: 'pending' })).to.equal(null);
    const seen = await store.collection('jobs').findOne({ _id: 'j1' });
    expect(b.heldElsewhere(seen as Record<string, unknown>)).to.equal(true);
    expect(a.heldElsewhere(seen as Record<string, unknown>)).to.equal(false);
    nowMs += TTL + 1;
    expect(await b.claim('jobs', 'j1', { state: 'done' })).to.equal(null);
  });

  it('lets another node take a job whose claim lapsed, and fences the first node out', async () => {
    const first = await a.claim('jobs', 'j1', { state: 'pending' });
    nowMs += TTL + 1;
    const second = await b.claim('jobs', 'j1', { state: 'pending' });
    expect(second).to.not.equal(null);
    // The first node comes back and writes its outcome: nothing changes, and it cannot renew.
    const late = await store.collection('jobs').updateOne({ ...first!.fence, _id: 'j1' }, { $set: { state: 'done', ...first!.ended } });
    expect(late.matchedCount).to.equal(0);
    expect(await first!.renew()).to.equal(false);
    const done = await store.collection('jobs').updateOne({ ...second!.fence, _id: 'j1' }, { $set: { state: 'done', ...second!.ended } });
    expect(done.matchedCount).to.equal(1);
    expect(await store.collection('jobs').findOne({ _id: 'j1' })).to.include({ state: 'done', claim_token: null, claim_until: 0 });
  });

  it('keeps a renewed claim past its first lapse, and frees a released one at once', async () => {
    const claim = await a.claim('jobs', 'j1');
    nowMs += TTL - 1;
    expect(await claim!.renew()).to.equal(true);
    nowMs += TTL - 1;
    expect(await b.claim('jobs', 'j1')).to.equal(null);
    await claim!.release();
    expect(await b.claim('jobs', 'j1')).to.not.equal(null);
  });

  it('on one node claims nothing and writes nothing', async () => {
    const claim = await singleNodeClaims.claim('jobs', 'j1');
    expect(claim?.fence).to.deep.equal({});
    expect(await store.collection('jobs').findOne({ _id: 'j1' })).to.deep.equal({ _id: 'j1', state: 'pending', attempts: 0 });
  });
});
