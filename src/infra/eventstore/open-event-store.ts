import { join } from 'node:path';
import type { Config } from '../config/config.js';
import { ConfigError } from '../config/config.js';
import { EmbeddedEventStore } from './embedded/embedded-event-store.js';
import type { EventStore } from './port.js';

/** The event store the configuration names: EventStoreDB at EVENTSTORE_URL, else embedded in DATA_DIR. */
export async function openEventStore(config: Pick<Config, 'EVENTSTORE_URL' | 'DATA_DIR'>): Promise<EventStore> {
  const url = config.EVENTSTORE_URL;
  if (!url) return EmbeddedEventStore.open({ path: join(config.DATA_DIR, 'events') });
  if (!/^esdb(\+discover)?:\/\//.test(url)) {
    // The URL may carry credentials: name the rule, never echo the value.
    throw new ConfigError('EVENTSTORE_URL must be an EventStoreDB connection string (esdb://host:2113?tls=false)');
  }
  // Imported when named: the client and its gRPC stack are some 100 modules an embedded start never needs.
  const { EsdbEventStore } = await import('./esdb/esdb-event-store.js');
  try {
    return await EsdbEventStore.open({ url });
  } catch (error) {
    throw new Error('EVENTSTORE_URL: the event store did not answer', { cause: error });
  }
}
