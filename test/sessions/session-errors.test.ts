/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { Socket } from 'node:net';
import { expectError, newAccount, newInstance, startTestGateway, type Answer, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, nextPhone, pairByQr } from '../support/sandbox.js';

const expectField = (answer: Answer, field: string) => {
  expectError(answer, 400, 'invalid_input');
  expect(answer.body.error.details.map((d: any) => d.field), answer.text).to.include(field);
};

/** Bad input on the session and sandbox routes: the error shape with the right 4xx, never a 500. */
describe('session and sandbox errors', function () {
  this.timeout(20_000);

  describe('with the sandbox on', () => {
    let gw: TestGateway;
    let owner: TestAccount;
    let stranger: TestAccount;

    before(async () => {
      gw = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' });
      owner = await newAccount(gw.api);
      stranger = await newAccount(gw.api);
    });
    after(async () => gw.stop());

    it('answers 404 for an unknown phone', async () => {
      const unknown = nextPhone();
      const instance = await newInstance(gw.api, owner);
      expectError(await gw.api('POST', `/sandbox/phones/${unknown}/scan`, { token: owner.jwt, body: { qr: 'sandbox:X' } }), 404, 'not_found');
      expectError(await gw.api('POST', `/sandbox/phones/${unknown}/link`, { token: owner.jwt, body: { code: 'ABCD-EFGH' } }), 404, 'not_found');
      expectError(await gw.api('GET', `/sandbox/phones/${unknown}/inbox`, { token: owner.jwt }), 404, 'not_found');
      expectError(await gw.api('POST', `/sandbox/phones/${unknown}/unlink`, { token: owner.jwt }), 404, 'not_found');
      expectError(await gw.api('GET', `/instances/${instance.id}/session/paircode/${unknown}`, { token: owner.jwt }), 404, 'not_found');
    });

    it('answers 400 naming the field for a malformed phone', async () => {
      const instance = await newInstance(gw.api, owner);
      expectField(await gw.api('POST', '/sandbox/phones/12ab/scan', { token: owner.jwt, body: { qr: 'sandbox:X' } }), 'phone');
      expectField(await gw.api('GET', '/sandbox/phones/123/inbox', { token: owner.jwt }), 'phone');
      expectField(await gw.api('POST', '/sandbox/phones', { token: owner.jwt, body: { phone: '+55 11 9', push_name: 'x' } }), 'phone');
      // Pair code for a malformed phone.
      expectField(await gw.api('GET', `/instances/${instance.id}/session/paircode/12ab`, { token: owner.jwt }), 'phone');
      expectField(await gw.api('GET', `/instances/${instance.id}/session/paircode/1234567890123456`, { token: owner.jwt }), 'phone');
    });

    it('answers 409 when pairing an instance that is already connected', async () => {
      const instance = await newInstance(gw.api, owner);
      const phone = await newPhone(gw.api, owner);
      await pairByQr(gw.api, owner, instance.id, phone.phone);
      expectError(await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt }), 409, 'conflict');
      expectError(await gw.api('GET', `/instances/${instance.id}/session/paircode/${phone.phone}`, { token: owner.jwt }), 409, 'conflict');
      // A phone held by a connected instance cannot be scanned into a second one.
      const second = await newInstance(gw.api, owner);
      const qr = await gw.api('GET', `/instances/${second.id}/session/qr`, { token: owner.jwt });
      expectError(await gw.api('POST', `/sandbox/phones/${phone.phone}/scan`, { token: owner.jwt, body: { qr: qr.body.data.qr } }), 409, 'conflict');
    });

    it("answers 404 for another account's phone, instance QR or pairing code", async () => {
      const theirs = await newPhone(gw.api, stranger);
      const mine = await newPhone(gw.api, owner);
      const instance = await newInstance(gw.api, owner);
      const qr = await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt });
      // Their phone, driven by me.
      expectError(await gw.api('POST', `/sandbox/phones/${theirs.phone}/scan`, { token: owner.jwt, body: { qr: qr.body.data.qr } }), 404, 'not_found');
      expectError(await gw.api('GET', `/sandbox/phones/${theirs.phone}/inbox`, { token: owner.jwt }), 404, 'not_found');
      expectError(await gw.api('POST', `/sandbox/phones/${mine.phone}/messages`, { token: owner.jwt, body: { to: theirs.phone, text: 'hi' } }), 404, 'not_found');
      expectError(await gw.api('GET', `/instances/${instance.id}/session/paircode/${theirs.phone}`, { token: owner.jwt }), 404, 'not_found');
      // My QR, scanned by their own phone: their phone cannot see my instance.
      const stolen = await gw.api('POST', `/sandbox/phones/${theirs.phone}/scan`, { token: stranger.jwt, body: { qr: qr.body.data.qr } });
      expectError(stolen, 404, 'not_found');
      // Their token on my instance's session routes.
      expectError(await gw.api('GET', `/instances/${instance.id}/session/status`, { token: stranger.jwt }), 403, 'forbidden');
    });

    it('answers 4xx for a wrong or expired QR, and for a wrong pairing code', async () => {
      const phone = await newPhone(gw.api, owner);
      const spare = await newPhone(gw.api, owner);
      expectError(await gw.api('POST', `/sandbox/phones/${phone.phone}/scan`, { token: owner.jwt, body: { qr: 'sandbox:NOPE' } }), 404, 'not_found');
      expectField(await gw.api('POST', `/sandbox/phones/${phone.phone}/scan`, { token: owner.jwt, body: { qr: '' } }), 'qr');
      expectField(await gw.api('POST', `/sandbox/phones/${phone.phone}/scan`, { token: owner.jwt, body: {} }), 'qr');
      // A QR that was used is spent.
      const instance = await newInstance(gw.api, owner);
      const qr = (await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt })).body.data.qr;
      expect((await gw.api('POST', `/sandbox/phones/${phone.phone}/scan`, { token: owner.jwt, body: { qr } })).status).to.equal(200);
      expectError(await gw.api('POST', `/sandbox/phones/${spare.phone}/scan`, { token: owner.jwt, body: { qr } }), 404, 'not_found');
      // A QR shown before a restart of the pairing is expired.
      const other = await newInstance(gw.api, owner);
      const old = (await gw.api('GET', `/instances/${other.id}/session/qr`, { token: owner.jwt })).body.data.qr;
      await gw.api('POST', `/instances/${other.id}/session/restart`, { token: owner.jwt });
      const fresh = (await gw.api('GET', `/instances/${other.id}/session/qr`, { token: owner.jwt })).body.data.qr;
      expect(fresh).to.not.equal(old);
      expectError(await gw.api('POST', `/sandbox/phones/${spare.phone}/scan`, { token: owner.jwt, body: { qr: old } }), 404, 'not_found');
      // Pairing codes: unknown, and one asked for another phone.
      expectError(await gw.api('POST', `/sandbox/phones/${spare.phone}/link`, { token: owner.jwt, body: { code: 'ZZZZ-ZZZZ' } }), 404, 'not_found');
      const third = await newInstance(gw.api, owner);
      const code = (await gw.api('GET', `/instances/${third.id}/session/paircode/${phone.phone}`, { token: owner.jwt })).body.data.code;
      expectField(await gw.api('POST', `/sandbox/phones/${spare.phone}/link`, { token: owner.jwt, body: { code } }), 'code');
    });

    it('answers 401 on every sandbox route without a JWT, and with the instance token pair', async () => {
      const phone = await newPhone(gw.api, owner);
      const instance = await newInstance(gw.api, owner);
      const routes: [string, string][] = [
        ['POST', '/sandbox/phones'],
        ['POST', `/sandbox/phones/${phone.phone}/scan`],
        ['POST', `/sandbox/phones/${phone.phone}/link`],
        ['POST', `/sandbox/phones/${phone.phone}/messages`],
        ['GET', `/sandbox/phones/${phone.phone}/inbox`],
        ['POST', `/sandbox/phones/${phone.phone}/receipts`],
        ['POST', `/sandbox/phones/${phone.phone}/read`],
        ['POST', `/sandbox/phones/${phone.phone}/presence`],
        ['POST', `/sandbox/phones/${phone.phone}/chat-presence`],
        ['POST', `/sandbox/phones/${phone.phone}/unlink`],
        ['POST', `/sandbox/phones/${phone.phone}/call`],
        ['GET', `/sandbox/phones/${phone.phone}/calls`],
        ['POST', '/sandbox/groups'],
        ['POST', '/sandbox/groups/120363000000000001@g.us/participants'],
      ];
      const pair = { 'x-instance-token': instance.token, 'x-client-token': owner.clientToken };
      for (const [method, path] of routes) {
        const body = method === 'POST' ? {} : undefined;
        expectError(await gw.api(method, path, { body }), 401, 'unauthorized');
        expectError(await gw.api(method, path, { body, headers: pair }), 401, 'unauthorized');
        expectError(await gw.api(method, path, { body, token: 'not-a-jwt' }), 401, 'unauthorized');
      }
      // The session routes want credentials too.
      expectError(await gw.api('GET', `/instances/${instance.id}/session/qr`), 401, 'unauthorized');
    });

    it('never answers 500 to malformed bodies on the sandbox and session routes', async () => {
      const phone = await newPhone(gw.api, owner);
      const instance = await newInstance(gw.api, owner);
      const bodies: unknown[] = [[], null, 'text', 42, { qr: 5 }, { code: null }, { to: ['x'] }, { state: {} }, { message_ids: 'x' }];
      const routes = ['scan', 'link', 'messages', 'receipts', 'read', 'presence', 'chat-presence', 'call'];
      for (const route of routes) {
        for (const body of bodies) {
          const res = await gw.api('POST', `/sandbox/phones/${phone.phone}/${route}`, { token: owner.jwt, raw: JSON.stringify(body) });
          expect(res.status, `${route} ${JSON.stringify(body)}: ${res.text}`).to.be.within(400, 499);
          expect(res.body.success).to.equal(false);
        }
      }
      const raw = await gw.api('POST', `/sandbox/phones/${phone.phone}/scan`, { token: owner.jwt, raw: '{"qr":' });
      expectField(raw, 'body');
      for (const path of ['session/logout', 'session/restart']) {
        const res = await gw.api('POST', `/instances/${instance.id}/${path}`, { token: owner.jwt, raw: '[1,2]' });
        expect(res.status, `${path}: ${res.text}`).to.be.below(500);
      }
      expectError(await gw.api('GET', '/instances/3ENOSUCHINSTANCE/session/status', { token: owner.jwt }), 404, 'not_found');
    });
  });

  describe('with the sandbox off (MESSAGING_NETWORK=baileys)', () => {
    let gw: TestGateway;
    let owner: TestAccount;
    const outbound: string[] = [];
    let sockets = 0;
    const connect = Socket.prototype.connect;

    before(async () => {
      // Every client socket of this process, during boot and the requests below.
      Socket.prototype.connect = function (this: Socket, ...args: unknown[]) {
        const options = args[0] as { host?: string; port?: number; path?: string } | number;
        const target = typeof options === 'object' ? (options.path ?? `${options.host ?? 'localhost'}:${options.port}`) : `${String(args[1] ?? 'localhost')}:${options}`;
        sockets += 1;
        if (!/^(127\.0\.0\.1|localhost|::1):/.test(target)) outbound.push(target);
        return (connect as (...a: unknown[]) => Socket).apply(this, args);
      } as typeof Socket.prototype.connect;
      gw = await startTestGateway({ MESSAGING_NETWORK: 'baileys' });
      owner = await newAccount(gw.api);
    });
    after(async () => {
      await gw.stop();
      Socket.prototype.connect = connect;
    });

    it('starts without touching the network while no instance is paired', async () => {
      await newInstance(gw.api, owner);
      expect((await gw.api('GET', '/health')).status).to.equal(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The hook sees sockets (this test's own requests to the gateway), none of them outbound.
      expect(sockets).to.be.greaterThan(0);
      expect(outbound).to.deep.equal([]);
    });

    it('answers 404 on every sandbox route, with or without a JWT', async () => {
      for (const [method, path] of [
        ['POST', '/sandbox/phones'],
        ['POST', '/sandbox/phones/5511999990001/scan'],
        ['GET', '/sandbox/phones/5511999990001/inbox'],
        ['POST', '/sandbox/phones/5511999990001/call'],
        ['POST', '/sandbox/groups'],
        ['GET', '/sandbox/media/ABC.enc'],
      ] as const) {
        const body = method === 'POST' ? { phone: '5511999990001', push_name: 'x' } : undefined;
        expectError(await gw.api(method, path, { body, token: owner.jwt }), 404, 'not_found');
        expectError(await gw.api(method, path, { body }), 404, 'not_found');
      }
      const openapi = await gw.api('GET', '/openapi.json');
      expect(Object.keys(openapi.body.paths).filter((p) => p.startsWith('/sandbox'))).to.deep.equal([]);
    });

    it('still answers the status of an unpaired instance', async () => {
      const instance = await newInstance(gw.api, owner);
      const res = await gw.api('GET', `/instances/${instance.id}/session/status`, { token: owner.jwt });
      expect(res.body).to.deep.equal({ code: 200, success: true, data: { connected: false } });
      expect(outbound).to.deep.equal([]);
    });
  });
});
