import { historyProjection } from './history/history-projection.js';
import type { Projection } from './projection.js';

/** The read models of auditors and analysts (CONTRACT.md, History, state at a time, statistics). */
export const auditProjections: readonly Projection[] = [historyProjection];
