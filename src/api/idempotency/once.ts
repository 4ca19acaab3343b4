import type { Context } from 'koa';
import type { IdempotencyStore, StoredAnswer } from './idempotency-store.js';
import { fingerprint, idempotencyKey, recordId } from './request-key.js';

export type { StoredAnswer };

/** Header on an answer that is the stored answer of an earlier request with the same key. */
const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * Runs `run` at most once per (account, Idempotency-Key) within 24 hours: a repeat gets the
 * first answer again, a different request under the same key 409, a repeat while the first is
 * still running 409 with Retry-After (answering at once, rather than holding a connection for a
 * request that may take long). Without the header, `run` simply runs.
 */
export async function once(
  store: IdempotencyStore,
  ctx: Context,
  accountId: string,
  run: () => Promise<StoredAnswer>,
): Promise<StoredAnswer> {
  const key = idempotencyKey(ctx.get('idempotency-key'));
  if (key === undefined) return run();
  const id = recordId(accountId, key);
  // The body as sent (before defaults), so the same JSON always fingerprints the same.
  const claim = await store.claim(id, accountId, fingerprint(ctx.method, ctx.path.replace(/(.)\/$/, '$1'), ctx.request.body));
  if (claim.kind === 'replay') return { ...claim.answer, headers: { ...claim.answer.headers, [REPLAYED_HEADER]: 'true' } };
  let answer: StoredAnswer;
  try {
    answer = await run();
  } catch (err) {
    // Commands change nothing when they fail, so the key may be used again for the retry.
    await store.release(id).catch(() => undefined);
    throw err;
  }
  await store.answer(id, answer);
  return answer;
}
