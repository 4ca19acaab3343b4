import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Every regular file below `dir`, at any depth (for tests that search the data dir for secrets).
 * A socket (the gateway's rebuild control socket) holds no bytes to search, and cannot be read.
 */
export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}
