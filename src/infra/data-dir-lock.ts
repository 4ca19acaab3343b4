import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** Directories this process holds: a second open from the same process is refused as well. */
const held = new Set<string>();

export class DataDirInUseError extends Error {
  constructor(dir: string, pid: number) {
    super(`DATA_DIR ${dir} is in use by process ${pid}; the embedded stores take one process at a time`);
    this.name = 'DataDirInUseError';
  }
}

/**
 * One gateway process per DATA_DIR. The embedded stores keep state in memory (the durable head,
 * the newest stream revisions, decoded documents) that only holds while they are the only
 * writer; a second process on the same files would corrupt the log. The lock file names its
 * owner's pid: a lock whose process is gone (a crash, SIGKILL) is taken over.
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const key = resolve(dir);
  if (held.has(key)) throw new DataDirInUseError(dir, process.pid);
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'gateway.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const file = await open(path, 'wx');
      try {
        await file.writeFile(String(process.pid));
      } finally {
        await file.close();
      }
      held.add(key);
      return async () => {
        held.delete(key);
        await rm(path, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      // A pid equal to ours is a previous life of this process (containers reuse pid 1).
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) throw new DataDirInUseError(dir, owner);
      await rm(path, { force: true });
    }
  }
  throw new Error(`DATA_DIR ${dir}: could not take the lock file ${path}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, it is just not ours to signal.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
