import { chmod, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * DATA_DIR holds the event log, the read models and the server keys: readable by the gateway's
 * user only. Folders are 0700 and files 0600, whatever the umask, and tightened again at every
 * start, so a data dir made by an older version (0755 folders, 0644 files) is closed too.
 */
export async function privateDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  // mkdir's mode is filtered by the umask and leaves an existing folder as it was.
  await chmod(path, 0o700);
}

/**
 * Closes everything under `path`. Called after a store has opened its files: they were created
 * inside a folder already 0700, so nobody else could reach them in between.
 */
export async function privateTree(path: string): Promise<void> {
  await chmod(path, 0o700);
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await privateTree(child);
    else if (entry.isFile()) await chmod(child, 0o600);
  }
}
