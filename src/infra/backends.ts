import { join } from 'node:path';
import type { Config } from './config/config.js';
import { lockDataDir } from './data-dir-lock.js';
import { privateDir, privateTree } from './private-files.js';
import { openDocumentStore } from './docstore/open-document-store.js';
import type { DocumentStore } from './docstore/port.js';
import { openEventStore } from './eventstore/open-event-store.js';
import type { EventStore } from './eventstore/port.js';

export interface Backends {
  events: EventStore;
  docs: DocumentStore;
  /** The embedded stores' directories, when both stores are embedded (a rebuild opens them on a thread too). */
  embedded?: { events: string; docs: string };
  close(): Promise<void>;
}

/**
 * Picks the adapters behind the ports: EventStoreDB at EVENTSTORE_URL and MongoDB at MONGODB_URL,
 * each embedded (LMDB in DATA_DIR) when its URL is unset. The data dir stays locked whatever the
 * backends: the server keys live in it.
 */
export async function openBackends(config: Config): Promise<Backends> {
  const unlock = await lockDataDir(config.DATA_DIR);
  let events: EventStore | undefined;
  try {
    // The embedded stores create their files inside folders that are already private, then get 0600 files.
    const paths = { events: join(config.DATA_DIR, 'events'), docs: join(config.DATA_DIR, 'docs') };
    const embedded = [...(config.EVENTSTORE_URL ? [] : [paths.events]), ...(config.MONGODB_URL ? [] : [paths.docs])];
    await Promise.all(embedded.map((dir) => privateDir(dir)));
    events = await openEventStore(config);
    const docs = await openDocumentStore(config);
    await Promise.all(embedded.map((dir) => privateTree(dir)));
    const opened = events;
    return {
      events,
      docs,
      ...(embedded.length === 2 ? { embedded: paths } : {}),
      async close() {
        await Promise.allSettled([opened.close(), docs.close()]);
        await unlock();
      },
    };
  } catch (err) {
    await events?.close().catch(() => undefined);
    await unlock();
    throw err;
  }
}
