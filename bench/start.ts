import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './child.js';
import { median, report } from './lib.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const ROUNDS = Number(process.env.BENCH_START_ROUNDS ?? 3);

/**
 * `npm start` on a built tree, from the command to the first 200 from /ready, as an operator's
 * restart sees it (npm, the build check, the gateway opening its data dir and catching up),
 * beside a bare `node -e ''` started the same way in the same run. The data dir is the one the
 * first start created, so what is measured is a restart. `npm run bench` builds before it runs.
 */
export async function benchStart(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-start-'));
  try {
    await startToReady(dataDir); // the first start creates keys and stores
    const node: number[] = [];
    const gateway: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      node.push(await timed(process.execPath, ['-e', '']));
      gateway.push(await startToReady(dataDir));
    }
    const ms = median(gateway);
    report({ name: `start: npm start on a built tree to /ready (median of ${ROUNDS}; ${gateway.map(Math.round).join(' ')} ms)`, value: ms, unit: 'ms', baseline: { name: "node -e ''", value: median(node) }, target: '< 2000 ms', met: ms < 2000 });
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function timed(command: string, args: string[]): Promise<number> {
  const started = performance.now();
  const proc = spawn(command, args, { stdio: 'ignore' });
  await once(proc, 'exit');
  return performance.now() - started;
}

/** Milliseconds from spawning `npm start` to a 200 from /ready, then stops it. */
async function startToReady(dataDir: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const proc = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    // Its own process group: npm's child (the gateway) is stopped with it.
    detached: true,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, MESSAGING_NETWORK: 'sandbox', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exited = false;
  proc.once('exit', () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error('npm start exited before /ready');
      if (performance.now() - started > 120_000) throw new Error('npm start: no /ready within 120 s');
      const ok = await fetch(`http://127.0.0.1:${port}/ready`).then((r) => r.ok, () => false);
      if (ok) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    if (!exited && proc.pid !== undefined) {
      process.kill(-proc.pid, 'SIGTERM');
      await once(proc, 'exit');
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStart();
