import { historyProjection } from './history/history-projection.js';
import type { Projection } from './projection.js';
import { StatsProjection } from './stats/stats-projection.js';

/**
 * The read models of auditors and analysts (CONTRACT.md, History, state at a time, statistics).
 * Fresh instances each call: the statistics keep state in memory, and a rebuild needs its own.
 */
export const auditProjections = (): Projection[] => [historyProjection, new StatsProjection()];
