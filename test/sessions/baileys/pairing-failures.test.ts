/* eslint-disable @typescript-eslint/no-explicit-any -- answers and log lines are read field by field */
import { DEFAULT_CONNECTION_CONFIG } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { pino, type Logger } from 'pino';
import { expectError, newAccount, newInstance, type TestAccount, type TestGateway } from '../../support/gateway.js';
import { sessionEvents, waitFor } from '../../support/sandbox.js';
import { ScriptedWhatsApp } from '../../servers/whatsapp/scripted-whatsapp.js';
import { anyData, pairInstance, startPhoneGateway, waitForSession } from './phone-gateway.js';

const BUILT_IN = DEFAULT_CONNECTION_CONFIG.version.join('.');
const PHONE = '5511900000001';

/** A logger whose lines the test reads, at `level`. */
function capturedLogger(level: string): { logger: Logger; lines: any[] } {
  const lines: any[] = [];
  const logger = pino({ level, base: undefined }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** What the version fetch answers, as Baileys' fetchLatestWaWebVersion does. */
const fetched = (version: number[]) => async () => ({ version, isLatest: true });
const offline = async () => ({ version: DEFAULT_CONNECTION_CONFIG.version, isLatest: false, error: new Error('getaddrinfo ENOTFOUND web.whatsapp.com') });

/**
 * The silent failures of a first pairing, each through the whole gateway against Baileys' real
 * socket and a scripted WhatsApp server: what the user sees in the QR or pairing-code answer, the
 * history, the log, and /ready.
 */
describe('first pairing on a real phone: failures say why', function () {
  this.timeout(60_000);
  let server: ScriptedWhatsApp;
  let gw: TestGateway | undefined;
  let owner: TestAccount;

  beforeEach(async () => {
    server = await ScriptedWhatsApp.start();
  });

  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
    await server.stop();
    expect(server.errors.map(String)).to.deep.equal([]);
  });

  async function start(env: Record<string, string> = {}, options: Parameters<typeof startPhoneGateway>[2] = {}): Promise<TestGateway> {
    gw = await startPhoneGateway(server, env, { network: { fetchWaVersion: offline }, ...options });
    owner = await newAccount(gw.api);
    return gw;
  }

  describe('pairing codes', () => {
    it('a second code after the first one expired comes from fresh credentials: the network sees a registration, not a login', async () => {
      const gw = await start();
      const instance = await newInstance(gw.api, owner);
      const first = await gw.api('GET', `/instances/${instance.id}/session/paircode/${PHONE}`, { token: owner.jwt });
      expect(first.status, first.text).to.equal(200);
      const expired = await server.connection(0);
      await expired.next((n) => n.tag === 'iq' && JSON.stringify(n.content ?? '').includes('link_code_companion_reg'), 'the code request');
      // The code was never typed: the network ends the connection.
      expired.close();
      await waitFor(() => expired.closed, 'the first connection closed');

      const second = await gw.api('GET', `/instances/${instance.id}/session/paircode/${PHONE}`, { token: owner.jwt });
      expect(second.status, second.text).to.equal(200);
      expect(second.body.data.code).to.be.a('string').and.not.equal(first.body.data.code);
      const retry = await server.connection(1);
      expect(retry.registering, 'the second attempt registers a new companion').to.equal(true);
      expect(retry.noiseKey, 'with fresh credentials').to.not.equal(expired.noiseKey);
    });
  });

  describe('refusals at pairing', () => {
    it('a 405 answers the QR request 502 upstream_failed naming the refused version and what to do; the stop is recorded and logged', async () => {
      server.acceptsVersion = () => false;
      const { logger, lines } = capturedLogger('info');
      const gw = await start({}, { logger });
      const instance = await newInstance(gw.api, owner);
      const qr = await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt });
      expectError(qr, 502, 'upstream_failed');
      expect(qr.body.error.message).to.include('405').and.include(BUILT_IN).and.include('WHATSAPP_VERSION');

      const code = await gw.api('GET', `/instances/${instance.id}/session/paircode/${PHONE}`, { token: owner.jwt });
      expectError(code, 502, 'upstream_failed');
      expect(code.body.error.message).to.include('405').and.include('WHATSAPP_VERSION');

      const stop = await waitForSession(gw, instance.id, (e) => e.type === 'SessionDisconnected', 'the recorded stop');
      expect(anyData(stop)).to.include({ reason: 'client_outdated', status_code: 405 });
      expect(anyData(stop).message).to.include(BUILT_IN).and.include('WHATSAPP_VERSION');
      const history = await gw.api('GET', `/instances/${instance.id}/history?types=SessionDisconnected`, { token: owner.jwt });
      expect(history.status, history.text).to.equal(200);
      expect(history.body.events.map((e: any) => e.data.reason)).to.include('client_outdated');
      await waitFor(() => lines.some((l) => l.instanceId === instance.id && l.reason === 'client_outdated' && l.level >= 40), 'the stop in the log');
    });

    it('a 403 answers 502 upstream_failed saying the account is banned or restricted', async () => {
      server.onHandshake = (conn) => conn.fail(403);
      const gw = await start();
      const instance = await newInstance(gw.api, owner);
      const qr = await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt });
      expectError(qr, 502, 'upstream_failed');
      expect(qr.body.error.message).to.include('403').and.match(/ban|restrict/);
      const code = await gw.api('GET', `/instances/${instance.id}/session/paircode/${PHONE}`, { token: owner.jwt });
      expectError(code, 502, 'upstream_failed');
      expect(code.body.error.message).to.include('403');
      const stop = await waitForSession(gw, instance.id, (e) => e.type === 'SessionDisconnected', 'the recorded stop');
      expect(anyData(stop)).to.include({ reason: 'forbidden', status_code: 403 });
    });

    it("Baileys' own log follows LOG_LEVEL: its info lines at info, nothing below error at error", async () => {
      const info = capturedLogger('info');
      let gw = await start({}, { logger: info.logger });
      const instance = await newInstance(gw.api, owner);
      expect((await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt })).status).to.equal(200);
      expect(info.lines.some((l) => l.module === 'baileys' && l.level === 30), 'Baileys info lines at LOG_LEVEL=info').to.equal(true);
      await gw.stop();

      const quiet = capturedLogger('error');
      gw = await start({}, { logger: quiet.logger });
      const other = await newInstance(gw.api, owner);
      expect((await gw.api('GET', `/instances/${other.id}/session/qr`, { token: owner.jwt })).status).to.equal(200);
      expect(quiet.lines.filter((l) => l.level < 50), 'nothing under error at LOG_LEVEL=error').to.deep.equal([]);
    });
  });

  describe('the WhatsApp Web version', () => {
    it('is fetched at start: the network sees it, /ready and the log say so', async () => {
      const { logger, lines } = capturedLogger('info');
      const gw = await start({}, { logger, network: { fetchWaVersion: fetched([2, 3000, 1_111_111_111]) } });
      const ready = await gw.api('GET', '/ready');
      expect(ready.body.checks.whatsapp_version).to.equal('2.3000.1111111111 (fetched)');
      expect(ready.status).to.equal(200);
      expect(lines.some((l) => /2\.3000\.1111111111/.test(l.msg) && /fetched/.test(l.msg))).to.equal(true);
      const instance = await newInstance(gw.api, owner);
      expect((await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt })).status).to.equal(200);
      expect((await server.connection(0)).version).to.equal('2.3000.1111111111');
    });

    it('falls back fast and quietly to the built-in version when the fetch fails (no internet)', async () => {
      const { logger, lines } = capturedLogger('info');
      const gw = await start({}, { logger, network: { fetchWaVersion: offline } });
      const instance = await newInstance(gw.api, owner);
      expect((await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt })).status).to.equal(200);
      expect((await server.connection(0)).version).to.equal(BUILT_IN);
      const ready = await gw.api('GET', '/ready');
      expect(ready.status).to.equal(200);
      expect(ready.body.checks.whatsapp_version).to.match(new RegExp(`^${BUILT_IN.replace(/\./g, '\\.')} \\(built-in`));
      expect(lines.filter((l) => l.level >= 40 && /version|fetch|whatsapp\.com/i.test(l.msg)), 'no warning for a missing internet').to.deep.equal([]);
      expect(lines.some((l) => l.msg.includes(BUILT_IN) && /built-in/.test(l.msg))).to.equal(true);
    });

    it('a fetch that never answers holds neither the start nor the first pairing', async () => {
      const gw = await start({}, { network: { fetchWaVersion: () => new Promise(() => undefined), versionFetchTimeoutMs: 300 } });
      const instance = await newInstance(gw.api, owner);
      expect((await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt })).status).to.equal(200);
      expect((await server.connection(0)).version).to.equal(BUILT_IN);
      expect((await gw.api('GET', '/ready')).body.checks.whatsapp_version).to.match(/built-in/);
    });

    it('WHATSAPP_VERSION overrides the fetch', async () => {
      let asked = 0;
      const gw = await start({ WHATSAPP_VERSION: '2.3000.4242' }, { network: { fetchWaVersion: async () => (asked++, { version: [2, 3000, 1], isLatest: true }) } });
      const instance = await newInstance(gw.api, owner);
      expect((await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt })).status).to.equal(200);
      expect((await server.connection(0)).version).to.equal('2.3000.4242');
      expect((await gw.api('GET', '/ready')).body.checks.whatsapp_version).to.equal('2.3000.4242 (WHATSAPP_VERSION)');
      expect(asked).to.equal(0);
    });

    it('a 405 fetches the version again and retries once by itself: the QR request never sees the refusal', async () => {
      const answers = [[2, 3000, 1000], [2, 3000, 2000]];
      server.acceptsVersion = (v) => v === '2.3000.2000';
      const gw = await start({}, { network: { fetchWaVersion: async () => ({ version: answers.shift() ?? [2, 3000, 2000], isLatest: true }) } });
      const instance = await newInstance(gw.api, owner);
      const qr = await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt });
      expect(qr.status, qr.text).to.equal(200);
      expect(server.connections.map((c) => c.version)).to.deep.equal(['2.3000.1000', '2.3000.2000']);
      expect((await gw.api('GET', '/ready')).body.checks.whatsapp_version).to.equal('2.3000.2000 (fetched)');
      expect((await sessionEvents(gw.gateway, instance.id)).map((e) => e.type)).to.not.include('SessionDisconnected');
    });
  });

  describe('right after the phone scanned', () => {
    it('a drop before the first open reconnects: the freshly paired session is not given up', async () => {
      const gw = await start();
      // The login after the 515 is dropped before it succeeds; later ones are logged in.
      server.onHandshake = (conn) => (conn.index === 1 ? conn.drop() : server.standardHandshake(conn));
      const instance = await newInstance(gw.api, owner);
      const qr = await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt });
      expect(qr.status, qr.text).to.equal(200);
      await server.scanQr(await server.connection(0), qr.body.data.qr);
      await server.connection(1);
      const third = await server.connection(2);
      expect(third.registering).to.equal(false);
      await waitForSession(gw, instance.id, (e) => e.type === 'SessionConnected', 'Connected');
      await waitFor(async () => (await gw.api('GET', `/instances/${instance.id}/session/status`, { token: owner.jwt })).body.data.connected === true, 'connected');
    });

    it('pairs by QR as before (the same socket path, for contrast)', async () => {
      const gw = await start();
      const instance = await newInstance(gw.api, owner);
      await pairInstance(gw, server, owner, instance.id);
    });
  });
});
