import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import type { Clock } from '../../src/infra/clock.js';
import { expectError, newAccount, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';

/**
 * A clock the test moves forward, and can stop: on a busy machine a second may pass between two
 * requests, so a check one second before a token's expiry must not depend on how fast they run.
 */
function movableClock(): Clock & { advance(seconds: number): void; freeze(): void; thaw(): void } {
  let offsetMs = 0;
  let frozenAt: number | null = null;
  return {
    now: () => new Date(frozenAt ?? Date.now() + offsetMs),
    advance: (seconds) => {
      if (frozenAt === null) offsetMs += seconds * 1000;
      else frozenAt += seconds * 1000;
    },
    freeze: () => (frozenAt = Date.now() + offsetMs),
    // Time goes on from where it stood, never back.
    thaw: () => {
      if (frozenAt !== null) offsetMs = frozenAt - Date.now();
      frozenAt = null;
    },
  };
}

/** The hottest authenticated reads remember what they verified; nothing remembered outlives its validity. */
describe('authenticated reads on the hot path', () => {
  const clock = movableClock();
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  let instance: { id: string; token: string };

  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox', JWT_TTL_SECONDS: '60' }, { clock, logger: pino({ level: 'info', base: undefined }, sink) });
  before(async () => {
    instance = await newInstance(t.api, owner);
    await pairByQr(t.api, owner, instance.id, (await newPhone(t.api, owner)).phone);
  });

  const paths = () => [`/instances/${instance.id}`, `/instances/${instance.id}/session/status`];
  const pair = (instanceToken: string) => ({ 'x-instance-token': instanceToken, 'x-client-token': owner.clientToken });

  it('refuses a JWT the moment it expires, though it was accepted (and remembered) a moment before', async () => {
    clock.freeze();
    try {
      await expiresOnTime();
    } finally {
      clock.thaw();
    }
    owner.jwt = (await t.api('POST', '/token', { body: { client_token: owner.clientToken, client_secret: owner.clientSecret } })).body.access_token as string;
  });

  const expiresOnTime = async () => {
    const login = await t.api('POST', '/token', { body: { client_token: owner.clientToken, client_secret: owner.clientSecret } });
    const jwt = login.body.access_token as string;
    for (const path of paths()) for (let i = 0; i < 3; i++) expect((await t.api('GET', path, { token: jwt })).status).to.equal(200);
    clock.advance(59);
    for (const path of paths()) expect((await t.api('GET', path, { token: jwt })).status).to.equal(200);
    clock.advance(2);
    for (const path of paths()) expectError(await t.api('GET', path, { token: jwt }), 401, 'unauthorized');
    // A token this process never verified is refused the same way.
    const stale = (await t.api('POST', '/token', { body: { client_token: owner.clientToken, client_secret: owner.clientSecret } })).body.access_token as string;
    clock.advance(61);
    for (const path of paths()) expectError(await t.api('GET', path, { token: stale }), 401, 'unauthorized');
  };

  it('refuses a rotated instance token at once, though it was accepted (and remembered) a moment before', async () => {
    for (const path of paths()) for (let i = 0; i < 3; i++) expect((await t.api('GET', path, { headers: pair(instance.token) })).status).to.equal(200);
    const rotated = await t.api('POST', `/instances/${instance.id}/token/rotate`, { token: owner.jwt });
    expect(rotated.status).to.equal(200);
    for (const path of paths()) {
      expectError(await t.api('GET', path, { headers: pair(instance.token) }), 403, 'forbidden');
      expect((await t.api('GET', path, { headers: pair(rotated.body.token as string) })).status).to.equal(200);
    }
    instance.token = rotated.body.token as string;
  });

  it("refuses a remembered client token on another account's instance", async () => {
    const other = await newAccount(t.api);
    const theirs = await newInstance(t.api, other);
    expect((await t.api('GET', `/instances/${theirs.id}`, { headers: { 'x-instance-token': theirs.token, 'x-client-token': other.clientToken } })).status).to.equal(200);
    for (const path of [`/instances/${theirs.id}`, `/instances/${theirs.id}/session/status`]) {
      expectError(await t.api('GET', path, { headers: { 'x-instance-token': theirs.token, 'x-client-token': owner.clientToken } }), 403, 'forbidden');
      expectError(await t.api('GET', path, { token: owner.jwt }), 403, 'forbidden');
    }
  });

  it('writes one access line per request, with its id, and no credential in any line', async () => {
    lines.length = 0;
    const ids: string[] = [];
    for (const path of paths()) {
      for (const options of [{ token: owner.jwt }, { headers: pair(instance.token) }]) {
        const res = await t.api('GET', path, options);
        expect(res.status).to.equal(200);
        ids.push(res.headers.get('x-request-id') as string);
      }
    }
    // Access lines are written in groups, a few milliseconds after their answers (a line of the
    // test before may come after `lines` was emptied): these requests' lines are those with their ids.
    const access = () => lines.filter((l) => l.msg === 'request' && ids.includes(l.requestId as string));
    await waitFor(() => access().length >= ids.length, 'an access line per request');
    expect(access().map((l) => l.requestId)).to.deep.equal(ids);
    for (const line of access()) {
      expect(line).to.include({ method: 'GET', status: 200 });
      expect(paths()).to.include(line.path);
      expect(line.ms).to.be.a('number');
    }
    const written = JSON.stringify(lines);
    for (const secret of [owner.jwt, instance.token, owner.clientToken]) expect(written).to.not.include(secret);
  });
});
