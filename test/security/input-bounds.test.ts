/* eslint-disable @typescript-eslint/no-explicit-any -- the OpenAPI document is read field by field */
import { expect } from 'chai';
import { expectError, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';

/** `{"a":{"a":...}}` nested `depth` objects deep. */
const nested = (depth: number) => '{"a":'.repeat(depth - 1) + '{"a":1}' + '}'.repeat(depth - 1);

describe('security: input bounds (finding b, c, h)', () => {
  let instance: { id: string; token: string };
  let document: any;
  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });
  before(async () => {
    instance = await newInstance(t.api, owner);
    document = (await t.api('GET', '/openapi.json')).body;
  });

  const everyOperation = () =>
    Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path })),
    );

  describe('(b) path ids are bounded before any lookup', () => {
    for (const length of [65, 200, 1_960, 2_000]) {
      it(`an instance id of ${length} characters answers 400 invalid_input on every instance route, with or without credentials`, async () => {
        const id = 'A'.repeat(length);
        for (const { method, path } of everyOperation().filter((o) => o.path.startsWith('/instances/{id}'))) {
          const url = path.replace('{id}', id).replace(/\{\w+\}/g, '5511999990000');
          for (const token of [owner.jwt, undefined]) {
            const res = await t.api(method, url, { token, body: method === 'GET' ? undefined : {} });
            expect(res.status, `${method} ${path} ${token ? 'with' : 'without'} JWT`).to.equal(400);
            expectError(res, 400, 'invalid_input');
          }
        }
      });
    }

    it('no path parameter of any route can cause a 500', async () => {
      for (const { method, path } of everyOperation()) {
        if (!path.includes('{')) continue;
        const url = path.replace(/\{\w+\}/g, 'B'.repeat(2_000));
        const res = await t.api(method, url, { token: owner.jwt, body: method === 'GET' ? undefined : {} });
        expect(res.status, `${method} ${path}`).to.be.within(400, 499);
      }
    });

    it('oversized credentials headers are refused without a 500', async () => {
      const long = 'C'.repeat(2_000);
      const pair = await t.api('GET', `/instances/${instance.id}/session/status`, { headers: { 'x-instance-token': long, 'x-client-token': long } });
      expect(pair.status).to.be.within(400, 499);
      const client = await t.api('GET', `/instances/${instance.id}/session/status`, { headers: { 'x-instance-token': instance.token, 'x-client-token': long } });
      expect(client.status).to.be.within(400, 499);
      const bearer = await t.api('GET', '/account', { token: long });
      expectError(bearer, 401, 'unauthorized');
    });

    it('2,000-character strings in sign-in and token bodies answer 400, not 500', async () => {
      const long = 'd'.repeat(2_000);
      expectError(await t.api('POST', '/auth/login', { body: { email: `${long}@example.com`, password: 'whatever1' } }), 400, 'invalid_input');
      expectError(await t.api('POST', '/token', { body: { client_token: long, client_secret: long } }), 400, 'invalid_input');
      expectError(await t.api('POST', '/auth/signup', { body: { email: `${long}@example.com`, password: 'whatever1' } }), 400, 'invalid_input');
    });
  });

  describe('(c) JSON depth', () => {
    it('labels nested 1,500 deep answer 400, not 500', async () => {
      const res = await t.api('PUT', '/instances/create', { token: owner.jwt, raw: `{"name":"deep","labels":${nested(1_500)}}` });
      expectError(res, 400, 'invalid_input');
    });

    it('labels nested 1,000 deep are refused and nothing is stored', async () => {
      const before = (await t.api('POST', '/instances/list', { token: owner.jwt, body: {} })).body.total;
      const res = await t.api('PUT', '/instances/create', { token: owner.jwt, raw: `{"name":"deep","labels":${nested(1_000)}}` });
      expectError(res, 400, 'invalid_input');
      expect((await t.api('POST', '/instances/list', { token: owner.jwt, body: {} })).body.total).to.equal(before);
    });

    it('a body 32 levels deep is taken, 33 is refused', async () => {
      // The body itself is level 1 and labels level 2.
      const ok = await t.api('PUT', '/instances/create', { token: owner.jwt, raw: `{"name":"deep ok","labels":${nested(30)}}` });
      expect(ok.status, ok.text).to.equal(200);
      const tooDeep = await t.api('PUT', '/instances/create', { token: owner.jwt, raw: `{"name":"deep ko","labels":${nested(32)}}` });
      expectError(tooDeep, 400, 'invalid_input');
    });

    it('deep arrays are refused on any body route', async () => {
      const raw = '['.repeat(5_000) + ']'.repeat(5_000);
      for (const [method, path] of [['POST', `/instances/${instance.id}/chat/send/text`], ['POST', '/instances/list'], ['POST', '/auth/login']] as const) {
        expectError(await t.api(method, path, { token: owner.jwt, raw: `{"phone":${raw}}` }), 400, 'invalid_input');
      }
    });
  });

  describe('(h) wrong methods', () => {
    it('answer 405 method_not_allowed with Allow instead of 404', async () => {
      const cases: [string, string, string][] = [
        ['GET', '/instances/create', 'PUT'],
        ['DELETE', `/instances/${instance.id}`, 'GET, HEAD, PATCH'],
        ['GET', `/instances/${instance.id}/chat/send/text`, 'POST'],
        ['PUT', '/token', 'POST'],
        ['PATCH', '/instances/list', 'POST'],
        ['POST', '/health', 'GET, HEAD'],
        ['DELETE', `/instances/${instance.id}/webhook`, 'GET, HEAD, POST'],
      ];
      for (const [method, path, allow] of cases) {
        const res = await t.api(method, path, { token: owner.jwt });
        expect(res.status, `${method} ${path}`).to.equal(405);
        expectError(res, 405, 'method_not_allowed');
        expect(res.headers.get('allow'), `${method} ${path}`).to.equal(allow);
      }
    });

    it('an unknown path still answers 404', async () => {
      expectError(await t.api('GET', '/nope'), 404, 'not_found');
      expectError(await t.api('DELETE', '/instances/x/nope'), 404, 'not_found');
    });
  });
});
