import type { ReadAllOptions, RecordedEvent } from '../port.js';
import { readLog } from './reads.js';
import { openStorage } from './storage.js';

/** Reads of the global log, up to a position the store's own process has made durable. */
export interface LogReader {
  readAll(options: ReadAllOptions & { upTo: bigint }): Promise<RecordedEvent[]>;
  close(): Promise<void>;
}

/**
 * The log of an embedded event store another part of this process holds open, read from a
 * worker thread: LMDB shares the environment between threads. It only reads, and only up to a
 * position the owner handed over (the owner alone knows its durable head), so it never touches
 * what the owner tracks in memory (unindexed entries, the durable head, group commit).
 */
export function openLogReader(path: string): LogReader {
  const storage = openStorage(path);
  return {
    async readAll({ after, maxCount, upTo }) {
      return readLog(storage, after === undefined ? -1 : Number(after), Number(upTo), maxCount ?? Infinity);
    },
    close: () => storage.env.close(),
  };
}
