/**
 * Drops properties whose value is undefined, so events carry only the fields the network gave:
 * the stored JSON stays small and an absent field never turns into `null` in a backend that
 * encodes undefined as nil.
 */
export function compact<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (field !== undefined) out[key] = field;
  }
  return out as T;
}
