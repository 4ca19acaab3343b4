/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src/infra/clock.js';
import { pairedInstance } from '../support/chats.js';
import { EMBEDDED, expectError, newAccount, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';

/** A clock tests move forward by hand. */
const movableClock = () => {
  let offset = 0;
  const clock: Clock & { advance(ms: number): void } = { now: () => new Date(Date.now() + offset), advance: (ms) => (offset += ms) };
  return clock;
};

describe('Idempotency-Key (finding i)', () => {
  let t: TestGateway;
  let owner: TestAccount;
  const clock = movableClock();
  const create = (key: string | undefined, body: unknown, account = owner) =>
    t.api('PUT', '/instances/create', { token: account.jwt, body, headers: key === undefined ? {} : { 'idempotency-key': key } });
  const count = async (account = owner) => (await t.api('POST', '/instances/list', { token: account.jwt, body: {} })).body.total as number;

  before(async () => {
    // Tokens that outlive the clock moved forward a day.
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox', JWT_TTL_SECONDS: String(30 * 86400) }, { clock });
    owner = await newAccount(t.api);
  });
  after(async () => t.stop());

  it('a retried create answers the first answer again, token included, and makes one instance', async () => {
    const before = await count();
    const first = await create('create-1', { name: 'retried', labels: { a: 1, b: [1, 2] } });
    expect(first.status, first.text).to.equal(200);
    expect(first.body.token).to.be.a('string');
    // The same JSON with its keys in another order is the same request.
    const again = await create('create-1', { labels: { b: [1, 2], a: 1 }, name: 'retried' });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    expect(await count()).to.equal(before + 1);
  });

  it('the same key with a different body answers 409 conflict and creates nothing', async () => {
    await create('create-2', { name: 'first body' });
    const before = await count();
    expectError(await create('create-2', { name: 'other body' }), 409, 'conflict');
    expect(await count()).to.equal(before);
  });

  it('keys belong to an account: another account with the same key gets its own instance', async () => {
    const other = await newAccount(t.api);
    const mine = await create('shared-key', { name: 'mine' });
    const theirs = await create('shared-key', { name: 'mine' }, other);
    expect(theirs.status).to.equal(200);
    expect(theirs.body.id).to.not.equal(mine.body.id);
    expect(await count(other)).to.equal(1);
  });

  it('requests without a key are not deduplicated', async () => {
    const before = await count();
    await create(undefined, { name: 'no key' });
    await create(undefined, { name: 'no key' });
    expect(await count()).to.equal(before + 2);
  });

  it('twenty requests sent together with one key run once: the rest replay or answer 409', async () => {
    const before = await count();
    const answers = await Promise.all(Array.from({ length: 20 }, () => create('together', { name: 'together' })));
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).to.be.at.least(1);
    for (const a of answers) if (a.status !== 200) expectError(a, 409, 'conflict');
    for (const a of ok) expect(a.body.id).to.equal((ok[0] as any).body.id);
    expect(await count()).to.equal(before + 1);
    const later = await create('together', { name: 'together' });
    expect(later.body.id).to.equal((ok[0] as any).body.id);
  });

  it('a malformed key answers 400 naming the header, and changes nothing', async () => {
    const before = await count();
    for (const key of ['k'.repeat(256), 'clé']) {
      const res = await create(key, { name: 'bad key' });
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details[0].field).to.equal('Idempotency-Key');
    }
    expect((await create('k'.repeat(255), { name: 'longest key' })).status).to.equal(200);
    expect(await count()).to.equal(before + 1);
  });

  it('a request that failed frees its key: the corrected retry runs', async () => {
    const before = await count();
    expectError(await create('fails-first', { name: 'x' }), 400, 'invalid_input');
    expect((await create('fails-first', { name: 'now valid' })).status).to.equal(200);
    expect(await count()).to.equal(before + 1);
  });

  it('a send that failed (not connected) changed nothing and frees its key', async () => {
    const idle = await create(undefined, { name: 'never paired' });
    const send = () =>
      t.api('POST', `/instances/${idle.body.id}/chat/send/text`, { token: owner.jwt, body: { phone: '5511999990000', message: 'hi' }, headers: { 'idempotency-key': 'idle-send' } });
    expectError(await send(), 409, 'not_connected');
    const again = await send();
    expectError(again, 409, 'not_connected');
    expect(again.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('a key is forgotten after 24 hours', async () => {
    const first = await create('day-old', { name: 'day old' });
    clock.advance(23 * 3600_000);
    expect((await create('day-old', { name: 'day old' })).body.id).to.equal(first.body.id);
    clock.advance(3600_000 + 1000);
    const after = await create('day-old', { name: 'day old' });
    expect(after.status).to.equal(200);
    expect(after.body.id).to.not.equal(first.body.id);
  });

  it('sends and reactions are not repeated on a retry', async () => {
    const me = await pairedInstance(t, owner);
    const peer = await pairedInstance(t, owner);
    const send = (key: string, path: string, body: unknown) =>
      t.api('POST', `/instances/${me.id}/chat/${path}`, { token: owner.jwt, body, headers: { 'idempotency-key': key } });
    const inbox = async () => (await t.api('GET', `/sandbox/phones/${peer.phone}/inbox`, { token: owner.jwt })).body.messages as any[];
    const text = await send('send-1', 'send/text', { phone: peer.phone, message: 'only once' });
    expect(text.status, text.text).to.equal(200);
    const again = await send('send-1', 'send/text', { phone: peer.phone, message: 'only once' });
    expect(again.body).to.deep.equal(text.body);
    expect((await inbox()).filter((m) => m.text === 'only once')).to.have.length(1);
    expectError(await send('send-1', 'send/text', { phone: peer.phone, message: 'something else' }), 409, 'conflict');
    // The same key on another route is another request.
    expectError(await send('send-1', 'send/buttons', { phone: peer.phone, buttons: [{ id: '1', text: 'One' }] }), 409, 'conflict');

    const buttons = { phone: peer.phone, message: 'pick', buttons: [{ id: '1', text: 'One' }] };
    const card = await send('buttons-1', 'send/buttons', buttons);
    expect((await send('buttons-1', 'send/buttons', buttons)).body).to.deep.equal(card.body);
    expect((await inbox()).filter((m) => m.text === 'pick')).to.have.length(1);

    const reaction = { phone: peer.phone, message_id: text.body.data.message_id, reaction: '👍' };
    const react = await send('react-1', 'react', reaction);
    expect(react.status, react.text).to.equal(200);
    expect((await send('react-1', 'react', reaction)).body).to.deep.equal(react.body);
  });

  it('the OpenAPI document names the header on the idempotent routes only', async () => {
    const paths = (await t.api('GET', '/openapi.json')).body.paths;
    const header = (op: any) => (op.parameters as any[]).find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
    for (const [path, method] of [
      ['/instances/create', 'put'],
      ['/instances/{id}/chat/send/text', 'post'],
      ['/instances/{id}/chat/send/buttons', 'post'],
      ['/instances/{id}/chat/react', 'post'],
    ]) {
      expect(header(paths[path as string][method as string]), `${method} ${path}`).to.include({ required: false });
      expect(paths[path as string][method as string].responses['409']).to.be.an('object');
    }
    expect(header(paths['/instances/{id}'].patch)).to.equal(undefined);
    // CONTRACT.md's list, for routes added later too (subscribe): each must carry the flag.
    const contract = /^\/instances\/create$|\/chat\/send\/|\/chat\/react$|\/subscribe$/;
    for (const [path, ops] of Object.entries(paths as Record<string, Record<string, any>>)) {
      if (!contract.test(path)) continue;
      for (const [method, op] of Object.entries(ops)) {
        if (method === 'get') continue;
        expect(header(op), `${method} ${path} must be flagged idempotent`).to.not.equal(undefined);
      }
    }
  });
});

describe('Idempotency-Key across a restart', () => {
  it('keys survive a restart, and the stored answer keeps no token in clear', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-idem-'));
    try {
      let t = await startTestGateway(EMBEDDED, {}, dir);
      const owner = await newAccount(t.api);
      const headers = { 'idempotency-key': 'across-restart' };
      const first = await t.api('PUT', '/instances/create', { token: owner.jwt, body: { name: 'durable' }, headers });
      expect(first.status).to.equal(200);
      await t.stop();
      const files = await Promise.all(['docs', 'events'].map((d) => readFile(join(dir, d, 'data.mdb'))));
      for (const file of files) expect(file.includes(Buffer.from(first.body.token as string))).to.equal(false);
      t = await startTestGateway(EMBEDDED, {}, dir);
      try {
        const again = await t.api('PUT', '/instances/create', { token: owner.jwt, body: { name: 'durable' }, headers });
        expect(again.body).to.deep.equal(first.body);
        expect((await t.api('POST', '/instances/list', { token: owner.jwt, body: {} })).body.total).to.equal(1);
      } finally {
        await t.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
