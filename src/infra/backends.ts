import { join } from 'node:path';
import type { Config } from './config/config.js';
import { ConfigError } from './config/config.js';
import { lockDataDir } from './data-dir-lock.js';
import { privateDir, privateTree } from './private-files.js';
import { EmbeddedDocumentStore } from './docstore/embedded/embedded-document-store.js';
import type { DocumentStore } from './docstore/port.js';
import { EmbeddedEventStore } from './eventstore/embedded/embedded-event-store.js';
import type { EventStore } from './eventstore/port.js';

export interface Backends {
  events: EventStore;
  docs: DocumentStore;
  close(): Promise<void>;
}

/** Picks the adapters behind the ports: embedded LMDB unless a server URL is configured. */
export async function openBackends(config: Config): Promise<Backends> {
  if (config.EVENTSTORE_URL || config.MONGODB_URL) {
    throw new ConfigError('EVENTSTORE_URL / MONGODB_URL: the distributed adapters are not part of this build yet');
  }
  const unlock = await lockDataDir(config.DATA_DIR);
  try {
    // The stores create their files inside folders that are already private, then get 0600 files.
    const [eventsDir, docsDir] = [join(config.DATA_DIR, 'events'), join(config.DATA_DIR, 'docs')];
    await Promise.all([privateDir(eventsDir), privateDir(docsDir)]);
    const events = await EmbeddedEventStore.open({ path: eventsDir });
    const docs = await EmbeddedDocumentStore.open({ path: docsDir });
    await Promise.all([privateTree(eventsDir), privateTree(docsDir)]);
    return {
      events,
      docs,
      async close() {
        await Promise.allSettled([events.close(), docs.close()]);
        await unlock();
      },
    };
  } catch (err) {
    await unlock();
    throw err;
  }
}
