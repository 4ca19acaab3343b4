import { expect } from 'chai';
import { expectError, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';

describe('HTTP conventions', () => {
  const { t, owner } = useGateway({ BODY_LIMIT_BYTES: '4096' });

  it('GET /health answers 200', async () => {
    const res = await t.api('GET', '/health');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('matches a path with one trailing slash as the router always did', async () => {
    expect((await t.api('GET', '/health/')).body).to.deep.equal({ status: 'ok' });
    const instance = await newInstance(t.api, owner);
    const status = await t.api('GET', `/instances/${instance.id}/session/status/`, { token: owner.jwt });
    expect(status.body).to.deep.equal({ code: 200, success: true, data: { connected: false } });
    expectError(await t.api('GET', '/health//'), 404, 'not_found');
  });

  it('GET /ready answers 200 once projections caught up', async () => {
    const res = await t.api('GET', '/ready');
    expect(res.status).to.equal(200);
    // The real network's driver (the default) says which WhatsApp Web version it announces; tests never fetch it.
    expect(res.body.checks).to.deep.include({ event_store: true, document_store: true, projections: true });
    expect(res.body.checks.whatsapp_version).to.match(/^\d+\.\d+\.\d+ \(built-in: /);
  });

  it('answers malformed JSON with 400 invalid_input', async () => {
    const res = await t.api('PUT', '/instances/create', { token: owner.jwt, raw: '{"name": "abc",' });
    expectError(res, 400, 'invalid_input');
    expect(res.body.error.details[0].field).to.equal('body');
  });

  it('answers a JSON scalar body with 400', async () => {
    expectError(await t.api('PUT', '/instances/create', { token: owner.jwt, raw: '"abc"' }), 400, 'invalid_input');
  });

  it('answers an oversized body with 413 payload_too_large', async () => {
    const res = await t.api('PUT', '/instances/create', { token: owner.jwt, body: { name: 'big', labels: { x: 'y'.repeat(10_000) } } });
    expectError(res, 413, 'payload_too_large');
  });

  it('answers unknown routes with the JSON error shape', async () => {
    expectError(await t.api('GET', '/nope'), 404, 'not_found');
    expectError(await t.api('GET', '/instances/x/nope', { token: owner.jwt }), 404, 'not_found');
  });

  it('echoes a request id, or makes one', async () => {
    const given = await t.api('GET', '/health', { headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers.get('x-request-id')).to.equal('abc-123');
    const made = await t.api('GET', '/health');
    expect(made.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });

  it('survives hostile input without a 500', async () => {
    const instance = await newInstance(t.api, owner);
    const bodies = ['null', '[]', '{"__proto__":{"admin":true},"name":"abc"}', '{"name":{"$gt":""}}', '{"name":"abc","labels":{"__proto__":1}}', '\u0000'];
    for (const raw of bodies) {
      for (const [method, path] of [
        ['PUT', '/instances/create'],
        ['PATCH', `/instances/${instance.id}`],
        ['POST', '/instances/list'],
        ['POST', `/instances/${instance.id}/webhook`],
        ['POST', '/auth/login'],
        ['POST', '/token'],
      ] as const) {
        const res = await t.api(method, path, { token: owner.jwt, raw });
        expect(res.status, `${method} ${path} ${raw}`).to.be.lessThan(500);
      }
    }
    for (const id of ['%00', '..%2F..', 'x'.repeat(65), '%E0%A4%A']) {
      const res = await t.api('GET', `/instances/${id}`, { token: owner.jwt });
      expect(res.status, id).to.be.within(400, 499);
    }
  });

  describe('OpenAPI', () => {
    it('GET /openapi.json describes every route with its schemas', async () => {
      const res = await t.api('GET', '/openapi.json');
      expect(res.status).to.equal(200);
      expect(res.body.openapi).to.equal('3.1.0');
      expect(res.body.info.version).to.equal('1.0.0');
      const paths = res.body.paths;
      for (const [path, method] of [
        ['/token', 'post'],
        ['/auth/signup', 'post'],
        ['/auth/login', 'post'],
        ['/account', 'get'],
        ['/account/client-secret/rotate', 'post'],
        ['/instances/create', 'put'],
        ['/instances/list', 'post'],
        ['/instances/{id}', 'get'],
        ['/instances/{id}', 'patch'],
        ['/instances/{id}/token/rotate', 'post'],
        ['/instances/{id}/cancel', 'put'],
        ['/instances/{id}/cancel', 'delete'],
        ['/instances/{id}/webhook', 'post'],
        ['/instances/{id}/webhook', 'get'],
        ['/health', 'get'],
        ['/ready', 'get'],
      ] as const) {
        expect(paths[path]?.[method], `${method} ${path}`).to.be.an('object');
      }
      const create = paths['/instances/create'].put;
      expect(create.requestBody.content['application/json'].schema.properties.name).to.include({ minLength: 3, maxLength: 255 });
      expect(create.responses['200'].content['application/json'].schema.properties).to.have.keys(
        'id', 'name', 'token', 'url', 'webhook', 'events_subscribe', 'reject_calls', 'auto_read_messages', 'connected', 'connected_at',
        'whatsapp_push_name', 'whatsapp_jid', 'billing_status', 'created_at', 'updated_at', 'cancel_at', 'expired_at', 'labels',
      );
      expect(paths['/instances/{id}'].get.security).to.deep.equal([{ bearer: [] }, { instanceToken: [], clientToken: [] }]);
      expect(paths['/instances/{id}/cancel'].put.security).to.deep.equal([{ bearer: [] }]);
      expect(res.body.components.schemas.Error).to.be.an('object');
    });

    it('GET /docs serves a browsable page', async () => {
      const res = await t.api('GET', '/docs');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      expect(res.text).to.include('openapi.json');
    });
  });
});
