import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandHandler } from '../../src/commands/command-handler.js';
import { instanceDecider, type InstanceCommand } from '../../src/domain/instance/instance-decider.js';
import { instanceStream } from '../../src/domain/instance/events.js';
import { EmbeddedEventStore } from '../../src/infra/eventstore/embedded/embedded-event-store.js';
import { randomIds } from '../../src/infra/ids.js';

/** Several nodes' timers on one log: each decides what is due, one append wins, the rest no-op. */
describe('billing timers racing on one log', () => {
  let dir: string;
  let store: EmbeddedEventStore;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-race-'));
    store = await EmbeddedEventStore.open({ path: dir });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('records a due transition once however many timers act on it at once', async () => {
    const clock = { now: () => new Date('2026-12-02T00:00:00.000Z') };
    const context = { actor: { kind: 'system' as const }, correlationId: 'test' };
    const stream = instanceStream('3ERACE');
    await new CommandHandler(store, randomIds, clock).handle(
      stream,
      instanceDecider,
      {
        type: 'CreateInstance',
        data: {
          instance_id: '3ERACE',
          account_id: 'acc',
          name: 'race',
          token_hash: 'h',
          webhook_secret_sealed: 's',
          reject_calls: false,
          auto_read_messages: false,
          labels: {},
          expired_at: '2026-12-01T00:00:00.000Z',
          webhook: {},
        },
      },
      context,
    );
    const tick: InstanceCommand = { type: 'ReachDueTime', data: { at: clock.now().toISOString(), rule: { renewsItself: true, periodMs: 1000, graceMs: 1000 } } };
    // One handler per node: their caches and locks are their own; only the store is shared.
    const nodes = Array.from({ length: 4 }, () => new CommandHandler(store, randomIds, clock));
    const results = await Promise.all(nodes.map((node) => node.handle(stream, instanceDecider, tick, context)));
    const types = (await store.readStream(stream)).map((e) => e.type);
    expect(types).to.deep.equal(['InstanceCreated', 'TrialExpired']);
    expect(results.filter((r) => r.events.length > 0)).to.have.length(1);
  });
});
