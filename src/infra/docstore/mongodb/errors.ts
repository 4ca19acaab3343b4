import { MongoBulkWriteError, MongoServerError } from 'mongodb';
import { DuplicateKeyError } from '../port.js';

const DUPLICATE_KEY = 11000;

/**
 * The port's typed error for mongod's duplicate-key code (11000), whether it comes from a single
 * write, a unique index build over existing duplicates, or a write of an ordered bulk; anything
 * else passes through unchanged.
 */
export function translateError(collection: string, error: unknown): unknown {
  if (error instanceof MongoBulkWriteError) {
    const errors = error.writeErrors;
    const first = Array.isArray(errors) ? errors[0] : errors;
    if (first?.code === DUPLICATE_KEY) return new DuplicateKeyError(collection, describeKey(first.errmsg));
  }
  if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) {
    return new DuplicateKeyError(collection, describeKey(error.keyValue ?? error.errmsg));
  }
  return error;
}

function describeKey(key: unknown): string {
  if (typeof key === 'string') return key;
  try {
    return JSON.stringify(key);
  } catch {
    return String(key);
  }
}

/** mongod answers "no such index" or "no such collection" to dropIndex; the port answers false. */
export function isMissingIndex(error: unknown): boolean {
  return error instanceof MongoServerError && (error.code === 27 || error.code === 26);
}
