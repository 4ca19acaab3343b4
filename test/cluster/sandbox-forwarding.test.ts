/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { newDeploymentKeys, useSharedBackends } from './shared-backends.js';
import { apiFor, newAccount, newInstance } from '../support/gateway.js';
import { newPhone, status, waitFor } from '../support/sandbox.js';

/**
 * Issue 34: the sandbox's phone routes work through any node. A scan or a phone's message sent
 * through the node that does not hold the instance's session is forwarded to the one that does, so
 * the instance pairs, and receives the message live (not kept for its next connect).
 */
describe('two gateway nodes: the sandbox phone routes reach the node holding the session', function () {
  this.timeout(120_000);
  const cluster = useSharedBackends(5_000);
  const received = (instanceId: string, text: string) =>
    cluster.esdb.log.all.some((e) => e.streamId === `session-${instanceId}` && e.type === 'MessageReceived' && Buffer.from(e.data).toString('utf8').includes(text));

  it('pairs by a QR scanned through the other node, and delivers a phone message sent through it live', async () => {
    const keys = newDeploymentKeys();
    const a = await cluster.node(keys);
    const b = await cluster.node(keys);
    const apiA = apiFor(a.url);
    const apiB = apiFor(b.url);
    const owner = await newAccount(apiA);
    const instance = await newInstance(apiA, owner);
    const own = await newPhone(apiA, owner);
    const contact = await newPhone(apiA, owner);

    // A shows the QR (it holds the pairing session); the phone scans it through B.
    const qr = await apiA('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt });
    expect(qr.status, qr.text).to.equal(200);
    const lease = await cluster.leases().findOne({ _id: `session:${instance.id}` });
    expect(lease?.address).to.equal(a.url);
    const scan = await apiB('POST', `/sandbox/phones/${own.phone}/scan`, { token: owner.jwt, body: { qr: qr.body.data.qr } });
    expect(scan.status, scan.text).to.equal(200);
    await waitFor(async () => (await status(apiB, owner, instance.id)).connected === true, 'connected through B');

    // The contact's message through B reaches A's live socket at once.
    const sent = await apiB('POST', `/sandbox/phones/${contact.phone}/messages`, { token: owner.jwt, body: { to: own.phone, text: 'via B' } });
    expect(sent.status, sent.text).to.equal(201);
    await waitFor(() => received(instance.id, 'via B'), 'the message recorded by the owner');
    // Handled on B, it would have been kept for the session's next connect (B has no socket): A's stays up.
    expect(cluster.esdb.log.all.filter((e) => e.streamId === `session-${instance.id}` && e.type === 'MessageReceived')).to.have.length(1);
  });
});
