import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import { systemClock } from '../../src/infra/clock.js';
import { Leases } from '../../src/cluster/leases.js';
import { LeasedProjections, PROJECTIONS_LEASE } from '../../src/cluster/leased-projections.js';
import { CHECKPOINTS, PROGRESS_FLOOR, type ProjectionRunner } from '../../src/projections/runner.js';

const logger = pino({ level: 'silent' });

describe('LeasedProjections on a node that does not write the read models', () => {
  let dir: string;
  let docs: EmbeddedDocumentStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'leased-'));
    docs = await EmbeddedDocumentStore.open({ path: join(dir, 'docs') });
  });

  afterEach(async () => {
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers a projection's position as the higher of its checkpoint and the floor every projection passed", async () => {
    // Another node holds the lease and has stored: `chats` at 7, the floor at 9 (`idle` never wrote its own).
    expect(await new Leases(docs, 'writer', systemClock).acquire(PROJECTIONS_LEASE, 60_000)).to.not.equal(null);
    const checkpoints = docs.collection<{ _id: string; position: string }>(CHECKPOINTS);
    await checkpoints.insertOne({ _id: 'chats', position: '7' });
    await checkpoints.insertOne({ _id: 'messages', position: '12' });
    await checkpoints.insertOne({ _id: PROGRESS_FLOOR, position: '9' });
    const dryRunner = { start: async () => undefined, stop: async () => undefined } as unknown as ProjectionRunner;
    const follower = new LeasedProjections({ leases: new Leases(docs, 'follower', systemClock), docs, ttlMs: 60_000, names: ['chats', 'messages', 'idle'], runner: () => dryRunner, logger, pollMs: 5 });
    await follower.start();
    try {
      expect(follower.leading).to.equal(false);
      expect([follower.position('chats'), follower.position('messages'), follower.position('idle')]).to.deep.equal([9n, 12n, 9n]);
      expect(follower.hasReached(9n)).to.equal(true);
      expect(follower.hasReached(10n)).to.equal(false);
      // The floor moves on: a waiter is answered from the next read of the stored positions.
      const waiting = follower.waitFor(11n, ['idle'], 5_000);
      await checkpoints.replaceOne({ _id: PROGRESS_FLOOR }, { _id: PROGRESS_FLOOR, position: '11' });
      expect(await waiting).to.equal(true);
    } finally {
      await follower.stop();
    }
  });
});
