/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/infra/config/config.js';
import { silentProgress } from '../../src/rebuild/progress.js';
import { READ_MODELS } from '../../src/rebuild/read-models.js';
import { runRebuild } from '../../src/rebuild/run.js';
import { pairedInstance, phoneSends } from '../support/chats.js';
import { newAccount, onTestServers, startTestGateway, testBackendsFor, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, waitFor } from '../support/sandbox.js';
import { Receiver } from '../webhooks/support/receiver.js';

describe('npm run rebuild', () => {
  let dir: string;
  let receiver: Receiver;
  let owner: TestAccount;
  let instanceId: string;
  const env = { MESSAGING_NETWORK: 'sandbox' };

  /** Runs a gateway on the shared data dir until `body` is done and every projection caught up. */
  async function withGateway(body: (t: TestGateway) => Promise<void>): Promise<void> {
    const t = await startTestGateway(env, {}, dir);
    try {
      await body(t);
      await waitFor(async () => (await t.api('GET', '/ready')).status === 200, 'projections caught up');
    } finally {
      await t.stop();
    }
  }

  // On the gateways' backends: their test servers when TEST_DOCSTORE / TEST_EVENTSTORE are set.
  const written: string[] = [];
  const rebuild = async (names: string[] = []) => runRebuild(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', ...env, ...(await testBackendsFor(dir)) }), names, silentProgress, (line) => written.push(line));

  before(async function () {
    this.timeout(20_000);
    dir = await mkdtemp(join(tmpdir(), 'rebuild-'));
    receiver = await new Receiver().start();
    await withGateway(async (t) => {
      owner = await newAccount(t.api);
      const me = await pairedInstance(t, owner);
      instanceId = me.id;
      const peer = await newPhone(t.api, owner);
      await t.api('POST', `/instances/${me.id}/webhook`, { token: owner.jwt, body: { webhookURL: receiver.url, events: 'All' } });
      const group = await t.api('POST', '/sandbox/groups', { token: owner.jwt, body: { name: 'rebuilt', owner: peer.phone, participants: [me.phone] } });
      expect(group.status, group.text).to.be.oneOf([200, 201]);
      for (let i = 0; i < 5; i++) await phoneSends(t, owner, peer.phone, me.phone, { text: `message ${i}` });
      await t.api('POST', `/instances/${me.id}/chat/send/text`, { token: owner.jwt, body: { phone: peer.phone, message: 'reply' } });
      await t.api('PATCH', `/instances/${me.id}`, { token: owner.jwt, body: { name: 'before the rebuild' } });
      await waitFor(() => receiver.received.length >= 6, 'deliveries');
      await waitFor(async () => (await t.api('GET', `/instances/${me.id}/history?types=WebhookDelivered`, { token: owner.jwt })).body.events.length >= 6, 'outcomes');
    });
  });
  after(async () => {
    await receiver.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('rebuilds every read model from an unchanged log to the same checksums, and again', async () => {
    const first = await rebuild();
    expect(first.results.map((r) => r.name)).to.deep.equal(READ_MODELS.map((m) => m.name));
    for (const r of first.results) expect(r.after, r.name).to.deep.equal(r.before);
    const counted = Object.fromEntries(first.results.map((r) => [r.name, r.after.documents]));
    for (const name of ['accounts', 'instances', 'sessions', 'groups', 'chats', 'history', 'stats']) expect(counted[name], name).to.be.greaterThan(0);
    expect(first.stats.events).to.be.greaterThan(20);
    // On the embedded stores (no test servers named) chats folds on a worker thread, and says so.
    const embedded = !onTestServers();
    expect(first.stats.onThread).to.deep.equal(embedded ? ['chats'] : []);
    expect(written.includes('folded on a worker thread beside the others: chats')).to.equal(embedded);
    const second = await rebuild(['history', 'stats']);
    expect(second.results.map((r) => [r.name, r.after.sha256])).to.deep.equal(first.results.filter((r) => ['history', 'stats'].includes(r.name)).map((r) => [r.name, r.after.sha256]));
  });

  it('refuses an unknown read model and rebuilds nothing', async () => {
    let error: unknown;
    await rebuild(['history', 'webhooks']).catch((err: unknown) => (error = err));
    expect(String(error)).to.match(/unknown read model: webhooks/);
  });

  it('leaves a gateway that serves the rebuilt models, goes on from the swap, and sends nothing again', async () => {
    const before = receiver.received.length;
    await withGateway(async (t) => {
      const token = (await t.api('POST', '/auth/login', { body: { email: owner.email, password: owner.password } })).body.access_token;
      const instance = await t.api('GET', `/instances/${instanceId}`, { token });
      expect(instance.body).to.include({ name: 'before the rebuild' });
      expect((await t.api('PATCH', `/instances/${instanceId}`, { token, body: { name: 'after the rebuild' } })).body).to.include({ name: 'after the rebuild' });
      await waitFor(async () => {
        const events = (await t.api('GET', `/instances/${instanceId}/history?types=InstanceUpdated`, { token })).body.events;
        return events.map((e: any) => e.data.name).join() === 'before the rebuild,after the rebuild';
      }, 'the new event in history, once');
      const chats = await t.api('GET', `/instances/${instanceId}/chats`, { token });
      expect(chats.status).to.equal(200);
      await new Promise((r) => setTimeout(r, 300));
    });
    // The reconnect at start is news (Connected); nothing delivered before is delivered again.
    const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
    expect(new Set(ids).size, 'no delivery twice').to.equal(ids.length);
    expect(receiver.received.slice(before).map((r) => r.body.type)).to.not.include('Message');
    // And the models the running gateway extended still rebuild to what it left.
    for (const r of (await rebuild()).results) expect(r.after, r.name).to.deep.equal(r.before);
  });
});
