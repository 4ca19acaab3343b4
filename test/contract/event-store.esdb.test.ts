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
