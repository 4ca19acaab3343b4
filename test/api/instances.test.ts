import { expect } from 'chai';
import { expectError, newAccount, newInstance, type TestAccount } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';

const INSTANCE_FIELDS = [
  'id',
  'name',
  'url',
  'webhook',
  'events_subscribe',
  'reject_calls',
  'auto_read_messages',
  'connected',
  'connected_at',
  'whatsapp_push_name',
  'whatsapp_jid',
  'billing_status',
  'created_at',
  'updated_at',
  'cancel_at',
  'expired_at',
  'labels',
];

describe('instances over HTTP', () => {
  const { t, owner } = useGateway({ PUBLIC_URL: 'https://gw.example.com' });

  describe('PUT /instances/create', () => {
    it('answers the Instance with its token, in the spec field order', async () => {
      const before = Date.now();
      const res = await t.api('PUT', '/instances/create', {
        token: owner.jwt,
        body: {
          name: 'Support line',
          webhook: 'http://127.0.0.1:9/hook',
          events_subscribe: ['Message', 'Connected'],
          reject_calls: true,
          labels: { team: 'care' },
        },
      });
      expect(res.status).to.equal(200);
      const expected = [...INSTANCE_FIELDS];
      expected.splice(2, 0, 'token');
      expect(Object.keys(res.body)).to.deep.equal(expected);
      expect(res.body.id).to.match(/^3E[A-Z0-9]{30}$/);
      expect(res.body.token).to.be.a('string').with.length.greaterThan(20);
      expect(res.body.url).to.equal(`https://gw.example.com/app/instances/${res.body.id}`);
      expect(res.body).to.include({
        name: 'Support line',
        webhook: 'http://127.0.0.1:9/hook',
        events_subscribe: 'Message,Connected',
        reject_calls: true,
        auto_read_messages: false,
        connected: false,
        connected_at: null,
        whatsapp_push_name: null,
        whatsapp_jid: null,
        billing_status: 'TRIALING',
        cancel_at: null,
      });
      expect(res.body.labels).to.deep.equal({ team: 'care' });
      const trialEnd = Date.parse(res.body.expired_at) - Date.parse(res.body.created_at);
      expect(trialEnd).to.equal(7 * 86_400_000);
      expect(Date.parse(res.body.created_at)).to.be.at.least(before - 1000);
    });

    it('applies defaults', async () => {
      const res = await t.api('PUT', '/instances/create', { token: owner.jwt, body: { name: 'abc' } });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ webhook: '', events_subscribe: '', reject_calls: false, auto_read_messages: false });
      expect(res.body.labels).to.deep.equal({});
    });

    it('refuses bad input with 400 naming the field, and creates nothing', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'name'],
        [{ name: 'ab' }, 'name'],
        [{ name: 'x'.repeat(256) }, 'name'],
        [{ name: 12345 }, 'name'],
        [{ name: 'valid', events_subscribe: ['Receipt'] }, 'events_subscribe.0'],
        [{ name: 'valid', events_subscribe: 'Message' }, 'events_subscribe'],
        [{ name: 'valid', webhook: 'not a url' }, 'webhook'],
        [{ name: 'valid', webhook: 'ftp://example.com/x' }, 'webhook'],
        [{ name: 'valid', reject_calls: 'yes' }, 'reject_calls'],
        [{ name: 'valid', labels: 'x' }, 'labels'],
        [{ name: 'valid', token: 'mine' }, 'token'],
      ];
      const countBefore = (await t.api('POST', '/instances/list', { token: owner.jwt, body: {} })).body.total;
      for (const [body, field] of cases) {
        const res = await t.api('PUT', '/instances/create', { token: owner.jwt, body });
        expectError(res, 400, 'invalid_input');
        expect(res.body.error.details.map((d: { field: string }) => d.field), JSON.stringify(body)).to.include(field);
      }
      expect((await t.api('POST', '/instances/list', { token: owner.jwt, body: {} })).body.total).to.equal(countBefore);
    });

    it('requires a JWT', async () => {
      expectError(await t.api('PUT', '/instances/create', { body: { name: 'abc' } }), 401, 'unauthorized');
    });
  });

  describe('GET and PATCH /instances/{id}', () => {
    it('reads the instance without its token', async () => {
      const created = await newInstance(t.api, owner, { name: 'readable' });
      const res = await t.api('GET', `/instances/${created.id}`, { token: owner.jwt });
      expect(res.status).to.equal(200);
      expect(Object.keys(res.body)).to.deep.equal(INSTANCE_FIELDS);
      expect(res.body.name).to.equal('readable');
    });

    it('updates fields and the webhook, keeping what is omitted', async () => {
      const created = await newInstance(t.api, owner, { webhook: 'http://127.0.0.1:9/a', events_subscribe: ['Message'] });
      const res = await t.api('PATCH', `/instances/${created.id}`, {
        token: owner.jwt,
        body: { name: 'renamed', auto_read_messages: true, webhook: 'http://127.0.0.1:9/b' },
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({
        name: 'renamed',
        auto_read_messages: true,
        reject_calls: false,
        webhook: 'http://127.0.0.1:9/b',
        events_subscribe: 'Message',
      });
      expect(Date.parse(res.body.updated_at)).to.be.at.least(Date.parse(res.body.created_at));
      const events = await t.api('PATCH', `/instances/${created.id}`, { token: owner.jwt, body: { name: 'renamed', events_subscribe: 'All' } });
      expect(events.body.events_subscribe).to.equal('All');
      const cleared = await t.api('PATCH', `/instances/${created.id}`, { token: owner.jwt, body: { name: 'renamed', webhook: '' } });
      expect(cleared.body).to.include({ webhook: '', events_subscribe: '' });
    });

    it('refuses bad input with 400 naming the field', async () => {
      const created = await newInstance(t.api, owner);
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'name'],
        [{ name: 'ok name', events_subscribe: 'Message,MessageRead' }, 'events_subscribe'],
        [{ name: 'ok name', events_subscribe: 'Message, Connected' }, 'events_subscribe'],
        [{ name: 'ok name', auto_read_messages: 1 }, 'auto_read_messages'],
      ];
      for (const [body, field] of cases) {
        const res = await t.api('PATCH', `/instances/${created.id}`, { token: owner.jwt, body });
        expectError(res, 400, 'invalid_input');
        expect(res.body.error.details.map((d: { field: string }) => d.field)).to.include(field);
      }
    });

    it('answers 404 for an unknown instance and 403 for a foreign one', async () => {
      expectError(await t.api('GET', '/instances/3ENOPE', { token: owner.jwt }), 404, 'not_found');
      const other = await newAccount(t.api);
      const foreign = await newInstance(t.api, other);
      expectError(await t.api('GET', `/instances/${foreign.id}`, { token: owner.jwt }), 403, 'forbidden');
      expectError(await t.api('PATCH', `/instances/${foreign.id}`, { token: owner.jwt, body: { name: 'mine now' } }), 403, 'forbidden');
      expect((await t.api('GET', `/instances/${foreign.id}`, { token: other.jwt })).body.name).to.equal('test instance');
    });
  });

  describe('POST /instances/list', () => {
    let lister: TestAccount;
    before(async () => {
      lister = await newAccount(t.api);
      for (const name of ['alpha', 'bravo', 'charlie', 'delta', 'echo']) await newInstance(t.api, lister, { name });
    });

    it('pages the caller’s instances, newest first by default', async () => {
      const page1 = await t.api('POST', '/instances/list', { token: lister.jwt, body: { size: 2 } });
      expect(page1.status).to.equal(200);
      expect(Object.keys(page1.body)).to.deep.equal(['page', 'size', 'total', 'total_pages', 'content']);
      expect(page1.body).to.include({ page: 1, size: 2, total: 5, total_pages: 3 });
      expect(page1.body.content.map((i: { name: string }) => i.name)).to.deep.equal(['echo', 'delta']);
      const page3 = await t.api('POST', '/instances/list', { token: lister.jwt, body: { size: 2, page: 3 } });
      expect(page3.body.content.map((i: { name: string }) => i.name)).to.deep.equal(['alpha']);
      expect(page3.body.content[0]).to.not.have.property('token');
    });

    it('sorts and filters', async () => {
      const byName = await t.api('POST', '/instances/list', { token: lister.jwt, body: { sort: 'name', sortDesc: false } });
      expect(byName.body.content.map((i: { name: string }) => i.name)).to.deep.equal(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
      const query = await t.api('POST', '/instances/list', { token: lister.jwt, body: { filter: { query: 'ARL' } } });
      // The query also finds ids, which are random: another instance's may hold "ARL" (about one
      // run in 400), so the expected list is read off the instances themselves.
      const all = byName.body.content as Array<{ id: string; name: string }>;
      const holding = (i: { id: string; name: string }) => `${i.id} ${i.name}`.toLowerCase().includes('arl');
      expect(query.body.content.map((i: { name: string }) => i.name)).to.have.members(all.filter(holding).map((i) => i.name));
      expect(query.body.content.map((i: { name: string }) => i.name)).to.include('charlie');
      const charlie = all.find((i) => i.name === 'charlie') as { id: string };
      const byId = await t.api('POST', '/instances/list', { token: lister.jwt, body: { filter: { query: charlie.id.toLowerCase() } } });
      expect(byId.body.total).to.equal(1);
      const regexish = await t.api('POST', '/instances/list', { token: lister.jwt, body: { filter: { query: '.*' } } });
      expect(regexish.body.total).to.equal(0);
      const connected = await t.api('POST', '/instances/list', { token: lister.jwt, body: { filter: { connected: true } } });
      expect(connected.body.total).to.equal(0);
      const trialing = await t.api('POST', '/instances/list', { token: lister.jwt, body: { filter: { billing_status: 'TRIALING' } } });
      expect(trialing.body.total).to.equal(5);
    });

    it('refuses bad paging and sorting with 400', async () => {
      for (const [body, field] of [
        [{ size: 0 }, 'size'],
        [{ size: 101 }, 'size'],
        [{ page: 0 }, 'page'],
        [{ page: 1.5 }, 'page'],
        [{ sort: 'token_hash' }, 'sort'],
        [{ sortDesc: 'yes' }, 'sortDesc'],
        [{ filter: { nope: 1 } }, 'filter.nope'],
      ] as const) {
        const res = await t.api('POST', '/instances/list', { token: lister.jwt, body });
        expectError(res, 400, 'invalid_input');
        expect(res.body.error.details.map((d: { field: string }) => d.field)).to.include(field);
      }
    });
  });

  describe('POST /instances/{id}/token/rotate', () => {
    it('kills the old instance token at once', async () => {
      const created = await newInstance(t.api, owner);
      const pair = (token: string) => ({ 'x-instance-token': token, 'x-client-token': owner.clientToken });
      expect((await t.api('GET', `/instances/${created.id}`, { headers: pair(created.token) })).status).to.equal(200);
      const res = await t.api('POST', `/instances/${created.id}/token/rotate`, { token: owner.jwt });
      expect(res.status).to.equal(200);
      expect(Object.keys(res.body)).to.deep.equal(['token']);
      expectError(await t.api('GET', `/instances/${created.id}`, { headers: pair(created.token) }), 403, 'forbidden');
      expect((await t.api('GET', `/instances/${created.id}`, { headers: pair(res.body.token) })).status).to.equal(200);
    });
  });

  describe('PUT and DELETE /instances/{id}/cancel', () => {
    for (const method of ['PUT', 'DELETE']) {
      it(`${method} cancels a trialing instance at once; again is 409 (CONTRACT.md); changes then need payment`, async () => {
        const created = await newInstance(t.api, owner);
        const res = await t.api(method, `/instances/${created.id}/cancel`, { token: owner.jwt });
        expect(res.status).to.equal(200);
        expect(res.body.billing_status).to.equal('CANCELED');
        expect(res.body.cancel_at).to.be.a('string');
        expectError(await t.api(method, `/instances/${created.id}/cancel`, { token: owner.jwt }), 409, 'conflict');
        expect((await t.api('GET', `/instances/${created.id}`, { token: owner.jwt })).body.cancel_at).to.equal(res.body.cancel_at);
        expectError(await t.api('PATCH', `/instances/${created.id}`, { token: owner.jwt, body: { name: 'late change' } }), 402, 'payment_required');
      });
    }
  });
});
