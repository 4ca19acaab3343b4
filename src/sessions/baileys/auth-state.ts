import {
  BufferJSON,
  initAuthCreds,
  makeCacheableSignalKeyStore,
  proto,
  type AuthenticationCreds,
  type AuthenticationState,
  type CacheStore,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from '@whiskeysockets/baileys';
import type { ILogger } from '@whiskeysockets/baileys/lib/Utils/logger.js';
import type { AuthStateStore } from '../port.js';
import { BoundedCache } from './bounded-cache.js';

/** Where the credentials live in the AuthStateStore; key material uses its Signal type name. */
export const CREDS_TYPE = 'creds';
export const CREDS_ID = 'creds';

export interface BaileysAuthState {
  state: AuthenticationState;
  /** Writes the current creds; call on every `creds.update`. */
  saveCreds(): Promise<void>;
}

export interface AuthStateOptions {
  logger?: ILogger;
  /** Read cache for signal keys; a bounded one is created when absent. */
  cache?: CacheStore;
}

/**
 * Baileys' AuthenticationState over our AuthStateStore. Values are stored as Baileys' BufferJSON
 * text, so Buffers and Uint8Arrays come back as bytes; app-state sync keys are revived into
 * their protobuf class, as Baileys' own file store does.
 *
 * Writes are batched by Baileys itself: the socket wraps `keys` with addTransactionCapability, so
 * every signal transaction (a decrypt, an encrypt, a pre-key upload) ends in exactly one
 * `keys.set`, which is one `AuthStateStore.set`, one durable write. The few writes Baileys makes
 * outside a transaction (it saves a new sender's identity key just before the decrypt
 * transaction) are one write per key type. Reads go through Baileys' makeCacheableSignalKeyStore
 * with our bounded cache, not its default NodeCache (which runs a timer per store).
 * test/sessions/baileys/auth-state.test.ts holds a real X3DH session to all of this.
 */
export async function baileysAuthState(store: AuthStateStore, options: AuthStateOptions = {}): Promise<BaileysAuthState> {
  const stored = (await store.get(CREDS_TYPE, [CREDS_ID]))[CREDS_ID];
  const creds: AuthenticationCreds = stored === undefined ? initAuthCreds() : (decode(stored) as AuthenticationCreds);
  const cache = options.cache ?? new BoundedCache({ max: 5000, ttlMs: 5 * 60_000 });
  const keys = makeCacheableSignalKeyStore(storeBackedKeys(store, () => encode(creds)), options.logger, cache);
  return {
    state: { creds, keys },
    // Serialised now, not when the write runs, so each save is a consistent snapshot.
    saveCreds: () => {
      const snapshot = encode(creds);
      return store.set({ [CREDS_TYPE]: { [CREDS_ID]: snapshot } });
    },
  };
}

/**
 * The signal key store without cache: one AuthStateStore call per Baileys call. New pre-keys are
 * written together with the credentials (`credsSnapshot`), in the same durable write: Baileys
 * generates them in a key transaction, moves `nextPreKeyId` past them in the credentials, and
 * uploads them once the transaction is written. Saved apart, the credentials could still be on
 * their way when the upload reached the network, and a crash then made the next start generate
 * (and upload) other keys under the same ids: a peer encrypting to an id it fetched earlier
 * would reach a key the device no longer has.
 */
export function storeBackedKeys(store: AuthStateStore, credsSnapshot?: () => string): SignalKeyStore {
  return {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const found = await store.get(type, ids);
      const out: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const [id, raw] of Object.entries(found)) {
        const value = decode(raw);
        if (value === null || value === undefined) continue;
        // Baileys needs the protobuf class back for app-state sync keys (it reads `keyData`).
        out[id] = (type === 'app-state-sync-key' ? proto.Message.AppStateSyncKeyData.fromObject(value as object) : value) as SignalDataTypeMap[T];
      }
      return out;
    },
    async set(data: SignalDataSet) {
      const batch: Record<string, Record<string, string | null>> = {};
      let count = 0;
      for (const [type, values] of Object.entries(data)) {
        if (!values) continue;
        const encoded: Record<string, string | null> = {};
        for (const [id, value] of Object.entries(values)) {
          encoded[id] = value === null || value === undefined ? null : encode(value);
          count += 1;
        }
        batch[type] = encoded;
      }
      const newPreKeys = Object.values(data['pre-key'] ?? {}).some((value) => value !== null && value !== undefined);
      // After the keys in the batch: a write cut short leaves ids that were never uploaded to be made again.
      if (newPreKeys && credsSnapshot) batch[CREDS_TYPE] = { [CREDS_ID]: credsSnapshot() };
      if (count > 0) await store.set(batch);
    },
    clear: () => store.clear(),
  };
}

function encode(value: unknown): string {
  return JSON.stringify(value, BufferJSON.replacer);
}

function decode(raw: unknown): unknown {
  // Written by encode(); anything else (a store holding plain JSON) is taken as it is.
  return typeof raw === 'string' ? JSON.parse(raw, BufferJSON.reviver) : raw;
}
