/**
 * Starts the EventStoreDB test server alone and prints its EVENTSTORE_URL, so a gateway or any
 * client can be pointed at it by hand:
 *
 *   npx tsx test/servers/eventstore/main.ts [--port 2113] [--no-batch-append]
 *
 * In-memory only: everything is gone when it stops (Ctrl-C).
 */
import { parseArgs } from 'node:util';
import { startEventStoreTestServer } from './server.js';

const { values } = parseArgs({ options: { port: { type: 'string' }, 'no-batch-append': { type: 'boolean' } } });
const port = values.port === undefined ? undefined : Number(values.port);
if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) throw new Error('--port must be a port number');

const server = await startEventStoreTestServer({ port, batchAppend: !values['no-batch-append'] });
console.log(`EVENTSTORE_URL=${server.url}`);
const stop = () => void server.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
