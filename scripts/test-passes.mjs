// `npm test`'s two mocha passes, run at the same time, each with mocha --parallel (one worker
// process per test file at a time, TEST_JOBS of them per pass, 2 unless set).
//
//   node scripts/test-passes.mjs            both passes (embedded, and adapters)
//   node scripts/test-passes.mjs embedded   the suites on the embedded stores
//   node scripts/test-passes.mjs adapters   the store-touching suites on the EventStoreDB and MongoDB test servers
//
// Why this is safe: every test gateway, test server and broker takes free ports and temp dirs of
// its own, and each suite's state lives in its own process (a worker per file). Why it is faster:
// most of the suite's time is spent waiting (leases lapsing, processes killed and restarted,
// brokers stopped, retries backing off), not computing, so files overlap well even on 2 cores.
// The embedded pass streams its output; the adapters' output follows it, so the log reads in order.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const jobs = process.env.TEST_JOBS ?? '2';

/** The adapters' pass: suites that read or write the log or the read models (README says which). */
const ADAPTER_DIRS = ['api', 'chats', 'media', 'helpdesk', 'billing', 'webhooks', 'sessions', 'history', 'stats', 'realtime', 'security', 'sends', 'groups', 'messages', 'process', 'bots'];
const ADAPTER_FILES = ['test/contract/gateway.esdb.test.ts'];

/**
 * Files that take a minute or more (measured with .ci/file-times.cjs), started first: a pass
 * lasts at least as long as its slowest file, so they must not be the last ones picked up.
 */
const SLOW_FIRST = [
  'test/cluster/two-nodes.test.ts',
  'test/cluster/claims.test.ts',
  'test/history/rebuild-serving.test.ts',
  'test/export/crash.test.ts',
  'test/export/export.test.ts',
  'test/bots/crash.test.ts',
  'test/cluster/sandbox-forwarding.test.ts',
  'test/cluster/forwarding.test.ts',
  'test/history/rebuild-thread.test.ts',
  'test/webhooks/crash.test.ts',
  'test/sends/crash.test.ts',
  'test/history/rebuild.test.ts',
];

function testFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

function slowFirst(files) {
  const slow = SLOW_FIRST.filter((f) => files.includes(f));
  return [...slow, ...files.filter((f) => !slow.includes(f))];
}

const PASSES = {
  embedded: { env: {}, files: () => slowFirst(testFiles('test')) },
  adapters: {
    env: { TEST_DOCSTORE: 'mongodb', TEST_EVENTSTORE: 'esdb' },
    files: () => slowFirst([...ADAPTER_DIRS.flatMap((d) => testFiles(join('test', d))), ...ADAPTER_FILES]),
  },
};

/** Runs one pass (banner, then mocha); its output goes to `write`; resolves with its exit code. */
function run(name, write) {
  const pass = PASSES[name];
  const env = { ...process.env, ...pass.env };
  const started = Date.now();
  const step = (command, args) =>
    new Promise((resolve) => {
      const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', write);
      child.stderr.on('data', write);
      child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
  return (async () => {
    const banner = await step('npx', ['tsx', 'test/servers/banner.ts', name]);
    if (banner !== 0) return banner;
    const code = await step('npx', ['mocha', '--parallel', '--jobs', jobs, ...pass.files()]);
    write(`\n# ${name} pass: exit ${code} after ${Math.round((Date.now() - started) / 1000)} s (TEST_JOBS=${jobs})\n`);
    return code;
  })();
}

const asked = process.argv[2];
if (asked && !PASSES[asked]) {
  console.error('usage: node scripts/test-passes.mjs [embedded|adapters]');
  process.exit(2);
}
const names = asked ? [asked] : ['embedded', 'adapters'];
const out = (chunk) => process.stdout.write(chunk);
let live = names[0];
const held = new Map(names.map((n) => [n, []]));
const writer = (name) => (chunk) => (name === live ? out(chunk) : held.get(name).push(chunk));
const codes = await Promise.all(
  names.map((name, i) =>
    run(name, writer(name)).then(async (code) => {
      // The first pass done: the next one's held output is printed, and it streams from then on.
      if (i === 0 && names[1]) {
        live = names[1];
        for (const chunk of held.get(names[1]).splice(0)) out(chunk);
      }
      return code;
    }),
  ),
);
process.exit(codes.some((c) => c !== 0) ? 1 : 0);
