import { ACCOUNTS, accountsProjection } from '../projections/accounts/accounts-projection.js';
import { CHATS, chatsProjection } from '../projections/chats/chats-projection.js';
import { GROUPS, groupsProjection, LID_MAP } from '../projections/groups/groups-projection.js';
import { HISTORY, historyProjection } from '../projections/history/history-projection.js';
import { INSTANCES, instancesProjection } from '../projections/instances/instances-projection.js';
import type { Projection } from '../projections/projection.js';
import { SESSION_STATUS, sessionsProjection } from '../projections/sessions/sessions-projection.js';
import { STATS, STATS_SESSIONS, StatsProjection } from '../projections/stats/stats-projection.js';

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
}

export const READ_MODELS: readonly ReadModel[] = [
  { name: 'accounts', collections: [ACCOUNTS], projection: () => accountsProjection },
  { name: 'instances', collections: [INSTANCES], projection: () => instancesProjection },
  { name: 'sessions', collections: [SESSION_STATUS], projection: () => sessionsProjection },
  { name: 'groups', collections: [GROUPS, LID_MAP], projection: () => groupsProjection },
  { name: 'chats', collections: [CHATS], projection: () => chatsProjection },
  { name: 'history', collections: [HISTORY], projection: () => historyProjection },
  { name: 'stats', collections: [STATS, STATS_SESSIONS], projection: () => new StatsProjection() },
];
