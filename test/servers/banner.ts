/**
 * `npm test` runs mocha twice; this names each run in the output (`tsx test/servers/banner.ts
 * embedded|adapters|alone`), and says where the adapters' run really goes: the test servers, or the
 * real EventStoreDB / MongoDB at EVENTSTORE_URL / MONGODB_URL when those are set.
 */
const run = process.argv[2];
const on = (url: string | undefined, real: string, test: string) => (url ? `${real} at ${url.replace(/\/\/[^@/]*@/, '//***@')}` : test);

if (run === 'embedded') {
  console.log('\n# suites on the embedded stores (LMDB event log and document store in DATA_DIR)');
} else if (run === 'adapters') {
  const events = on(process.env.EVENTSTORE_URL, 'the real EventStoreDB', 'the EventStoreDB gRPC test server');
  const docs = on(process.env.MONGODB_URL, 'the real MongoDB', 'the MongoDB wire-protocol test server');
  console.log(`\n# suites on the adapters: event log on ${events}, read models on ${docs} (TEST_EVENTSTORE=esdb TEST_DOCSTORE=mongodb)`);
  const unset = ['EVENTSTORE_URL', 'MONGODB_URL'].filter((name) => !process.env[name]);
  if (unset.length > 0) console.log(`# on real servers: skipped for ${unset.join(' and ')}, not set (point them at an EventStoreDB 20+ / KurrentDB and a MongoDB to run there)`);
} else if (run === 'alone') {
  console.log('\n# suites whose deadlines are their subject, on the embedded stores, run on their own after both passes');
} else {
  console.error('usage: tsx test/servers/banner.ts embedded|adapters|alone');
  process.exit(2);
}
