/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiFor, newAccount, newInstance, type Api, type TestAccount } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/process.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { startEventStoreTestServer, type EventStoreTestServer } from '../servers/eventstore/server.js';
import { startMongoTestServer, type MongoTestServer } from '../servers/mongodb/server.js';
import { freshDatabase } from '../servers/mongodb/targets.js';
import { Receiver } from '../webhooks/support/receiver.js';
import { MongoDocumentStore } from '../../src/infra/docstore/mongodb/mongodb-document-store.js';
import { SEND_QUEUE, type QueuedSendDoc } from '../../src/projections/sends/send-queue-projection.js';
import { MongoClient } from 'mongodb';
import { settled, settledOwnersIn } from './shared-backends.js';

/**
 * Two gateway processes on one EventStoreDB and one MongoDB (the test servers, over their real
 * protocols): webhook work is claimed, so each delivery is attempted by one node at a time, and a
 * node killed with SIGKILL has its work taken over once its claims lapse (LEASE_TTL_MS).
 */

// Short, for the takeover to be quick; long enough that a loaded machine renews in time.
const TTL_MS = 4000;

describe('work claimed across two gateway nodes (shared EventStoreDB and MongoDB)', function () {
  this.timeout(180_000);
  let eventstore: EventStoreTestServer;
  let mongodb: MongoTestServer;
  let rx: Receiver;
  const dirs: string[] = [];
  const running: GatewayProcess[] = [];
  let env: Record<string, string>;

  beforeEach(async () => {
    eventstore = await startEventStoreTestServer();
    mongodb = await startMongoTestServer();
    rx = await new Receiver().start();
    env = {
      EVENTSTORE_URL: eventstore.url,
      MONGODB_URL: mongodb.urlFor(freshDatabase('claims')),
      MESSAGING_NETWORK: 'sandbox',
      ALLOW_PRIVATE_TARGETS: 'true',
      LEASE_TTL_MS: String(TTL_MS),
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_RETRY_MAX_MS: '300',
      LOG_LEVEL: 'info',
    };
  });
  afterEach(async () => {
    for (const gw of running.splice(0)) if (gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
    await rx.stop();
    await Promise.all([eventstore.close(), mongodb.close()]);
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });

  /** Each node has its own data dir; both hold the same server and JWT keys, as in docker-compose.yml. */
  const keys = { server: randomBytes(32).toString('base64'), jwt: randomBytes(32).toString('base64') };
  async function startNode(): Promise<GatewayProcess> {
    const dir = await mkdtemp(join(tmpdir(), 'gw-node-'));
    dirs.push(dir);
    for (const [name, key] of Object.entries(keys)) await writeFile(join(dir, `${name}.key`), key, { mode: 0o600 });
    const node = await spawnGateway({ ...env, DATA_DIR: dir });
    running.push(node);
    return node;
  }

  /** An instance with a webhook, paired on `api`'s node, and a contact who writes to it. */
  async function pairedInstance(api: Api) {
    const owner = await newAccount(api);
    const instance = await newInstance(api, owner, { webhook: rx.url, events_subscribe: ['Message'] });
    const own = await newPhone(api, owner);
    const contact = await newPhone(api, owner);
    await pairByQr(api, owner, instance.id, own.phone);
    return { owner, instance, own, contact };
  }

  async function sendMessages(api: Api, owner: TestAccount, from: string, to: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await api('POST', `/sandbox/phones/${from}/messages`, { token: owner.jwt, body: { to, text: `message ${i}` } });
      if (res.status !== 201) throw new Error(`send ${i}: ${res.status} ${res.text}`);
      ids.push(res.body.message_id as string);
    }
    return ids;
  }

  /** Per delivery id: how many requests arrived, and the most in flight at once. */
  function trackAttempts() {
    const attempts = new Map<string, number>();
    const inFlight = new Map<string, number>();
    let overlapping = 0;
    return {
      attempts,
      get overlapping() {
        return overlapping;
      },
      begin(id: string) {
        attempts.set(id, (attempts.get(id) ?? 0) + 1);
        const now = (inFlight.get(id) ?? 0) + 1;
        if (now > 1) overlapping++;
        inFlight.set(id, now);
      },
      end(id: string) {
        inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
      },
    };
  }

  it('attempts each delivery on one node at a time: first attempts by the lane owner, retries claimed by either', async () => {
    const total = 40;
    const track = trackAttempts();
    // Every first attempt fails (503), so every delivery goes through the retry queues both nodes read.
    // An attempt is in flight from its arrival until its answer is written; a retry jittered to a
    // few milliseconds after a failed answer is not an overlap.
    rx.respond = (r) => {
      const id = r.body.id as string;
      track.begin(id);
      const first = track.attempts.get(id) === 1;
      return { status: first ? 503 : 200, delayMs: 50 };
    };
    rx.onDone = (r) => track.end(r.body.id as string);
    const a = await startNode();
    const b = await startNode();
    const api = apiFor(a.url);
    const { owner, own, contact } = await pairedInstance(api);
    const sent = await sendMessages(api, owner, contact.phone, own.phone, total);

    const delivered = () => new Set(rx.received.map((r) => r.body.event.Info.ID as string));
    await waitFor(() => sent.every((id) => delivered().has(id)), 'every message delivered', 120_000).catch((e) => {
      // What the nodes said beyond info, for whoever reads the failure.
      for (const node of [a, b]) console.log(node.logs.filter((l) => !l.includes('"level":30')).slice(-20).join('\n'));
      throw e;
    });
    // Settle: anything sent twice would arrive within a few claim periods.
    await new Promise((r) => setTimeout(r, 2 * TTL_MS));

    const successes = new Map<string, number>();
    for (const r of rx.received) successes.set(r.body.id, (successes.get(r.body.id) ?? 0) + 1);
    const twice = [...successes].filter(([, n]) => n > 1);
    const attemptCounts = [...track.attempts.values()];
    console.log(`      two nodes: ${successes.size} deliveries, ${rx.requests} requests, ${twice.length} delivered twice, ${track.overlapping} attempted on both nodes at once`);
    expect(successes.size).to.equal(total);
    expect(twice, 'deliveries POSTed successfully more than once').to.deep.equal([]);
    expect(track.overlapping, 'attempts of one delivery in flight together').to.equal(0);
    // One failing first attempt and one successful retry each. More only when a node stopped an
    // attempt itself because its claim was about to lapse (a slow machine), never two at once.
    expect(attemptCounts.every((n) => n >= 2), `attempts per delivery: ${attemptCounts.join(',')}`).to.equal(true);
    const extra = attemptCounts.filter((n) => n > 2).length;
    expect(extra, `deliveries attempted more than twice: ${extra}`).to.be.at.most(total / 10);
    // Both nodes stay up and stop cleanly, releasing their claims.
    for (const node of [a, b]) node.child.kill('SIGTERM');
    expect(await a.exited).to.equal(0);
    expect(await b.exited).to.equal(0);
  });

  it('has a killed node\'s lane taken over by the other once its claim lapses, nothing lost', async () => {
    const total = 30;
    const answered = new Set<string>();
    let hold = false;
    const held = new Set<string>();
    rx.respond = (r) => {
      if (hold) {
        held.add(r.body.id);
        return 'hang';
      }
      answered.add(r.body.id);
      return 200;
    };
    // The lane is claimed by the first node before the second starts.
    const a = await startNode();
    const api = apiFor(a.url);
    const { owner, own, contact } = await pairedInstance(api);
    const warmup = await sendMessages(api, owner, contact.phone, own.phone, 2);
    await waitFor(() => rx.received.length >= warmup.length, 'the first deliveries, from the first node', 30_000);
    const b = await startNode();

    // The receiver stops answering: the first node's attempts hang, and a backlog queues behind them.
    hold = true;
    const sent = [...warmup, ...(await sendMessages(api, owner, contact.phone, own.phone, total))];
    await waitFor(() => held.size >= 1, 'an attempt in flight on the first node', 30_000);
    const inFlightAtKill = new Set(held);
    a.child.kill('SIGKILL');
    expect(await a.exited).to.equal(null);
    const killedAt = Date.now();
    hold = false;

    const delivered = () => new Set(rx.received.map((r) => r.body.event.Info.ID as string));
    await waitFor(() => sent.every((id) => delivered().has(id)), 'every message delivered by the second node', 120_000);
    const firstAfter = rx.received.find((r) => r.at >= killedAt);
    const tookOverMs = (firstAfter?.at ?? Date.now()) - killedAt;
    await new Promise((r) => setTimeout(r, TTL_MS));

    const successes = new Map<string, number>();
    for (const r of rx.received) successes.set(r.body.id, (successes.get(r.body.id) ?? 0) + 1);
    const twice = [...successes].filter(([, n]) => n > 1).map(([id]) => id);
    console.log(`      takeover: ${sent.length} messages, deliveries moved ${tookOverMs} ms after the kill (claim TTL ${TTL_MS} ms), ${twice.length} delivered twice`);
    expect(successes.size).to.equal(sent.length);
    // Not before the dead node's claim could have lapsed, and well within a few claim periods.
    expect(tookOverMs).to.be.within(TTL_MS / 2, 6 * TTL_MS);
    expect(twice, 'delivered twice').to.deep.equal([]);
    // What hung at the kill was attempted again by the second node (at least once).
    for (const id of inFlightAtKill) expect(successes.get(id)).to.equal(1);
    b.child.kill('SIGTERM');
    expect(await b.exited).to.equal(0);
  });

  it('sends queued messages once each, from the node whose session is connected, untouched by the other', async () => {
    // One send every 2 s: a busy machine's HTTP answer (seen above 500 ms at load 22) must not outlast the
    // gap, or a send goes out at once instead of being queued.
    env = { ...env, SEND_RATE_PER_MIN: '30', SEND_JITTER_MS: '0' };
    const a = await startNode();
    const b = await startNode();
    const api = apiFor(a.url);
    const { owner, instance, own, contact } = await pairedInstance(api);
    // The session may move to the other node after its pairing (placement, issue 34): sent once it has settled.
    const client = new MongoClient(env.MONGODB_URL as string);
    try {
      await settled({ settledOwners: (n) => settledOwnersIn(client.db(), n) }, 2);
    } finally {
      await client.close();
    }
    await waitFor(async () => (await api('GET', `/instances/${instance.id}/session/status`, { token: owner.jwt })).body?.data?.connected === true, 'the session connected on its node', 30_000);
    const texts = ['q1', 'q2', 'q3', 'q4', 'q5'];
    const answers = [];
    // As a client sends: a session changing nodes meanwhile (a lease lost on a starved machine) answers 409 not_connected or 503 for that pause.
    const send = async (message: string) => {
      for (let tries = 0; ; tries++) {
        const res = await api('POST', `/instances/${instance.id}/chat/send/text`, { token: owner.jwt, body: { phone: contact.phone, message } });
        if ((res.status !== 409 && res.status !== 503) || tries >= 20) return res;
        await new Promise((r) => setTimeout(r, 500));
      }
    };
    for (const message of texts) answers.push(await send(message));
    expect(answers.map((r) => r.status)).to.deep.equal(texts.map(() => 200));
    expect(answers.slice(1).every((r) => r.body.data.status === 'queued')).to.equal(true);
    const inbox = async () => (await api('GET', `/sandbox/phones/${contact.phone}/inbox`, { token: owner.jwt })).body.messages as any[];
    // 30 a minute is one every 2 s: the other node pushing a send back (not connected there) would show as seconds more.
    const started = Date.now();
    await waitFor(async () => (await inbox()).length === texts.length, 'every send received', 60_000);
    const tookMs = Date.now() - started;
    const got = await inbox();
    expect(got.map((m) => m.text)).to.deep.equal(texts);
    expect(got.map((m) => m.message_id)).to.deep.equal(answers.map((r) => r.body.data.message_id));
    const store = await MongoDocumentStore.open({ url: env.MONGODB_URL as string });
    try {
      const queued = await store.collection<QueuedSendDoc>(SEND_QUEUE).find({ instance_id: instance.id });
      // One attempt each: the node without the session never counted one, nor pushed one back.
      expect(queued.map((q) => [q.state, q.attempts])).to.deep.equal(texts.slice(1).map(() => ['sent', 1]));
    } finally {
      await store.close();
    }
    console.log(`      queued sends: ${texts.length} received once each in ${tookMs} ms, from the connected node`);
    expect(tookMs).to.be.below(20_000);
    for (const node of [a, b]) node.child.kill('SIGTERM');
    expect(await a.exited).to.equal(0);
    expect(await b.exited).to.equal(0);
  });

  it('records a due billing transition once, with both nodes\' timers acting on it', async () => {
    // A trial of about four seconds; each node's billing timer looks every second.
    env = { ...env, TRIAL_DAYS: '0.00005' };
    const a = await startNode();
    const b = await startNode();
    const owner = await newAccount(apiFor(a.url));
    const instance = await newInstance(apiFor(a.url), owner);
    const status = async () => (await apiFor(b.url)('GET', `/instances/${instance.id}`, { token: owner.jwt })).body.billing_status as string;
    await waitFor(async () => (await status()) === 'EXPIRED', 'the trial expired', 30_000);
    // Both timers have looked several times since.
    await new Promise((r) => setTimeout(r, 3000));
    const history = await apiFor(b.url)('GET', `/instances/${instance.id}/history?types=TrialExpired`, { token: owner.jwt });
    expect(history.status).to.equal(200);
    expect(history.body.events.map((e: any) => e.type)).to.deep.equal(['TrialExpired']);
    for (const node of [a, b]) node.child.kill('SIGTERM');
    expect(await a.exited).to.equal(0);
    expect(await b.exited).to.equal(0);
  });
});
