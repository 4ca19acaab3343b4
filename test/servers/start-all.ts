/**
 * `npm run test-servers`: starts the EventStoreDB and MongoDB test servers (test tools, in memory;
 * see the README in each folder) and prints the two URLs, so a gateway or any client can be pointed
 * at them by hand:
 *
 *   npm run test-servers
 *   EVENTSTORE_URL=... MONGODB_URL=... MESSAGING_NETWORK=sandbox npm start
 *
 * Ctrl-C stops both; everything they held is gone.
 */
import { startEventStoreTestServer } from './eventstore/server.js';
import { startMongoTestServer } from './mongodb/server.js';

const eventstore = await startEventStoreTestServer();
const mongodb = await startMongoTestServer({ database: 'gateway' });
console.log(`EVENTSTORE_URL=${eventstore.url}`);
console.log(`MONGODB_URL=${mongodb.url}`);
const stop = () => void Promise.all([eventstore.close(), mongodb.close()]).then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
