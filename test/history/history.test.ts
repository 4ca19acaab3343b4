/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { phoneSends } from '../support/chats.js';
import { expectError, newAccount, newInstance, type Answer } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';

describe('history over HTTP', () => {

  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });

  const history = (id: string, query = '', token = owner.jwt) => t.api('GET', `/instances/${id}/history${query}`, { token });

  /** Every page, following `next`, once the history shows an event `until` accepts. */
  async function readAll(path: string, until: (e: any) => boolean, token = owner.jwt, limit = 1000): Promise<any[]> {
    let events: any[] = [];
    await waitFor(
      async () => {
        events = [];
        let after: string | null = null;
        do {
          const res: Answer = await t.api('GET', `${path}?limit=${limit}${after ? `&after=${after}` : ''}`, { token });
          expect(res.status, res.text).to.equal(200);
          events.push(...res.body.events);
          after = res.body.next;
        } while (after !== null);
        return events.some(until);
      },
      `history of ${path}`,
    );
    return events;
  }

  const requestId = (res: Answer) => res.headers.get('x-request-id');

  it('reads back a scripted instance life in log order, with actors, correlation ids and secrets redacted', async () => {
    const created = await t.api('PUT', '/instances/create', { token: owner.jwt, body: { name: 'audited' } });
    expect(created.status, created.text).to.equal(200);
    const id = created.body.id as string;
    const renamed = await t.api('PATCH', `/instances/${id}`, { token: owner.jwt, body: { name: 'audited, renamed' } });
    expect(renamed.status, renamed.text).to.equal(200);

    const me = await newPhone(t.api, owner);
    const peer = await newPhone(t.api, owner);
    await pairByQr(t.api, owner, id, me.phone);
    const incoming = await phoneSends(t, owner, peer.phone, me.phone, { text: 'hello auditor' });
    // Sent with the token pair: the instance token is the actor, not the account.
    const pair = { 'x-instance-token': created.body.token, 'x-client-token': owner.clientToken };
    const sent = await t.api('POST', `/instances/${id}/chat/send/text`, { headers: pair, body: { phone: peer.phone, message: 'hello back' } });
    expect(sent.status, sent.text).to.equal(200);
    const hooked = await t.api('POST', `/instances/${id}/webhook`, { token: owner.jwt, body: { webhookURL: 'http://127.0.0.1:9/hook', events: 'Message' } });
    expect(hooked.status, hooked.text).to.equal(200);
    const rotated = await t.api('POST', `/instances/${id}/webhook/secret/rotate`, { token: owner.jwt });
    expect(rotated.status, rotated.text).to.equal(200);
    const out = await t.api('POST', `/instances/${id}/session/logout`, { token: owner.jwt });
    expect(out.status, out.text).to.equal(200);

    const events = await readAll(`/instances/${id}/history`, (e) => e.type === 'SessionLoggedOut');
    const positions = events.map((e) => BigInt(e.position));
    expect(positions, 'log order').to.deep.equal([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const story = ['InstanceCreated', 'InstanceUpdated', 'SessionPairingStarted', 'SessionConnected', 'MessageReceived', 'MessageSent', 'WebhookConfigured', 'WebhookSecretRotated', 'SessionLoggedOut'];
    expect(events.map((e) => e.type).filter((type) => story.includes(type))).to.deep.equal(story);

    const first = (type: string, match: (e: any) => boolean = () => true) => events.find((e) => e.type === type && match(e));
    const account = { kind: 'account', id: owner.accountId };
    expect(first('InstanceCreated')).to.deep.include({ actor: account, correlation_id: requestId(created), causation_id: requestId(created), stream: `instance-${id}`, revision: 0 });
    expect(first('InstanceCreated').data).to.deep.include({ name: 'audited', token_hash: '[redacted]', webhook_secret_sealed: '[redacted]' });
    expect(first('InstanceUpdated')).to.deep.include({ actor: account, correlation_id: requestId(renamed) });
    expect(first('InstanceUpdated').data).to.deep.equal({ name: 'audited, renamed' });
    expect(first('SessionConnected').actor).to.deep.equal({ kind: 'network', id: 'sandbox' });
    expect(first('SessionConnected').correlation_id).to.be.a('string');
    const received = first('MessageReceived', (e) => e.data.message.id === incoming);
    expect(received.actor).to.deep.equal({ kind: 'network', id: 'sandbox' });
    expect(received.data.message).to.deep.include({ text: 'hello auditor' });
    const mine = first('MessageSent', (e) => e.data.message.id === sent.body.data.message_id);
    expect(mine).to.deep.include({ actor: { kind: 'instance_token', id }, correlation_id: requestId(sent), stream: `session-${id}` });
    expect(mine.data.message).to.deep.include({ text: 'hello back' });
    expect(first('WebhookConfigured')).to.deep.include({ actor: account, correlation_id: requestId(hooked) });
    expect(first('WebhookSecretRotated').data).to.deep.equal({ webhook_secret_sealed: '[redacted]' });
    expect(first('SessionLoggedOut')).to.deep.include({ actor: account, correlation_id: requestId(out) });
    for (const e of events) {
      expect(e).to.have.all.keys('position', 'id', 'type', 'stream', 'revision', 'recorded_at', 'actor', 'correlation_id', 'causation_id', 'data');
      expect(JSON.stringify(e.data)).not.to.include(created.body.token);
      expect(JSON.stringify(e.data)).not.to.include(rotated.body.data.secret);
    }

    // Small pages, each after the last, give the same history; `next` is null on the last one.
    const paged = await readAll(`/instances/${id}/history`, () => true, owner.jwt, 2);
    expect(paged.map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
    const last = await history(id, `?after=${events[events.length - 1].position}`);
    expect(last.body).to.deep.equal({ events: [], next: null });

    // A type filter keeps log order and only the named types.
    const filtered = await history(id, '?types=WebhookSecretRotated,InstanceCreated');
    expect(filtered.body.events.map((e: any) => e.type)).to.deep.equal(['InstanceCreated', 'WebhookSecretRotated']);
    expect(filtered.body.next).to.equal(null);
  });

  it('refuses bad paging and unknown types with 400, and other callers', async () => {
    const instance = await newInstance(t.api, owner);
    for (const query of ['?limit=0', '?limit=1001', '?limit=ten', '?after=abc', '?after=-1', '?types=Bogus', '?types=InstanceCreated,', '?types=', '?colour=red']) {
      expectError(await history(instance.id, query), 400, 'invalid_input');
    }
    const stranger = await newAccount(t.api);
    expect((await history(instance.id, '', stranger.jwt)).status).to.be.oneOf([403, 404]);
    const pair = { 'x-instance-token': instance.token, 'x-client-token': owner.clientToken };
    expect((await t.api('GET', `/instances/${instance.id}/history`, { headers: pair })).status).to.be.oneOf([401, 403]);
    expect((await t.api('GET', '/account/history')).status).to.equal(401);
  });

  it("reads back the account's own history: sign-up, sign-ins with address, rotation, instances created and canceled", async () => {
    const me = await newAccount(t.api);
    const wrong = await t.api('POST', '/auth/login', { body: { email: me.email, password: 'not the password' } });
    expect(wrong.status).to.equal(401);
    const viaToken = await t.api('POST', '/token', { body: { client_token: me.clientToken, client_secret: me.clientSecret } });
    expect(viaToken.status).to.equal(200);
    const rotation = await t.api('POST', '/account/client-secret/rotate', { token: me.jwt });
    expect(rotation.status).to.equal(200);
    // A rotation ends the JWTs issued before it: sign in again.
    const again = await t.api('POST', '/auth/login', { body: { email: me.email, password: me.password } });
    expect(again.status).to.equal(200);
    me.jwt = again.body.access_token;
    const instance = await newInstance(t.api, me);
    const canceled = await t.api('DELETE', `/instances/${instance.id}/cancel`, { token: me.jwt });
    expect(canceled.status, canceled.text).to.equal(200);

    const events = await readAll('/account/history', (e) => e.type === 'InstanceCanceled', me.jwt);
    expect(events.map((e) => e.type)).to.deep.equal([
      'AccountRegistered',
      'SignInSucceeded',
      'SignInFailed',
      'SignInSucceeded',
      'ClientSecretRotated',
      'SignInSucceeded',
      'InstanceCreated',
      'InstanceCanceled',
    ]);
    const [registered, login, failed, token, rotated] = events;
    expect(registered.data).to.deep.include({ account_id: me.accountId, email: me.email, password_hash: '[redacted]', client_secret_hash: '[redacted]' });
    expect(login.data).to.have.property('method', 'password');
    expect(login.data.address).to.match(/127\.0\.0\.1$/);
    expect(login.actor).to.deep.equal({ kind: 'account', id: me.accountId });
    expect(failed.data).to.have.property('method', 'password');
    expect(failed.data.address).to.match(/127\.0\.0\.1$/);
    expect(failed.actor).to.deep.equal({ kind: 'system' });
    expect(token.data).to.have.property('method', 'client_credentials');
    expect(rotated.data).to.deep.equal({ account_id: me.accountId, client_secret_hash: '[redacted]' });
    expect(events[7]).to.deep.include({ actor: { kind: 'account', id: me.accountId }, correlation_id: requestId(canceled) });
    // Another account's history holds none of it.
    const mine = await t.api('GET', '/account/history', { token: owner.jwt });
    expect(mine.body.events.map((e: any) => e.id)).to.not.include.members(events.map((e) => e.id));
  });

  it('keeps signing in and rotating after sign-ins share the account stream', async () => {
    const me = await newAccount(t.api);
    let jwt = me.jwt;
    for (let i = 0; i < 2; i++) {
      expect((await t.api('POST', '/account/client-secret/rotate', { token: jwt })).status).to.equal(200);
      const login = await t.api('POST', '/auth/login', { body: { email: me.email, password: me.password } });
      expect(login.status).to.equal(200);
      jwt = login.body.access_token;
    }
  });
});
