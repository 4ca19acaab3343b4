import { benchChats } from './chats.js';
import { benchCluster } from './cluster.js';
import { benchDocumentStore } from './document-store.js';
import { benchEventStore } from './event-store.js';
import { benchExport } from './export.js';
import { benchHttp } from './http.js';
import { benchIngest } from './ingest.js';
import { benchMedia } from './media.js';
import { benchMessages } from './messages.js';
import { benchRebuild } from './rebuild.js';
import { benchRealtime } from './realtime.js';
import { benchSessions } from './sessions.js';
import { benchSending } from './sending.js';
import { benchStart } from './start.js';
import { benchWebhookLatency, benchWebhooks } from './webhooks.js';

/** `npm run bench [name]`: every measurement with its same-run baseline and target. */
const suites: [string, () => Promise<void>][] = [
  ['event store', benchEventStore],
  ['document store', benchDocumentStore],
  ['http', benchHttp],
  ['sessions', benchSessions],
  ['chats', benchChats],
  ['messages', benchMessages],
  ['media', benchMedia],
  ['webhooks', benchWebhooks],
  ['webhooks latency', benchWebhookLatency],
  ['ingest', benchIngest],
  ['rebuild', benchRebuild],
  ['realtime', benchRealtime],
  ['sending', benchSending],
  ['export', benchExport],
  ['start', benchStart],
  ['cluster', benchCluster],
];
const only = process.argv[2];
for (const [name, run] of suites) {
  if (only && !name.includes(only)) continue;
  console.log(`# ${name}`);
  await run();
}
