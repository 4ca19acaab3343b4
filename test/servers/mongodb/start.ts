import { startMongoTestServer } from './server.js';

/**
 * Starts the MongoDB test server alone and prints its MONGODB_URL, so a gateway or any client can
 * be pointed at it by hand: `npx tsx test/servers/mongodb/start.ts [port]`. In memory: stopping
 * it (Ctrl-C) forgets everything.
 */
const port = process.argv[2] ? Number(process.argv[2]) : 0;
const server = await startMongoTestServer({ port, database: 'gateway' });
console.log(`MONGODB_URL=${server.url}`);
const stop = (): void => {
  void server.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
