import { startEventStoreTestServer, type EventStoreTestServer } from './server.js';

/** One server per data dir: a gateway restarted on the same dir finds its log again. */
const servers = new Map<string, Promise<EventStoreTestServer>>();
let announced = false;

/**
 * TEST_EVENTSTORE=esdb: the EVENTSTORE_URL a test gateway on `dataDir` uses, on the EventStoreDB
 * gRPC test server (a fresh log per data dir, as the embedded store has), or on the real server at
 * EVENTSTORE_URL when one is set.
 */
export async function eventStoreFor(dataDir: string): Promise<string> {
  const real = process.env.EVENTSTORE_URL;
  if (real) return real;
  if (!announced) console.log('    (test gateways keep their event log on the EventStoreDB gRPC test server: TEST_EVENTSTORE=esdb)');
  announced = true;
  let server = servers.get(dataDir);
  if (!server) servers.set(dataDir, (server = startEventStoreTestServer()));
  return (await server).url;
}

/** Stops the server of a data dir that is gone. */
export async function releaseEventStore(dataDir: string): Promise<void> {
  const server = servers.get(dataDir);
  servers.delete(dataDir);
  await (await server)?.close();
}
