import { expect } from 'chai';
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMBEDDED, newAccount, startTestGateway } from '../support/gateway.js';

const mode = async (path: string) => (await stat(path)).mode & 0o777;

/** Every folder and file under `dir`, with its permission bits. */
async function modesUnder(dir: string): Promise<Map<string, number>> {
  const modes = new Map<string, number>([[dir, await mode(dir)]]);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) for (const [p, m] of await modesUnder(path)) modes.set(p, m);
    else modes.set(path, await mode(path));
  }
  return modes;
}

describe('security: data files are private (finding d)', () => {
  let root: string;
  let previousUmask: number;
  before(async () => {
    // The usual umask, which lets everyone read what a process creates unless it says otherwise.
    previousUmask = process.umask(0o022);
    root = await mkdtemp(join(tmpdir(), 'gw-modes-'));
  });
  after(async () => {
    process.umask(previousUmask);
    await rm(root, { recursive: true, force: true });
  });

  const expectPrivate = async (dir: string) => {
    const modes = await modesUnder(dir);
    for (const name of ['events', 'docs']) {
      expect(modes.get(join(dir, name)), `${name}/`).to.equal(0o700);
      for (const file of ['data.mdb', 'lock.mdb']) expect(modes.get(join(dir, name, file)), `${name}/${file}`).to.equal(0o600);
    }
    for (const key of ['jwt.key', 'server.key']) expect(modes.get(join(dir, key)), key).to.equal(0o600);
    for (const [path, bits] of modes) {
      const isDir = (await stat(path)).isDirectory();
      expect(bits, path).to.equal(isDir ? 0o700 : 0o600);
    }
  };

  it('a new DATA_DIR, its folders 0700 and every file 0600 (lock file included), under a 022 umask', async () => {
    const dir = join(root, 'fresh', 'data');
    // The embedded stores' own files are the subject: embedded whatever TEST_* says.
    const t = await startTestGateway(EMBEDDED, {}, dir);
    try {
      await newAccount(t.api);
      await expectPrivate(dir);
      expect(await mode(join(dir, 'gateway.lock'))).to.equal(0o600);
    } finally {
      await t.stop();
    }
  });

  it('an existing DATA_DIR left open by an older version is closed at start', async () => {
    const dir = join(root, 'old');
    let t = await startTestGateway(EMBEDDED, {}, dir);
    await t.stop();
    await chmod(dir, 0o755);
    for (const name of ['events', 'docs']) {
      await chmod(join(dir, name), 0o755);
      for (const file of ['data.mdb', 'lock.mdb']) await chmod(join(dir, name, file), 0o644);
    }
    await chmod(join(dir, 'jwt.key'), 0o644);
    t = await startTestGateway(EMBEDDED, {}, dir);
    try {
      await expectPrivate(dir);
    } finally {
      await t.stop();
    }
  });

  it('a DATA_DIR that does not exist yet is made 0700, its parent left as it was', async () => {
    const dir = join(root, 'nested', 'deeper');
    await mkdir(join(root, 'nested'), { recursive: true });
    await writeFile(join(root, 'nested', 'unrelated.txt'), 'x');
    const t = await startTestGateway({}, {}, dir);
    try {
      expect(await mode(dir)).to.equal(0o700);
      expect(await mode(join(root, 'nested', 'unrelated.txt'))).to.equal(0o644);
    } finally {
      await t.stop();
    }
  });
});
