import { randomBytes } from 'node:crypto';
import { link, readFile, realpath, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { privateDir } from './private-files.js';

/** Directories this process holds: a second open from the same process is refused as well. */
const held = new Set<string>();

/** The owner touches the lock this often; a lock untouched for STALE_MS has no live owner. */
const HEARTBEAT_MS = 10_000;
const STALE_MS = 30_000;

interface Owner {
  pid: number;
  host: string;
  started: string;
}

export class DataDirInUseError extends Error {
  constructor(dir: string, owner: Owner) {
    super(
      `DATA_DIR ${dir} is in use by process ${owner.pid} on ${owner.host} (since ${owner.started}); ` +
        `the embedded stores take one process at a time. A lock its owner stops touching is taken over after ${STALE_MS / 1000} s.`,
    );
    this.name = 'DataDirInUseError';
  }
}

/**
 * One gateway process per DATA_DIR. The embedded stores keep state in memory (the durable head,
 * the newest stream revisions, decoded documents) that only holds while they are the only
 * writer; a second process on the same files would corrupt the log.
 *
 * The lock file is created whole and atomically (written aside, then hard-linked into place) and
 * names its owner: pid, host, start. Its owner touches it every 10 s. It is taken over when its
 * owner is provably gone: on this host, a pid that no longer runs (a crash, SIGKILL; or our own
 * pid, a previous life in a container); on any host, a lock untouched for 30 s (another
 * container sharing the volume, or a reused pid).
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const me: Owner = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
  await privateDir(dir);
  // The real path: another name for the same directory (a symlink) is the same directory.
  const key = await realpath(dir);
  if (held.has(key)) throw new DataDirInUseError(dir, me);
  const path = join(dir, 'gateway.lock');
  const aside = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  const mine = JSON.stringify(me);
  await writeFile(aside, mine, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await link(aside, path);
        held.add(key);
        return holding(key, path, mine);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const seen = await readFile(path, 'utf8').catch(() => null);
      if (seen === null) continue;
      const owner = parseOwner(seen);
      if (!(await isStale(path, owner))) throw new DataDirInUseError(dir, owner);
      // Removed only if it is still the lock judged stale: another process may be taking over too.
      if ((await readFile(path, 'utf8').catch(() => null)) === seen) await rm(path, { force: true });
    }
    throw new Error(`DATA_DIR ${dir}: could not take the lock file ${path}`);
  } finally {
    await rm(aside, { force: true });
  }
}

function holding(key: string, path: string, mine: string): () => Promise<void> {
  const timer = setInterval(() => {
    void readFile(path, 'utf8').then(
      (content) => (content === mine ? utimes(path, new Date(), new Date()) : undefined),
      () => undefined,
    );
  }, HEARTBEAT_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    held.delete(key);
    // Only our own lock: if it was taken over meanwhile, the new owner's stays.
    if ((await readFile(path, 'utf8').catch(() => null)) === mine) await rm(path, { force: true });
  };
}

async function isStale(path: string, owner: Owner): Promise<boolean> {
  const touched = await stat(path).then((s) => s.mtimeMs, () => 0);
  if (Date.now() - touched > STALE_MS) return true;
  if (owner.host !== hostname()) return false;
  return owner.pid === process.pid || !isAlive(owner.pid);
}

/** Earlier versions wrote the bare pid; anything unreadable names no live owner on this host. */
function parseOwner(content: string): Owner {
  try {
    const parsed = JSON.parse(content) as Partial<Owner>;
    if (typeof parsed === 'object' && parsed !== null && Number.isInteger(parsed.pid) && typeof parsed.host === 'string') {
      return { pid: parsed.pid as number, host: parsed.host, started: String(parsed.started ?? 'unknown') };
    }
  } catch {
    // Not JSON: fall through.
  }
  const pid = Number(content.trim());
  return { pid: Number.isInteger(pid) && pid > 0 ? pid : 0, host: hostname(), started: 'unknown' };
}

function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, it is just not ours to signal.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
