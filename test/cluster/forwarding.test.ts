/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { LeaseDoc } from '../../src/cluster/leases.js';
import { newDeploymentKeys, settled, useSharedBackends, type DeploymentKeys } from './shared-backends.js';
import { apiFor, expectError, newAccount, newInstance } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';

const TTL_MS = 5_000;

/**
 * Issue 15: a request that needs an instance's live session reaches the node owning it, whichever
 * node the load balancer picked. Two gateway processes share the test servers; sessions paired on
 * A are used through B, and B answers as A's socket says.
 */
describe('two gateway nodes: requests about a session are forwarded to its owner', function () {
  this.timeout(180_000);
  const cluster = useSharedBackends(TTL_MS);
  const node = (keys: DeploymentKeys) => cluster.node(keys);

  const lease = (instanceId: string) => cluster.leases().findOne({ _id: `session:${instanceId}` });
  const pidOf = (doc: LeaseDoc | null) => (doc?.holder ? Number(doc.holder.split(':').at(-2)) : null);

  it('serves send, status, QR, idempotent repeats and logout through the non-owner; 503 while a killed owner holds the lease, then the live node', async () => {
    const keys = newDeploymentKeys();
    const a = await node(keys);
    const b = await node(keys);
    const apiA = apiFor(a.url);
    const apiB = apiFor(b.url);
    const owner = await newAccount(apiA);
    const auth = { token: owner.jwt };

    // Two sessions paired on A: A holds their leases, with its address.
    const paired: { id: string; own: string; contact: string }[] = [];
    for (let i = 0; i < 2; i++) {
      const instance = await newInstance(apiA, owner);
      const own = await newPhone(apiA, owner);
      const contact = await newPhone(apiA, owner);
      await pairByQr(apiA, owner, instance.id, own.phone);
      paired.push({ id: instance.id, own: own.phone, contact: contact.phone });
    }
    const [one, two] = paired as [(typeof paired)[0], (typeof paired)[0]];
    // Both paired through A; the placement (issue 34) leaves one on each node. `one` is used through
    // the node that does not hold it (called B below), its owner being A.
    const owners = await settled(cluster, 2);
    const byPid = (pid: number | null | undefined) => (pid === a.child.pid ? { gw: a, api: apiA } : { gw: b, api: apiB });
    const holderOne = byPid(owners.get(one.id));
    const otherOne = holderOne.gw === a ? { gw: b, api: apiB } : { gw: a, api: apiA };
    const leased = await lease(one.id);
    expect(pidOf(leased)).to.equal(holderOne.gw.child.pid);
    expect(leased?.address).to.equal(holderOne.gw.url);
    {
      const apiA = holderOne.api;
      const apiB = otherOne.api;
      await waitFor(async () => (await apiB('GET', `/instances/${one.id}`, auth)).status === 200, 'the instance read on B');

      // Status through B: A's live socket answers (B has none, it would say not connected).
      const status = await apiB('GET', `/instances/${one.id}/session/status`, auth);
      expect(status.status, status.text).to.equal(200);
      expect(status.body.data.connected).to.equal(true);

      // A client's own hop header only keeps the request on B, as a single node would answer it.
      const hopped = await apiB('GET', `/instances/${one.id}/session/status`, { ...auth, headers: { 'x-gateway-forwarded-by': 'me' } });
      expect(hopped.status, hopped.text).to.equal(200);
      expect(hopped.body.data.connected).to.equal(false);
      // And it never passes a bad token: B refuses it before anything is forwarded.
      expectError(await apiB('GET', `/instances/${one.id}/session/status`, { token: 'not-a-token', headers: { 'x-gateway-forwarded-by': 'me' } }), 401, 'unauthorized');
      expectError(await apiB('GET', `/instances/${one.id}/session/status`, { token: 'not-a-token' }), 401, 'unauthorized');

      // A text sent through B leaves A's socket and reaches the contact's phone once.
      const sent = await apiB('POST', `/instances/${one.id}/chat/send/text`, { ...auth, body: { phone: one.contact, message: 'through B' } });
      expect(sent.status, sent.text).to.equal(200);
      const inbox = async () => ((await apiA('GET', `/sandbox/phones/${one.contact}/inbox`, auth)).body.messages as any[]).map((m) => m.text as string);
      await waitFor(async () => (await inbox()).includes('through B'), 'the contact received the text');

      // One Idempotency-Key through A then B: the same answer, one message.
      const key = randomUUID();
      const viaA = await apiA('POST', `/instances/${one.id}/chat/send/text`, { ...auth, headers: { 'idempotency-key': key }, body: { phone: one.contact, message: 'once' } });
      const viaB = await apiB('POST', `/instances/${one.id}/chat/send/text`, { ...auth, headers: { 'idempotency-key': key }, body: { phone: one.contact, message: 'once' } });
      expect(viaA.status, viaA.text).to.equal(200);
      expect(viaB.status, viaB.text).to.equal(200);
      expect(viaB.body).to.deep.equal(viaA.body);
      await waitFor(async () => (await inbox()).includes('once'), 'the idempotent text received');
      await new Promise((r) => setTimeout(r, 300));
      expect((await inbox()).filter((t) => t === 'through B')).to.have.length(1);
      expect((await inbox()).filter((t) => t === 'once')).to.have.length(1);

      // QR of an instance not paired: B starts the pairing and takes its lease; A's request goes to B.
      const fresh = await newInstance(apiA, owner);
      await waitFor(async () => (await apiB('GET', `/instances/${fresh.id}`, auth)).status === 200, 'the new instance read on B');
      const qrB = await apiB('GET', `/instances/${fresh.id}/session/qr`, auth);
      expect(qrB.status, qrB.text).to.equal(200);
      expect(pidOf(await lease(fresh.id))).to.equal(otherOne.gw.child.pid);
      const qrA = await apiA('GET', `/instances/${fresh.id}/session/qr`, auth);
      expect(qrA.status, qrA.text).to.equal(200);
      expect(qrA.body.data.qr).to.be.a('string').and.not.equal('');
      expect(pidOf(await lease(fresh.id)), 'A did not open a second pairing').to.equal(otherOne.gw.child.pid);

      // Logout through B: A's session ends, the instance is no longer paired.
      const out = await apiB('POST', `/instances/${one.id}/session/logout`, auth);
      expect(out.status, out.text).to.equal(200);
      await waitFor(() => cluster.esdb.log.all.some((e) => e.streamId === `session-${one.id}` && e.type === 'SessionLoggedOut'), 'the logout recorded');
      const gone = await apiA('GET', `/instances/${one.id}/session/status`, auth);
      expect(gone.body.data.connected).to.equal(false);
      expectError(await apiB('POST', `/instances/${one.id}/chat/send/text`, { ...auth, body: { phone: one.contact, message: 'after logout' } }), 409, 'not_connected');
    }

    // `two`, alone paired now, settles where the placement puts it: its owner is killed, the other serves it.
    const ownersTwo = await settled(cluster, 2);
    const killed = byPid(ownersTwo.get(two.id)).gw;
    const { gw: survivor, api: apiS } = killed === a ? { gw: b, api: apiB } : { gw: a, api: apiA };

    // A killed: until its lease on `two` lapses, B cannot reach the owner and says so (503, never 500).
    killed.child.kill('SIGKILL');
    await killed.exited;
    const killedAt = Date.now();
    const down = await apiS('GET', `/instances/${two.id}/session/status`, auth);
    expectError(down, 503, 'unavailable');
    expect(Number(down.headers.get('retry-after'))).to.be.greaterThan(0);
    // Then B takes the lease over, opens the session and serves it itself.
    const statuses = new Set<number>();
    await waitFor(
      async () => {
        const res = await apiS('GET', `/instances/${two.id}/session/status`, auth);
        statuses.add(res.status);
        return res.status === 200 && res.body.data.connected === true;
      },
      'the session served by B',
      4 * TTL_MS,
    );
    expect([...statuses].filter((s) => s !== 200 && s !== 503)).to.deep.equal([]);
    expect(pidOf(await lease(two.id))).to.equal(survivor.child.pid);
    const after = await apiS('POST', `/instances/${two.id}/chat/send/text`, { ...auth, body: { phone: two.contact, message: 'after the move' } });
    expect(after.status, after.text).to.equal(200);
    console.log(`      forwarding: the killed owner's session served by B ${Date.now() - killedAt} ms after SIGKILL (lease ttl ${TTL_MS} ms)`);
    survivor.child.kill('SIGTERM');
    expect(await survivor.exited).to.equal(0);
  });
});
