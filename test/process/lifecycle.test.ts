import { expect } from 'chai';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiFor, EMBEDDED, newAccount, newInstance } from '../support/gateway.js';
import { filesUnder } from '../support/files.js';
import { spawnGateway } from '../support/process.js';

/**
 * A sign-in sent with `Expect: 100-continue`: `received` settles when the server has parsed the
 * headers (Node answers 100 only then, and the request is active from then on); the body goes
 * out only when `sendBody` is called.
 */
function loginInTwoSteps(url: string, credentials: { email: string; password: string }): { received: Promise<void>; sendBody(): void; status: Promise<number> } {
  const body = JSON.stringify(credentials);
  const req = httpRequest(new URL('/auth/login', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
  });
  const received = new Promise<void>((resolve) => req.once('continue', () => resolve()));
  const status = new Promise<number>((resolve, reject) => {
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
  });
  req.flushHeaders();
  return { received, sendBody: () => req.end(body), status };
}

describe('gateway process', function () {
  // Each test starts src/main.ts (through tsx) once or twice and waits for its 'listening' line:
  // at load 25 on 2 cores one start took over 30 s, and the first test failed at 60 s (issue 27).
  this.timeout(180_000);
  let dataDir: string;
  beforeEach(async () => (dataDir = await mkdtemp(join(tmpdir(), 'gw-proc-'))));
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it('drains in-flight requests on SIGTERM, exits 0, and restarts with its data', async () => {
    const first = await spawnGateway({ DATA_DIR: dataDir });
    const api = apiFor(first.url);
    const owner = await newAccount(api);
    const instance = await newInstance(api, owner, { name: 'survivor' });
    // A sign-in in flight while the signal arrives must still be answered. In flight for sure:
    // the server has read its headers (it answered 100 Continue) before the signal, and its body
    // comes after. A fixed 5 ms could end before the server read anything, leaving an idle
    // connection that the stop rightly closes.
    const inFlight = loginInTwoSteps(first.url, { email: owner.email, password: owner.password });
    await inFlight.received;
    first.child.kill('SIGTERM');
    inFlight.sendBody();
    expect(await inFlight.status).to.equal(200);
    expect(await first.exited).to.equal(0);
    expect(first.logs.some((l) => l.includes('gateway stopped'))).to.equal(true);

    const second = await spawnGateway({ DATA_DIR: dataDir });
    try {
      const again = apiFor(second.url);
      const login = await again('POST', '/auth/login', { body: { email: owner.email, password: owner.password } });
      expect(login.status).to.equal(200);
      const res = await again('GET', `/instances/${instance.id}`, { token: login.body.access_token });
      expect(res.body.name).to.equal('survivor');
      // Same generated signing key: a token issued before the restart still works.
      expect((await again('GET', '/account', { token: owner.jwt })).status).to.equal(200);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
    }
  });

  it('keeps generated keys private and no secret in clear anywhere in DATA_DIR', async () => {
    // The embedded stores' files in DATA_DIR are the subject: embedded whatever TEST_* says.
    const gw = await spawnGateway({ DATA_DIR: dataDir, ...EMBEDDED });
    const api = apiFor(gw.url);
    const owner = await newAccount(api);
    const instance = await newInstance(api, owner, { name: 'secretive', webhook: 'https://hooks.example.com/x' });
    const webhookSecret = (await api('GET', `/instances/${instance.id}/webhook`, { token: owner.jwt })).body.data.secret as string;
    const rotated = (await api('POST', '/account/client-secret/rotate', { token: owner.jwt })).body.client_secret as string;
    gw.child.kill('SIGTERM');
    expect(await gw.exited).to.equal(0);

    const secrets = [owner.password, owner.clientSecret, rotated, instance.token, webhookSecret];
    const files = await filesUnder(dataDir);
    expect(files.length).to.be.greaterThan(2);
    for (const file of files) {
      const bytes = await readFile(file);
      for (const secret of secrets) expect(bytes.includes(Buffer.from(secret)), `${secret} in ${file}`).to.equal(false);
      if (file.endsWith('.key')) expect((await stat(file)).mode & 0o777).to.equal(0o600);
    }
    for (const line of gw.logs) for (const secret of secrets) expect(line).to.not.include(secret);
  });
});
