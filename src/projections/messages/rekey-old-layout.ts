import type { DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import { isOldLayoutId, MESSAGES, messageDocId, orderOf, type MessageDoc } from './message-doc.js';

const BATCH = 500;

/** A base-36 number of any length, as a bigint (a log position may pass 2^53). */
const fromBase36 = (digits: string): bigint => {
  let n = 0n;
  for (const c of digits) {
    const d = parseInt(c, 36);
    if (Number.isNaN(d)) throw new Error(`not base 36: ${digits}`);
    n = n * 36n + BigInt(d);
  }
  return n;
};

/**
 * The `_id` a message stored as `<instance>|<chat>|<time>.<position>.<index>` (fixed widths)
 * has in today's layout, or null when the old `_id` does not parse.
 */
export const rekeyedId = (oldId: string): string | null => {
  const first = oldId.indexOf('|');
  const last = oldId.lastIndexOf('|');
  if (first < 0 || last === first) return null;
  const parts = oldId.slice(last + 1).split('.');
  if (parts.length !== 3 || parts.some((p) => p === '')) return null;
  try {
    const [time, position, index] = parts.map(fromBase36) as [bigint, bigint, bigint];
    return messageDocId(oldId.slice(0, first), orderOf(Number(time), position, Number(index)));
  } catch {
    return null;
  }
};

/**
 * Moves messages stored under the old `_id` layout to today's, in place. Emptying the model and
 * folding it again from the log would lose what the log no longer holds: past the retention
 * horizon the log's message events are gone while the model keeps each message's sender, time,
 * status and reactions. The unique `by_message` index is dropped first (setup declares it again
 * after) so that the new copy may be written before the old one is deleted: a crash midway leaves
 * both, and the next start finishes the move, each step applied twice giving the same result.
 */
export async function rekeyOldLayout(docs: DocumentStore): Promise<number> {
  const messages = docs.collection<MessageDoc & { order?: string }>(MESSAGES);
  const first = await messages.findOne({ _id: { $regex: '@' } });
  if (!first || !isOldLayoutId(first._id)) return 0;
  await messages.dropIndex('by_message');
  let moved = 0;
  for (;;) {
    const old = await messages.find({ _id: { $regex: '@' } }, { limit: BATCH });
    if (old.length === 0) return moved;
    const ops: WriteOp[] = [];
    for (const doc of old) {
      const id = rekeyedId(doc._id);
      // An id that does not parse cannot be placed in a chat's pages: only that one is dropped.
      if (id) {
        const { order: _order, ...rest } = doc;
        ops.push({ collection: MESSAGES, op: 'replaceOne', filter: { _id: id }, doc: { ...rest, _id: id }, upsert: true });
      }
      ops.push({ collection: MESSAGES, op: 'deleteOne', filter: { _id: doc._id } });
    }
    await docs.batch(ops, { durable: true });
    moved += old.length;
  }
}
