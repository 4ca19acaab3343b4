import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rebuildNodeFlags } from '../../src/rebuild/node-flags.js';

const LAUNCH = fileURLToPath(new URL('../../src/rebuild/launch.ts', import.meta.url));
const GIB = 1024 ** 3;

describe('npm run rebuild: the process it runs in', () => {
  it('collects garbage on the folding threads on two cores or fewer, and starts the heaps large with memory to spare', () => {
    expect(rebuildNodeFlags({ cores: 2, memoryBytes: 8 * GIB })).to.deep.equal(['--single-threaded-gc', '--initial-heap-size=256']);
    expect(rebuildNodeFlags({ cores: 1, memoryBytes: 1 * GIB })).to.deep.equal(['--single-threaded-gc']);
    expect(rebuildNodeFlags({ cores: 8, memoryBytes: 2 * GIB })).to.deep.equal(['--initial-heap-size=256']);
    expect(rebuildNodeFlags({ cores: 16, memoryBytes: 2 * GIB - 1 })).to.deep.equal([]);
  });

  it("runs the rebuild in a node given those settings, and ends as it ends: its output, its exit code", async function () {
    this.timeout(30_000);
    const dir = await mkdtemp(join(tmpdir(), 'rebuild-launch-'));
    try {
      // Loaded by both processes (the launcher passes its node options on): each says its own.
      const probe = join(dir, 'probe.mjs');
      await writeFile(probe, "process.stderr.write(`node options: ${JSON.stringify(process.execArgv)}\\n`);\n");
      const run = async (args: string[]) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--import', probe, LAUNCH, ...args], {
          env: { ...process.env, DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
        child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
        const [code] = (await once(child, 'exit')) as [number | null];
        return { code, out, err };
      };
      const unknown = await run(['no_such_model']);
      expect(unknown.code).to.equal(2);
      expect(unknown.err).to.include('unknown read model: no_such_model');
      const done = await run(['accounts']);
      expect(done.code, done.err).to.equal(0);
      expect(done.out).to.include('rebuilt with the gateway stopped');
      const options = done.err.split('\n').filter((line) => line.startsWith('node options: ')).map((line) => JSON.parse(line.slice('node options: '.length)) as string[]);
      expect(options).to.have.length(2);
      const [launcher, rebuild] = options as [string[], string[]];
      for (const flag of rebuildNodeFlags()) {
        expect(launcher).not.to.include(flag);
        expect(rebuild).to.include(flag);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
