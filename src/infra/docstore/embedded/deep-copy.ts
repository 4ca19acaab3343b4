/**
 * A deep copy of what documents, filters and updates are made of: plain objects and arrays,
 * dates, regular expressions, byte arrays and scalars. The store copies every write it is handed
 * (the caller may change its objects while the write waits for its transaction); structuredClone
 * did that through a serializer, at several times the cost. Anything else (a Map, a class
 * instance) is left to structuredClone, so the copy is never shallower than it was.
 */
export function deepCopy<T>(value: T): T {
  // A function or symbol cannot be stored: structuredClone says so.
  if (typeof value === 'function' || typeof value === 'symbol') return structuredClone(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) copy[i] = deepCopy(value[i]);
    return copy as T;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto === Object.prototype || proto === null) {
    const copy: Record<string, unknown> = proto === null ? Object.create(null) : {};
    for (const key of Object.keys(value)) {
      const field = deepCopy((value as Record<string, unknown>)[key]);
      // Assigning `__proto__` would set the copy's prototype instead of a field.
      if (key === '__proto__') Object.defineProperty(copy, key, { value: field, enumerable: true, writable: true, configurable: true });
      else copy[key] = field;
    }
    return copy as T;
  }
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (value instanceof RegExp) return new RegExp(value.source, value.flags) as T;
  if (Buffer.isBuffer(value)) return Buffer.from(value) as T;
  if (value instanceof Uint8Array) return value.slice() as T;
  return structuredClone(value);
}
