import { join } from 'node:path';
import type { Config } from '../config/config.js';
import { ConfigError } from '../config/config.js';
import { EmbeddedDocumentStore } from './embedded/embedded-document-store.js';
import type { DocumentStore } from './port.js';

/** The read models' store: MongoDB when MONGODB_URL is set, else the embedded one in DATA_DIR. */
export async function openDocumentStore(config: Pick<Config, 'DATA_DIR' | 'MONGODB_URL'>): Promise<DocumentStore> {
  if (!config.MONGODB_URL) return EmbeddedDocumentStore.open({ path: join(config.DATA_DIR, 'docs') });
  if (!/^mongodb(\+srv)?:\/\//.test(config.MONGODB_URL)) {
    // Not echoed: a connection string may carry a password.
    throw new ConfigError('MONGODB_URL must be a mongodb:// or mongodb+srv:// connection string');
  }
  // Imported when named: the driver is some 100 modules an embedded start never needs.
  const { MongoDocumentStore } = await import('./mongodb/mongodb-document-store.js');
  return MongoDocumentStore.open({ url: config.MONGODB_URL });
}
