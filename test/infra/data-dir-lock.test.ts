import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, mkdtemp, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirInUseError, lockDataDir } from '../../src/infra/data-dir-lock.js';
import { openBackends } from '../../src/infra/backends.js';
import { loadConfig } from '../../src/infra/config/config.js';
import { startGateway } from '../../src/composition-root.js';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

describe('DATA_DIR lock (one gateway process per data directory)', function () {
  this.timeout(30_000);
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'datadir-lock-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a second opening of the embedded stores until the first is closed', async () => {
    const config = loadConfig({ DATA_DIR: dir });
    const first = await openBackends(config);
    const error = await openBackends(config).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(DataDirInUseError);
    await symlink(dir, `${dir}-link`);
    try {
      expect(await lockDataDir(`${dir}-link`).catch((e: unknown) => e)).to.be.instanceOf(DataDirInUseError);
    } finally {
      await rm(`${dir}-link`);
    }
    await first.close();
    const again = await openBackends(config);
    await again.close();
  });

  it("refuses while another live process holds it, and takes over once that process is killed", async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/hold-data-dir-lock.ts', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      expect(line.toString()).to.contain('locked');
      const refused = await lockDataDir(dir).catch((e: unknown) => e);
      expect(refused).to.be.instanceOf(DataDirInUseError);
      expect((refused as Error).message).to.contain(String(child.pid));
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    const release = await lockDataDir(dir);
    expect(JSON.parse(await readFile(join(dir, 'gateway.lock'), 'utf8'))).to.include({ pid: process.pid, host: hostname() });
    await release();
  });

  it('refuses a fresh lock from another host, and takes it over once its owner stops touching it', async () => {
    const path = join(dir, 'gateway.lock');
    await writeFile(path, JSON.stringify({ pid: 4242, host: 'another-container', started: '2026-01-01T00:00:00.000Z' }));
    const refused = await lockDataDir(dir).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(DataDirInUseError);
    expect((refused as Error).message).to.contain('another-container');
    const old = new Date(Date.now() - 60_000);
    await utimes(path, old, old);
    const release = await lockDataDir(dir);
    await release();
    await access(path).then(
      () => expect.fail('the lock should be gone after release'),
      () => undefined,
    );
  });

  it('reads a lock left by an earlier version (a bare pid): refused while that process lives, taken once it is gone', async () => {
    // The test runner's parent is alive and is not this process.
    await writeFile(join(dir, 'gateway.lock'), String(process.ppid));
    expect(await lockDataDir(dir).then(() => null, (err: unknown) => err)).to.be.instanceOf(DataDirInUseError);
    await writeFile(join(dir, 'gateway.lock'), '999999999');
    const release = await lockDataDir(dir);
    await release();
  });
  it('releases the data directory when the gateway cannot take its port', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const env = { DATA_DIR: dir, HOST: '127.0.0.1', LOG_LEVEL: 'silent', EVENTSTORE_URL: '', MONGODB_URL: '' };
      const error = await startGateway(loadConfig({ ...env, PORT: String(port) })).catch((e: unknown) => e);
      expect((error as NodeJS.ErrnoException).code).to.equal('EADDRINUSE');
      const gateway = await startGateway(loadConfig({ ...env, PORT: '0' }));
      await gateway.stop();
    } finally {
      taken.close();
    }
  });
});
