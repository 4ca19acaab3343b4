import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { privateDir } from '../private-files.js';

/**
 * Secrets the server generates once and keeps in DATA_DIR (mode 0600). Losing the data key
 * shreds every secret encrypted with it, which is the point of keeping it out of the events.
 */
export async function loadOrCreateKey(dataDir: string, name: string, bytes = 32): Promise<Buffer> {
  await privateDir(dataDir);
  const path = join(dataDir, `${name}.key`);
  try {
    const key = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64');
    // A key written by hand (or restored from a backup) may have come with looser permissions.
    await chmod(path, 0o600);
    if (key.length === bytes) return key;
    throw new Error(`${path} does not hold a ${bytes}-byte key`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(bytes);
  // 'wx' so that two processes starting at once never overwrite each other's key.
  try {
    await writeFile(path, key.toString('base64'), { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateKey(dataDir, name, bytes);
    throw err;
  }
}
