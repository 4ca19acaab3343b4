/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { freshDatabase } from '../servers/mongodb/targets.js';
import { startMongoTestServer, type MongoTestServer } from '../servers/mongodb/server.js';
import { newAccount, newInstance, startTestGateway, type TestGateway } from '../support/gateway.js';
import { newPhone, pairByQr, status, waitFor } from '../support/sandbox.js';

/**
 * The gateway with MONGODB_URL set: read models in MongoDB (the wire-protocol test server, one
 * database per test), the event log still embedded in DATA_DIR. Everything goes through HTTP.
 */
describe('gateway on MongoDB read models (MONGODB_URL, over the wire-protocol test server)', function () {
  this.timeout(30_000);
  let server: MongoTestServer;
  let dataDir: string;
  let database: string;
  let gw: TestGateway | undefined;

  before(async () => (server = await startMongoTestServer()));
  after(async () => server.close());
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-mongo-'));
    database = freshDatabase('gateway');
  });
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  const start = async (): Promise<TestGateway> => {
    gw = await startTestGateway({ MONGODB_URL: server.urlFor(database), EVENTSTORE_URL: '', MESSAGING_NETWORK: 'sandbox' }, {}, dataDir);
    return gw;
  };

  /** Every document of every collection of the test's database, for looking at what was stored. */
  async function storedDocuments(): Promise<Record<string, unknown[]>> {
    const client = new MongoClient(server.urlFor(database));
    try {
      const db = client.db();
      const out: Record<string, unknown[]> = {};
      for (const { name } of await db.listCollections().toArray()) out[name] = await db.collection(name).find({}).toArray();
      return out;
    } finally {
      await client.close();
    }
  }

  it('signs up, creates, lists, sets a webhook and pairs a session, with the read models in MongoDB', async () => {
    const { api } = await start();
    const owner = await newAccount(api);
    const instance = await newInstance(api, owner, { name: 'on mongo' });

    const list = await api('POST', '/instances/list', { token: owner.jwt, body: {} });
    expect(list.status).to.equal(200);
    expect(list.body.total).to.equal(1);
    expect(list.body.content.map((i: any) => i.id)).to.deep.equal([instance.id]);

    const hook = await api('POST', `/instances/${instance.id}/webhook`, { token: owner.jwt, body: { webhookURL: 'http://127.0.0.1:9/in', events: 'Message,Connected' } });
    expect(hook.body).to.deep.equal({ code: 200, success: true, data: { webhook: 'http://127.0.0.1:9/in', events: 'Message,Connected' } });
    const shown = await api('GET', `/instances/${instance.id}`, { token: owner.jwt });
    expect(shown.body).to.include({ webhook: 'http://127.0.0.1:9/in', events_subscribe: 'Message,Connected' });

    expect((await api('GET', `/instances/${instance.id}/session/status`, { token: owner.jwt })).body).to.deep.equal({ code: 200, success: true, data: { connected: false } });
    const phone = await newPhone(api, owner, { push_name: 'Mongo' });
    await pairByQr(api, owner, instance.id, phone.phone);
    expect(await status(api, owner, instance.id)).to.include({ connected: true });

    const ready = await api('GET', '/ready');
    expect(ready.status).to.equal(200);
    expect(ready.body.checks).to.include({ document_store: true });

    // The read models are in MongoDB, not in DATA_DIR; the event log is.
    expect(existsSync(join(dataDir, 'docs')), 'no embedded document store').to.equal(false);
    expect(existsSync(join(dataDir, 'events')), 'the embedded event store').to.equal(true);
    const stored = await storedDocuments();
    expect(stored).to.have.property('checkpoints');
    const text = JSON.stringify(stored);
    expect(text).to.include(instance.id);
    // Secrets are stored hashed or encrypted, never in clear.
    for (const secret of [instance.token, owner.clientSecret, owner.password]) expect(text).to.not.include(secret);
    // The session's credentials are written durably: journaled on a majority.
    expect(server.commands.some((c) => c.db === database && c.writeConcern?.w === 'majority' && c.writeConcern?.j === true)).to.equal(true);
  });

  it('keeps what it acknowledged across a restart on the same data dir and database', async () => {
    const first = await start();
    const owner = await newAccount(first.api);
    const instance = await newInstance(first.api, owner, { name: 'kept' });
    await first.api('POST', `/instances/${instance.id}/webhook`, { token: owner.jwt, body: { webhookURL: 'http://127.0.0.1:9/kept' } });
    await first.stop();
    gw = undefined;

    const { api } = await start();
    const login = await api('POST', '/auth/login', { body: { email: owner.email, password: owner.password } });
    expect(login.status).to.equal(200);
    const jwt = login.body.access_token as string;
    await waitFor(async () => (await api('POST', '/instances/list', { token: jwt, body: {} })).body.total === 1, 'instance listed');
    const shown = await api('GET', `/instances/${instance.id}`, { token: jwt });
    expect(shown.body).to.include({ name: 'kept', webhook: 'http://127.0.0.1:9/kept' });
    // The instance token still authenticates: its hash is in the MongoDB read model.
    const byToken = await api('GET', `/instances/${instance.id}/session/status`, { headers: { 'x-instance-token': instance.token, 'x-client-token': owner.clientToken } });
    expect(byToken.status).to.equal(200);
  });

  it('refuses to start on a MONGODB_URL that is not a MongoDB connection string, without echoing it', async () => {
    const error = await startTestGateway({ MONGODB_URL: 'http://user:hunter2@127.0.0.1:1/db' }, {}, dataDir).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).to.match(/MONGODB_URL/);
    expect(error?.message).to.not.include('hunter2');
    // The data dir was unlocked: a gateway starts on it next.
    await start();
  });
});
