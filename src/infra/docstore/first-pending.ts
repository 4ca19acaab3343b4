import type { Collection, Document } from './port.js';

/** Pending jobs read in log order at once; past that, each key's first is sought on its own. */
const PAGE = 1000;
/** Seeks in one call at most: a round never reads more than this many keys' first jobs. */
const MAX_SEEKS = 10_000;

/**
 * The first pending job of each key (a lane, a conversation), in log order, for workers that run
 * each key's jobs one at a time. One page in log order finds them while few jobs wait; a full page
 * may be one key's backlog hiding every other key, so each key's first job is then sought on its
 * own: one seek per key on an index of {state, <field>, pos} (pending jobs only).
 */
export async function firstPendingPerKey<T extends Document & { pos: number }>(
  jobs: Collection<T>,
  field: keyof T & string,
  keyOf: (job: T) => string,
): Promise<Map<string, T>> {
  const pending = await jobs.find({ state: 'pending' }, { sort: { pos: 1 }, limit: PAGE });
  const firsts = new Map<string, T>();
  for (const job of pending) {
    const key = keyOf(job);
    if (!firsts.has(key)) firsts.set(key, job);
  }
  if (pending.length < PAGE) return firsts;
  let after = '';
  for (let seeks = 0; seeks < MAX_SEEKS; seeks++) {
    const [first] = await jobs.find({ state: 'pending', [field]: { $gt: after } }, { sort: { [field]: 1, pos: 1 }, limit: 1 });
    const key = first?.[field];
    if (typeof key !== 'string') break;
    if (!firsts.has(key)) firsts.set(key, first as T);
    after = key;
  }
  return firsts;
}
