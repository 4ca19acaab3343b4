import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A private folder per send for the file being sent and what is made of it (a converted voice
 * note, a sticker). Files, not memory: a 60 MB video is streamed to disk once and read from
 * there by the upload. `remove` is always called, whatever became of the send.
 */
export interface TempDir {
  path(name: string): string;
  remove(): Promise<void>;
}

export async function tempDir(root = tmpdir()): Promise<TempDir> {
  const dir = await mkdtemp(join(root, 'gw-send-'));
  return {
    path: (name) => join(dir, name),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
