/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/infra/config/config.js';
import type { EventData } from '../../src/infra/eventstore/port.js';
import { controlSocketPath } from '../../src/rebuild/control.js';
import type { Progress } from '../../src/rebuild/progress.js';
import { READ_MODELS } from '../../src/rebuild/read-models.js';
import { runRebuild } from '../../src/rebuild/run.js';
import { pairedInstance, phoneSends } from '../support/chats.js';
import { newAccount, onTestServers, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, waitFor } from '../support/sandbox.js';

/** Enough log for a rebuild to take a while under load, so requests land during it. */
const BULK_EVENTS = 12_000;

/** A phone's chatter, appended to the gateway's own log as its session recorder would. */
function received(instanceId: string, peer: string, i: number): EventData {
  const chat = `${peer}@s.whatsapp.net`;
  const message = { id: `BULK${i}`, chat, sender: chat, from_me: false, is_group: false, push_name: 'Peer', timestamp_s: 1_893_456_000 + i, type: 'text', text: `bulk ${i}` };
  return { id: randomUUID(), type: 'MessageReceived', data: { message, upsert: 'notify' }, metadata: { instanceId, occurredAt: new Date(1_893_456_000_000 + i * 1000).toISOString() } };
}

/** One line to the control socket, every line it answers. */
async function ask(dataDir: string, line: string): Promise<any[]> {
  const socket = connect(controlSocketPath(dataDir));
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => socket.write(`${line}\n`));
    socket.once('error', reject);
    socket.once('close', () => resolve());
  });
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

describe('npm run rebuild while the gateway serves', function () {
  // 12,000 events through every projection on the MongoDB wire-protocol test server (mingo) take minutes on a busy machine.
  this.timeout(480_000);
  let dir: string;
  let t: TestGateway;
  let owner: TestAccount;
  let instanceId: string;
  let peer: string;
  let myPhone: string;

  const rebuild = (names: string[], progress: Progress) => runRebuild(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' }), names, progress, () => {});
  const quiet: Progress = { start() {}, advance() {}, end() {} };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebuild-live-'));
    // Whatever backends the suite runs (TEST_DOCSTORE, TEST_EVENTSTORE): the CLI asks the gateway
    // over its control socket either way, and cannot open the data directory it holds.
    // One node serves here: with both backends shared a gateway is one of several nodes, and those
    // refuse a rebuild while serving (test/cluster/rebuild-guard.test.ts). The read models still
    // go to the MongoDB test server under TEST_DOCSTORE.
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox', ...(onTestServers() ? { EVENTSTORE_URL: '' } : {}) }, {}, dir);
    owner = await newAccount(t.api);
    const me = await pairedInstance(t, owner);
    instanceId = me.id;
    myPhone = me.phone;
    peer = (await newPhone(t.api, owner)).phone;
    await phoneSends(t, owner, peer, me.phone, { text: 'before the bulk' });
    for (let n = 0; n < BULK_EVENTS; n += 500) {
      await t.gateway.events.append(`session-${instanceId}`, Array.from({ length: 500 }, (_, i) => received(instanceId, peer, n + i)), 'any');
    }
    await waitFor(async () => (await t.api('GET', '/ready')).status === 200, 'projections caught up', 300_000);
  });
  after(async () => {
    await t?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps answering requests and projecting new events during the rebuild, swaps, and goes on from the swap', async () => {
    // From the first event replayed to the last (then the swap, the checksums, the old ones dropped).
    let replaying = false;
    let done = false;
    const progress: Progress = { start: () => (replaying = true), advance() {}, end: () => (replaying = false) };
    const names: string[] = [];
    const during: string[] = [];
    // Requests all along: a rename, read back at once (read-your-writes), and the chat list.
    const traffic = (async () => {
      for (let i = 0; !done; i++) {
        const name = `live ${i}`;
        const sent = replaying;
        const patched = await t.api('PATCH', `/instances/${instanceId}`, { token: owner.jwt, body: { name } });
        expect(patched.status, patched.text).to.equal(200);
        names.push(name);
        const read = await t.api('GET', `/instances/${instanceId}`, { token: owner.jwt });
        expect(read.status).to.equal(200);
        expect(read.body.name).to.equal(name);
        const chats = await t.api('GET', `/instances/${instanceId}/chats`, { token: owner.jwt });
        expect(chats.status).to.equal(200);
        if (sent && replaying) during.push(name);
      }
    })();
    const outcome = await rebuild([], progress).finally(() => (done = true));
    await traffic;
    expect(outcome.where).to.equal('gateway');
    expect(outcome.results.map((r) => r.name)).to.deep.equal(READ_MODELS.map((m) => m.name));
    expect(outcome.stats.events).to.be.greaterThan(BULK_EVENTS);
    expect(during.length, 'renames sent, answered and read back while the rebuild replayed').to.be.greaterThan(0);
    if (process.env.REBUILD_TEST_VERBOSE) console.log(`${during.length} renames during a rebuild of ${outcome.stats.events} events in ${outcome.stats.seconds.toFixed(2)} s`);

    // After the swap: a new event is projected into the new collections, once, in order.
    const renamed = await t.api('PATCH', `/instances/${instanceId}`, { token: owner.jwt, body: { name: 'after the swap' } });
    expect(renamed.body.name).to.equal('after the swap');
    expect((await t.api('GET', `/instances/${instanceId}`, { token: owner.jwt })).body.name).to.equal('after the swap');
    // And a message, for the chats, statistics and history the second rebuild checks.
    await phoneSends(t, owner, peer, myPhone, { text: 'after the swap' });
    await waitFor(async () => {
      const page = await t.api('GET', `/instances/${instanceId}/history?types=InstanceUpdated&limit=1000`, { token: owner.jwt });
      return page.status === 200 && page.body.events.map((e: any) => e.data.name).join() === [...names, 'after the swap'].join();
    }, 'every rename in history, once each, in order', 15_000);
    const stats = await t.api('GET', `/instances/${instanceId}/stats`, { token: owner.jwt });
    expect(stats.status).to.equal(200);

    // The models the live projections extended from the swap rebuild to themselves.
    await waitFor(async () => (await t.api('GET', '/ready')).status === 200, 'projections caught up', 15_000);
    const again = await rebuild([], quiet);
    for (const r of again.results) expect(r.after, r.name).to.deep.equal(r.before);
    for (const name of ['accounts', 'instances', 'chats', 'history', 'stats']) expect(again.results.find((r) => r.name === name)?.after.documents, name).to.be.greaterThan(0);
  });

  it('listens only for the data directory owner and refuses a bad request without rebuilding', async () => {
    const socket = await stat(controlSocketPath(dir));
    expect(socket.isSocket()).to.equal(true);
    expect(socket.mode & 0o077, 'no access for group or others').to.equal(0);
    expect(await ask(dir, 'not json')).to.deep.equal([{ error: 'not a JSON request' }]);
    expect((await ask(dir, JSON.stringify({ rebuild: ['history'], extra: 1 })))[0]).to.have.property('error');
    expect((await ask(dir, JSON.stringify({ rebuild: ['webhooks'] })))[0]).to.deep.include({ unknown: true });
    let error: unknown;
    await rebuild(['history', 'webhooks'], quiet).catch((err: unknown) => (error = err));
    expect(String(error)).to.match(/unknown read model: webhooks/);
    // Still serving, with the rebuilt models.
    expect((await t.api('GET', `/instances/${instanceId}`, { token: owner.jwt })).status).to.equal(200);
  });
});
