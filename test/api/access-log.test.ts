import { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { expect } from 'chai';
import { pino } from 'pino';
import { AccessLog } from '../../src/api/middleware/access-log.js';

/** A destination that keeps each write as it came. */
function sink() {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString('utf8'));
      done();
    },
  });
  return { writes, stream };
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

  it('writes the lines of one turn of the event loop in one write, in order, and the next turn in another', async () => {
    const out = sink();
    const log = new AccessLog(pino({ level: 'info' }, out.stream));
    for (let i = 0; i < 50; i++) log.record(`r-${i}`, 'GET', '/x', 200, 0.2);
    expect(out.writes).to.have.length(0);
    await nextTurn();
    expect(out.writes).to.have.length(1);
    log.record('r-50', 'GET', '/x', 200, 0.2);
    await nextTurn();
    expect(out.writes).to.have.length(2);
    expect(parsed(out.writes).map((l) => l.requestId)).to.deep.equal(Array.from({ length: 51 }, (_, i) => `r-${i}`));
  });

  it("follows the logger's level while it runs", () => {
    const logger = pino({ level: 'info' }, sink().stream);
    const log = new AccessLog(logger);
    expect(log.enabled).to.equal(true);
    logger.level = 'warn';
    expect(log.enabled).to.equal(false);
  });
});
