import { join } from 'node:path';
import type { Config } from './config/config.js';
import { ConfigError } from './config/config.js';
import { lockDataDir } from './data-dir-lock.js';
import { openDocumentStore } from './docstore/open-document-store.js';
import type { DocumentStore } from './docstore/port.js';
import { EmbeddedEventStore } from './eventstore/embedded/embedded-event-store.js';
import type { EventStore } from './eventstore/port.js';

export interface Backends {
  events: EventStore;
  docs: DocumentStore;
  close(): Promise<void>;
}

/**
 * Picks the adapters behind the ports: embedded LMDB unless a server URL is configured. The data
 * dir stays locked while the embedded event store lives in it, whatever holds the read models.
 */
export async function openBackends(config: Config): Promise<Backends> {
  if (config.EVENTSTORE_URL) {
    throw new ConfigError('EVENTSTORE_URL: the EventStoreDB adapter is not part of this build yet');
  }
  const unlock = await lockDataDir(config.DATA_DIR);
  try {
    const events = await EmbeddedEventStore.open({ path: join(config.DATA_DIR, 'events') });
    const docs = await openDocumentStore(config).catch(async (err: unknown) => {
      await events.close();
      throw err;
    });
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
