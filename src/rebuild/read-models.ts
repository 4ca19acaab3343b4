import { ACCOUNTS, accountsProjection } from '../projections/accounts/accounts-projection.js';
import { ACCESS_TOKENS, accessTokensProjection } from '../projections/accounts/access-tokens-projection.js';
import { CHATS, chatsProjection } from '../projections/chats/chats-projection.js';
import { GROUPS, groupsProjection, LID_MAP } from '../projections/groups/groups-projection.js';
import { CONTACTS, contactsProjection, LABELS } from '../projections/contacts/contacts-projection.js';
import { HISTORY, historyProjection } from '../projections/history/history-projection.js';
import { INSTANCES, instancesProjection } from '../projections/instances/instances-projection.js';
import { MESSAGES } from '../projections/messages/message-doc.js';
import { messagesProjection } from '../projections/messages/messages-projection.js';
import type { Projection } from '../projections/projection.js';
import { SESSION_STATUS, sessionsProjection } from '../projections/sessions/sessions-projection.js';
import { STATS, STATS_SESSIONS, StatsProjection } from '../projections/stats/stats-projection.js';
import { BOTS, botsProjection } from '../projections/bots/bots-projection.js';
import { BOT_SESSIONS, botSessionsProjection } from '../projections/bots/bot-sessions-projection.js';

/**
 * What can be rebuilt: each read model's projection (named as the runner's checkpoint) and the
 * collections it alone writes. Reactors with effects outside their collections (the webhook
 * outbox, which sends) are not here: replaying them would send again.
 */
export interface ReadModel {
  name: string;
  collections: readonly string[];
  /** A fresh projection: one that keeps state in memory must not share it with the live one. */
  projection(): Projection;
  /**
   * Folded in memory and written once at the end (see StagedFold): for models whose documents
   * are few and updated often. History writes one document per event, never updated: it goes
   * straight to its fresh collection and needs no memory.
   */
  staged: boolean;
  /**
   * Every write is an upsert of a new document by _id, never a change of one: a rebuild into an
   * empty collection inserts instead (history, whose entries are keyed by log position).
   */
  appendOnly?: boolean;
  /**
   * Folded on a worker thread of its own when several models are rebuilt from the embedded
   * stores: the costliest fold (chats: several update operators per message, on as many documents
   * as there are chats). Its projection keeps no state in memory, or reloads it in setup.
   */
  ownThread?: boolean;
}

export const READ_MODELS: readonly ReadModel[] = [
  { name: 'accounts', staged: true, collections: [ACCOUNTS], projection: () => accountsProjection },
  // One document per sign-in, rarely updated: written straight out, like history.
  { name: 'access_tokens', staged: false, collections: [ACCESS_TOKENS], projection: () => accessTokensProjection },
  { name: 'instances', staged: true, collections: [INSTANCES], projection: () => instancesProjection },
  { name: 'sessions', staged: true, collections: [SESSION_STATUS], projection: () => sessionsProjection },
  { name: 'groups', staged: true, collections: [GROUPS, LID_MAP], projection: () => groupsProjection },
  { name: 'contacts', staged: true, collections: [CONTACTS, LABELS], projection: () => contactsProjection },
  { name: 'chats', staged: true, ownThread: true, collections: [CHATS], projection: () => chatsProjection },
  // One document per message, updated by receipts, reactions and edits: folded in memory (a
  // message costs a map entry, not a transaction with its index entries), written once.
  { name: 'messages', staged: true, collections: [MESSAGES], projection: () => messagesProjection },
  { name: 'history', staged: false, appendOnly: true, collections: [HISTORY], projection: () => historyProjection },
  { name: 'stats', staged: true, collections: [STATS, STATS_SESSIONS], projection: () => new StatsProjection() },
  { name: 'bots', staged: true, collections: [BOTS], projection: () => botsProjection },
  { name: 'bot-sessions', staged: true, collections: [BOT_SESSIONS], projection: () => botSessionsProjection },
];

export class UnknownReadModelError extends Error {}

/** The named read models (none: all of them), or an error naming the unknown ones. */
export function selectReadModels(names: readonly string[]): ReadModel[] {
  if (names.length === 0) return [...READ_MODELS];
  const unknown = names.filter((n) => !READ_MODELS.some((m) => m.name === n));
  if (unknown.length > 0) {
    throw new UnknownReadModelError(`unknown read model: ${unknown.join(', ')} (known: ${READ_MODELS.map((m) => m.name).join(', ')})`);
  }
  return READ_MODELS.filter((m) => names.includes(m.name));
}
