// `npm test`'s two mocha passes, run at the same time: the embedded one with mocha --parallel (one
// worker process per test file at a time, TEST_JOBS of them, 2 unless set), the adapters' one file
// after file; then the few suites that time deadlines, on their own. TEST_JOBS=1 runs
// the passes one after the other, each file after the other in one process, printing each file's
// time (.ci/file-times.cjs): the way to find a failure that only shows with company.
//
//   node scripts/test-passes.mjs            both passes (embedded, and adapters)
//   node scripts/test-passes.mjs embedded   the suites on the embedded stores
//   node scripts/test-passes.mjs adapters   the store-touching suites on the EventStoreDB and MongoDB test servers
//   node scripts/test-passes.mjs alone      the suites that time deadlines
//
// Why this is safe: every test gateway, test server and broker takes free ports and temp dirs of
// its own, and each suite's state lives in its own process (a worker per file). Why it is faster:
// much of the suite's time is spent waiting (leases lapsing, processes killed and restarted,
// brokers stopped, retries backing off): file after file it keeps about one core busy, so a
// second and third file at once use the other.
// The embedded pass streams its output; the adapters' output follows it, so the log reads in order.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const jobs = process.env.TEST_JOBS ?? '2';
const serial = jobs === '1';

/**
 * The adapters' pass: the suites that, between them, run every part of the MongoDB and
 * EventStoreDB adapters, of the test servers speaking their protocols, of the query operators
 * (mingo behind the MongoDB test server) and of the code that runs another way on a node among
 * many (leases, claims, checkpoints every batch) that the whole set of HTTP suites runs there.
 * Chosen with `.ci/adapter-coverage.mjs select` over the per-file coverage of a pass of all 142
 * files (`.ci/file-coverage.cjs`), checked with `.ci/adapter-coverage.mjs compare`; with every
 * crash and restart suite on top, since what survives a kill depends on the store's durability,
 * which coverage does not measure. Rerun both when a suite or an adapter changes (README).
 */
export const ADAPTER_FILES = [
  // chosen by coverage
  'test/api/accounts.test.ts',
  'test/api/idempotency.test.ts',
  'test/api/mongodb-backend.test.ts',
  'test/api/tokens-registry.test.ts',
  'test/bots/bots.test.ts',
  'test/groups/account-settings.test.ts',
  'test/helpdesk/bridge.test.ts',
  'test/helpdesk/callback-security.test.ts',
  'test/history/rebuild-fold.test.ts',
  'test/history/rebuild-serving.test.ts',
  'test/history/rebuild-steps.test.ts',
  'test/messages/conversation.test.ts',
  'test/messages/old-layout.test.ts',
  'test/messages/retention.test.ts',
  'test/realtime/metrics.test.ts',
  'test/realtime/rate-limits.test.ts',
  'test/sends/sending.test.ts',
  'test/sessions/baileys/pre-key-durability.test.ts',
  'test/sessions/real-network.test.ts',
  'test/webhooks/delivery.test.ts',
  'test/webhooks/http.test.ts',
  'test/webhooks/retention.test.ts',
  'test/contract/gateway.esdb.test.ts',
  // added since the selection: a lane lost and taken back, which only a node among many meets
  'test/webhooks/lane-retaken.test.ts',
  // crash and restart
  'test/webhooks/crash.test.ts',
  'test/sends/crash.test.ts',
  'test/bots/crash.test.ts',
  'test/sessions/sandbox-restart.test.ts',
  'test/process/lifecycle.test.ts',
  'test/billing/timer-restart.test.ts',
];

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

/**
 * Suites whose deadlines are the subject (rebalancing within 2 × LEASE_TTL_MS of a kill): they run
 * after both passes, on their own, so what they time is the gateway and not its neighbours.
 */
const ALONE = ['test/cluster/balanced.test.ts'];

// The adapters' pass is one mocha process, file after file: its suites are the heaviest per test
// (nodes among many on the test servers) and beside the embedded pass's two workers it keeps the
// machine at three; its file times are printed too.
const PASSES = {
  embedded: { env: {}, jobs, files: () => slowFirst(testFiles('test')).filter((f) => !ALONE.includes(f)) },
  adapters: { env: { TEST_DOCSTORE: 'mongodb', TEST_EVENTSTORE: 'esdb' }, jobs: '1', files: () => slowFirst(ADAPTER_FILES) },
  alone: { env: {}, jobs: '1', files: () => ALONE },
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
    const one = serial || pass.jobs === '1';
    const mode = one ? ['--reporter', '.ci/file-times.cjs'] : ['--parallel', '--jobs', pass.jobs];
    const code = await step('npx', ['mocha', ...mode, ...pass.files()]);
    write(`\n# ${name} pass: exit ${code} after ${Math.round((Date.now() - started) / 1000)} s (${one ? 'file after file' : `${pass.jobs} files at once`})\n`);
    return code;
  })();
}

const asked = process.argv[2];
if (asked && !PASSES[asked]) {
  console.error('usage: node scripts/test-passes.mjs [embedded|adapters|alone]');
  process.exit(2);
}
const names = asked ? [asked] : ['embedded', 'adapters'];
const out = (chunk) => process.stdout.write(chunk);
let live = names[0];
const held = new Map(names.map((n) => [n, []]));
const writer = (name) => (chunk) => (name === live ? out(chunk) : held.get(name).push(chunk));
const codes = serial
  ? await names.reduce(async (done, name) => [...(await done), await run(name, out)], Promise.resolve([]))
  : await Promise.all(
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
if (!asked) codes.push(await run('alone', out));
process.exit(codes.some((c) => c !== 0) ? 1 : 0);
