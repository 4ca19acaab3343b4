import { join } from 'node:path';
import type { Config } from './config/config.js';
import { ConfigError } from './config/config.js';
import { lockDataDir } from './data-dir-lock.js';
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
    const events = await EmbeddedEventStore.open({ path: join(config.DATA_DIR, 'events') });
    const docs = await EmbeddedDocumentStore.open({ path: join(config.DATA_DIR, 'docs') });
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
