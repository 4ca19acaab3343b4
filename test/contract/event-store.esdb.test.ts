import { execSync } from 'node:child_process';
import { EsdbEventStore } from '../../src/infra/eventstore/esdb/esdb-event-store.js';
import { startEventStoreTestServer } from '../servers/eventstore/server.js';
import { eventStoreContract, type ManualClock } from './event-store.contract.js';

function manualClock(start = Date.parse('2024-05-01T10:00:00.000Z')): ManualClock {
  let at = start;
  return { now: () => at, advance: (ms) => void (at += ms) };
}

// A fresh test server per test: the contract starts from an empty log. The server's clock is
// the store clock here (EventStoreDB stamps `created` itself), so the maxAge tests run too.
eventStoreContract('EventStoreDB adapter over the gRPC test server', async () => {
  const clock = manualClock();
  const server = await startEventStoreTestServer({ now: clock.now });
  const store = await EsdbEventStore.open({ url: server.url });
  return {
    store,
    clock,
    async cleanup() {
      await store.close();
      await server.close();
    },
  };
});

// Without BatchAppend the client sends one Append call per write, as against EventStoreDB 20.x.
eventStoreContract('EventStoreDB adapter over the gRPC test server, without BatchAppend', async () => {
  const clock = manualClock();
  const server = await startEventStoreTestServer({ now: clock.now, batchAppend: false });
  const store = await EsdbEventStore.open({ url: server.url });
  return {
    store,
    clock,
    async cleanup() {
      await store.close();
      await server.close();
    },
  };
});

// A real EventStoreDB or KurrentDB when EVENTSTORE_URL names one. The contract starts every test
// from an empty log, which a server only is when fresh: EVENTSTORE_RESET_COMMAND (for instance
// `docker restart esdb-mem`, a server started with --mem-db) is run before each test.
const realServer = process.env.EVENTSTORE_URL;
if (realServer) {
  eventStoreContract('EventStoreDB at EVENTSTORE_URL', async () => {
    const reset = process.env.EVENTSTORE_RESET_COMMAND;
    if (reset) execSync(reset, { stdio: 'ignore' });
    const store = await openWhenUp(realServer, reset ? 30_000 : 0);
    if ((await store.headPosition()) !== -1n) {
      await store.close();
      throw new Error('EVENTSTORE_URL holds events already: the contract needs an empty log per test (set EVENTSTORE_RESET_COMMAND)');
    }
    return { store, cleanup: () => store.close() };
  });
} else {
  describe('EventStore contract: EventStoreDB at EVENTSTORE_URL', () => {
    it('skipped: EVENTSTORE_URL is not set (point it at an EventStoreDB 20+ or KurrentDB server to run the contract there)');
  });
}

async function openWhenUp(url: string, waitMs: number): Promise<EsdbEventStore> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await EsdbEventStore.open({ url });
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
