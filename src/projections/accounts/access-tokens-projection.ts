import { accountStream } from '../../domain/account/events.js';
import type { Document, DocumentStore } from '../../infra/docstore/port.js';
import { occurredAt, type Projection } from '../projection.js';

export const ACCESS_TOKENS = 'access_tokens';

/** How the token was asked for: the route, as the account area shows it. */
export type IssuedBy = 'password' | 'client_credentials' | 'web_app';

/** One issued access token, by its id: never the token itself, which the gateway does not keep. */
export interface AccessTokenDoc extends Document {
  /** The token's `jti`. */
  _id: string;
  account_id: string;
  issued_by: IssuedBy;
  issued_at: string;
  expires_at: string;
  address: string;
  user_agent: string;
  /** The client-secret generation it carries: a rotation past it ended the token. */
  generation: number;
  /** Set once, by the first revocation. */
  revoked_at?: string;
}

const accountOf = (streamId: string) => streamId.slice(accountStream('').length);

/**
 * The registry of access tokens, folded from the account streams: a successful sign-in that names
 * its token adds one, a revocation ends it. Events, not documents written by the sign-in, so that
 * an auditor reads the same facts in the account history, and this model can be rebuilt.
 */
export const accessTokensProjection: Projection = {
  name: 'access_tokens',
  eventTypes: new Set(['SignInSucceeded', 'AccessTokenRevoked']),

  async setup(docs: DocumentStore) {
    await docs.collection(ACCESS_TOKENS).createIndex({ name: 'account_expiry', keys: { account_id: 1, expires_at: -1 } });
  },

  apply(event) {
    if (!event.streamId.startsWith(accountStream(''))) return [];
    switch (event.type) {
      case 'SignInSucceeded': {
        const d = event.data;
        // Sign-ins recorded before tokens were registered name none.
        if (d.jti === undefined || d.expires_at === undefined) return [];
        const doc: AccessTokenDoc = {
          _id: d.jti,
          account_id: accountOf(event.streamId),
          issued_by: d.via === 'web_app' ? 'web_app' : d.method,
          issued_at: occurredAt(event),
          expires_at: d.expires_at,
          address: d.address,
          user_agent: d.user_agent ?? '',
          generation: d.generation ?? 0,
        };
        // $setOnInsert: a replayed sign-in never brings a revoked token back.
        const { _id, ...fields } = doc;
        return [{ collection: ACCESS_TOKENS, op: 'updateOne', filter: { _id }, update: { $setOnInsert: fields }, upsert: true }];
      }
      case 'AccessTokenRevoked':
        // $min: replayed or repeated, the first revocation's time stays.
        return [
          {
            collection: ACCESS_TOKENS,
            op: 'updateOne',
            filter: { _id: event.data.jti, account_id: accountOf(event.streamId) },
            update: { $min: { revoked_at: occurredAt(event) } },
          },
        ];
      default:
        return [];
    }
  },
};
