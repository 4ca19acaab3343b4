import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiFor, EMBEDDED, newAccount, newInstance } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { Receiver } from '../webhooks/support/receiver.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * `npm start` as the README runs it: it builds when the sources changed (a fresh clone builds
 * here, which takes minutes on a busy machine), then runs dist/main.js, the gateway bundled into
 * one file. What the bundle could break is what finds files beside its own module: the Swagger UI
 * assets, the web app, the sandbox driver loaded on first use, the webhook worker thread.
 */
describe('npm start on the built gateway (dist/main.js)', function () {
  this.timeout(600_000);
  let dataDir: string;
  let child: ChildProcess | undefined;
  let exited: Promise<number | null>;
  const logs: string[] = [];
  let url: string;
  const receiver = new Receiver();

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-built-'));
    await receiver.start();
    child = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      // Its own process group: npm's child, the gateway, is stopped with it.
      detached: true,
      env: { ...process.env, ...EMBEDDED, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, MESSAGING_NETWORK: 'sandbox', ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'info', SCRYPT_LOG_N: '10' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    exited = once(child, 'exit').then(([code]) => code as number | null);
    url = await new Promise<string>((resolve, reject) => {
      let buffer = '';
      child!.stdout!.on('data', (chunk: Buffer) => {
        buffer += chunk.toString('utf8');
        for (let nl; (nl = buffer.indexOf('\n')) >= 0; buffer = buffer.slice(nl + 1)) {
          const line = buffer.slice(0, nl);
          logs.push(line);
          if (!line.startsWith('{')) continue;
          const entry = JSON.parse(line) as { msg?: string; port?: number };
          if (entry.msg === 'gateway listening') resolve(`http://127.0.0.1:${entry.port}`);
        }
      });
      child!.stderr!.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')));
      void exited.then((code) => reject(new Error(`npm start exited with ${code} before listening:\n${logs.join('\n')}`)));
    });
  });

  after(async () => {
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
    await receiver.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers /ready', async () => {
    let status = 0;
    await waitFor(async () => (status = (await fetch(`${url}/ready`)).status) === 200, '/ready', 60_000);
    expect(status).to.equal(200);
  });

  it('serves the Swagger UI assets and the built web app', async () => {
    const swagger = await fetch(`${url}/docs/assets/swagger-ui-bundle.js`);
    expect(swagger.status).to.equal(200);
    expect((await swagger.text()).length).to.be.greaterThan(100_000);
    const app = await fetch(`${url}/app/`);
    expect(app.status).to.equal(200);
    expect(await app.text()).to.not.include('Web app not built');
  });

  it('pairs a sandbox phone and delivers its message to the webhook', async () => {
    const api = apiFor(url);
    const owner = await newAccount(api);
    const instance = await newInstance(api, owner, { name: 'bundled', webhook: receiver.url, events_subscribe: ['Message'] });
    const mine = await newPhone(api, owner);
    const peer = await newPhone(api, owner);
    await pairByQr(api, owner, instance.id, mine.phone);
    const sent = await api('POST', `/sandbox/phones/${peer.phone}/messages`, { token: owner.jwt, body: { to: mine.phone, text: 'from the bundle' } });
    expect(sent.status, sent.text).to.equal(201);
    const delivered = () => receiver.received.find((r) => JSON.stringify(r.body).includes('from the bundle'));
    await waitFor(() => delivered() !== undefined, 'the webhook delivery', 60_000);
    expect(delivered()?.body.instance_id).to.equal(instance.id);
  });

  it('stops on SIGTERM', async () => {
    // The group's signal ends npm by the signal (no exit code); the gateway stops and says so.
    process.kill(-child!.pid!, 'SIGTERM');
    await exited;
    await waitFor(() => logs.some((l) => l.includes('gateway stopped')), 'the gateway to stop', 30_000);
  });
});
