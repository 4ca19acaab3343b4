import { EventStoreDBClient, jsonEvent, START } from '@eventstore/db-client';
import { startEventStoreTestServer } from './server.js';
const server = await startEventStoreTestServer();
const client = EventStoreDBClient.connectionString(server.url);
await client.appendToStream('a', [1,2,3,4,5,6,7,8,9,10].map((i) => jsonEvent({ type: 'T' + i, data: {} })));
for (const round of [1, 2]) {
const sub = client.subscribeToAll({ fromPosition: START });
const t0 = performance.now();
let last = t0;
sub.on('data', (e) => { const now = performance.now(); console.log(round, e.event?.type, (now - last).toFixed(3), 'ms'); last = now; });
await new Promise((r) => setTimeout(r, 300));
await sub.unsubscribe();
}
const t1 = performance.now();
for await (const e of client.readAll({ fromPosition: START })) console.log('read', e.event?.type, (performance.now() - t1).toFixed(3));
await client.dispose(); await server.close();
