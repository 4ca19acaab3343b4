import { benchDocumentStore } from './document-store.js';
import { benchEventStore } from './event-store.js';
import { benchHttp } from './http.js';

/** `npm run bench`: every measurement with its same-run baseline and target. */
const suites: [string, () => Promise<void>][] = [
  ['event store', benchEventStore],
  ['document store', benchDocumentStore],
  ['http', benchHttp],
];
const only = process.argv[2];
for (const [name, run] of suites) {
  if (only && !name.includes(only)) continue;
  console.log(`# ${name}`);
  await run();
}
