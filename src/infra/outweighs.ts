/**
 * Whether a decoded value weighs more than `budget`, roughly: string lengths, byte lengths, and
 * one per value. The walk stops as soon as the budget is spent, so weighing costs at most the
 * budget whatever the value. In-memory caches use it to keep large entries out.
 */
export function outweighs(value: unknown, budget: number): boolean {
  let left = budget;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    left -= typeof v === 'string' ? v.length + 1 : 1;
    if (left < 0) return true;
    if (typeof v !== 'object' || v === null) continue;
    if (ArrayBuffer.isView(v)) {
      left -= v.byteLength;
      if (left < 0) return true;
    } else if (Array.isArray(v)) {
      // Each child costs at least one: no need to look past the budget.
      if (v.length > left) return true;
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else {
      for (const key in v) {
        if (stack.length > left) return true;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

/** Roughly how much a decoded event may weigh to be kept in an in-memory run of recent events (a history sync is not). */
export const RECENT_EVENT_BUDGET = 16 * 1024;
