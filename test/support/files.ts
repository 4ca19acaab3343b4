import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Every file below `dir`, at any depth (for tests that search the data dir for secrets). */
export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else out.push(path);
  }
  return out;
}
