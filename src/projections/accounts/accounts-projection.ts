import { accountStream } from '../../domain/account/events.js';
import type { Document, DocumentStore } from '../../infra/docstore/port.js';
import { occurredAt, type Projection } from '../projection.js';

export const ACCOUNTS = 'accounts';

export interface AccountDoc extends Document {
  _id: string;
  user_id: number;
  email: string;
  password_hash: string;
  client_token: string;
  client_secret_hash: string;
  /** Rises with every client-secret rotation; JWTs carry the one they were issued under. Absent: 0. */
  secret_generation?: number;
  created_at: string;
}

/**
 * The generation a rotation starts: the account stream holds the account's credential changes,
 * so its revision grows with every rotation (revision 0 is the first rotation, generation 1).
 */
export function secretGeneration(streamId: string, revision: bigint): [accountId: string, generation: number] | null {
  const prefix = accountStream('');
  return streamId.startsWith(prefix) ? [streamId.slice(prefix.length), Number(revision) + 1] : null;
}

export const accountsProjection: Projection = {
  name: 'accounts',
  eventTypes: new Set(['AccountRegistered', 'ClientSecretRotated']),

  async setup(docs: DocumentStore) {
    const accounts = docs.collection(ACCOUNTS);
    await accounts.createIndex({ name: 'email', keys: { email: 1 }, unique: true });
    await accounts.createIndex({ name: 'client_token', keys: { client_token: 1 }, unique: true });
  },

  apply(event) {
    switch (event.type) {
      case 'AccountRegistered': {
        const d = event.data;
        const doc: AccountDoc = {
          _id: d.account_id,
          user_id: d.user_id,
          email: d.email,
          password_hash: d.password_hash,
          client_token: d.client_token,
          client_secret_hash: d.client_secret_hash,
          secret_generation: 0,
          created_at: occurredAt(event),
        };
        return [{ collection: ACCOUNTS, op: 'replaceOne', filter: { _id: doc._id }, doc, upsert: true }];
      }
      case 'ClientSecretRotated': {
        const d = event.data;
        return [
          {
            collection: ACCOUNTS,
            op: 'updateOne',
            filter: { _id: d.account_id },
            update: { $set: { client_secret_hash: d.client_secret_hash, secret_generation: secretGeneration(event.streamId, event.revision)?.[1] ?? 0 } },
          },
        ];
      }
      default:
        return [];
    }
  },
};
