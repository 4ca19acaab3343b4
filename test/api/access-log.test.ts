import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { pino } from 'pino';
import { ACCESS_LOG_GROUP_MS, AccessLog } from '../../src/api/middleware/access-log.js';

const run = promisify(execFile);

/** Resolves once `done` holds, checking every turn of the event loop. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await nextTurn();
}

/** A destination that keeps each write as it came, and when it came. */
function sink() {
  const writes: string[] = [];
  const at: number[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString('utf8'));
      at.push(performance.now());
      done();
    },
  });
  return { writes, at, stream };
}

const parsed = (writes: string[]) =>
  writes
    .join('')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the access log', () => {
  it("writes the line pino's logger.info would write, in any of the logger's formats", async () => {
    for (const options of [{ level: 'info', base: undefined }, { level: 'info' }, { level: 'info', messageKey: 'message', timestamp: pino.stdTimeFunctions.isoTime }]) {
      const ours = sink();
      const theirs = sink();
      new AccessLog(pino(options, ours.stream)).record('r-1', 'GET', '/instances/X', 200, 1.5);
      pino(options, theirs.stream).info({ requestId: 'r-1', method: 'GET', path: '/instances/X', status: 200, ms: 1.5 }, 'request');
      await nextTurn();
      const [line] = parsed(ours.writes);
      const [expected] = parsed(theirs.writes);
      expect(line).to.be.an('object');
      // The time is the only field that may differ between the two.
      expect({ ...line, time: 0 }).to.deep.equal({ ...expected, time: 0 });
      expect(Object.keys(line as object)).to.deep.equal(Object.keys(expected as object));
    }
  });

  it('keeps any path a client sends a valid JSON string', async () => {
    const out = sink();
    const log = new AccessLog(pino({ level: 'info' }, out.stream));
    const paths = ['/a"b', '/a\\b', '/new\nline', '/é/\u2028/\u0000', '/"}],"status":500,"x":{"'];
    for (const path of paths) log.record('r', 'GET', path, 404, 0.1);
    await nextTurn();
    const lines = parsed(out.writes);
    expect(lines.map((l) => l.path)).to.deep.equal(paths);
    expect(lines.every((l) => l.status === 404)).to.equal(true);
  });

  it("writes a quiet moment's lines in the next turn, and a busy period's in one write per group, in order", async () => {
    const out = sink();
    const log = new AccessLog(pino({ level: 'info' }, out.stream));
    for (let i = 0; i < 50; i++) log.record(`r-${i}`, 'GET', '/x', 200, 0.2);
    expect(out.writes).to.have.length(0);
    await nextTurn();
    expect(out.writes).to.have.length(1);
    // Just after a write: these wait for the group's end, then go out together.
    for (let i = 50; i < 60; i++) log.record(`r-${i}`, 'GET', '/x', 200, 0.2);
    await until(() => out.writes.length === 2);
    await new Promise((resolve) => setTimeout(resolve, 2 * ACCESS_LOG_GROUP_MS));
    expect(out.writes).to.have.length(2);
    const [first, second] = out.at as [number, number];
    expect(second - first).to.be.at.least(ACCESS_LOG_GROUP_MS - 1);
    expect(parsed(out.writes).map((l) => l.requestId)).to.deep.equal(Array.from({ length: 60 }, (_, i) => `r-${i}`));
  });

  it('writes the lines still waiting when the process exits', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'access-log-'));
    try {
      const file = join(dir, 'log');
      // The gateway's own destination (asynchronous sonic-boom on a descriptor); the process exits while lines wait.
      const script = [
        `import { openSync } from 'node:fs';`,
        `import { pino } from 'pino';`,
        `import { AccessLog } from ${JSON.stringify(new URL('../../src/api/middleware/access-log.ts', import.meta.url).pathname)};`,
        `const log = new AccessLog(pino({ level: 'info' }, pino.destination({ dest: openSync(${JSON.stringify(file)}, 'w'), sync: false })));`,
        `log.record('first', 'GET', '/x', 200, 0.1);`,
        `setImmediate(() => { for (let i = 0; i < 100; i++) log.record('r-' + i, 'GET', '/x', 200, 0.1); process.exit(0); });`,
      ].join('\n');
      await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
      const ids = parsed([await readFile(file, 'utf8')]).map((l) => l.requestId);
      expect(ids).to.deep.equal(['first', ...Array.from({ length: 100 }, (_, i) => `r-${i}`)]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("follows the logger's level while it runs", () => {
    const logger = pino({ level: 'info' }, sink().stream);
    const log = new AccessLog(logger);
    expect(log.enabled).to.equal(true);
    logger.level = 'warn';
    expect(log.enabled).to.equal(false);
  });
});
