import { join } from 'node:path';
import type { Config } from './config/config.js';
import { ConfigError } from './config/config.js';
import { lockDataDir } from './data-dir-lock.js';
import { EmbeddedDocumentStore } from './docstore/embedded/embedded-document-store.js';
import type { DocumentStore } from './docstore/port.js';
import { openEventStore } from './eventstore/open-event-store.js';
import type { EventStore } from './eventstore/port.js';

export interface Backends {
  events: EventStore;
  docs: DocumentStore;
  close(): Promise<void>;
}

/** Picks the adapters behind the ports: embedded LMDB unless a server URL is configured. */
export async function openBackends(config: Config): Promise<Backends> {
  if (config.MONGODB_URL) {
    throw new ConfigError('MONGODB_URL: the distributed adapters are not part of this build yet');
  }
  const unlock = await lockDataDir(config.DATA_DIR);
  let events: EventStore | undefined;
  try {
    events = await openEventStore(config);
    const docs = await EmbeddedDocumentStore.open({ path: join(config.DATA_DIR, 'docs') });
    const opened = events;
    return {
      events,
      docs,
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
