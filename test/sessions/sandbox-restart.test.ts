/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDocumentStore } from '../../src/infra/docstore/open-document-store.js';
import { apiFor, newAccount, newInstance, startTestGateway, testBackendsFor } from '../support/gateway.js';
import { spawnGateway } from '../support/process.js';
import { instanceOf, newPhone, pairByQr, sessionEvents, status, waitFor, waitForEvent } from '../support/sandbox.js';

/** Paired sessions and the sandbox world survive a gateway restart on the same data. */
describe('sessions across a gateway restart', function () {
  this.timeout(60_000);
  let dataDir: string;
  beforeEach(async () => (dataDir = await mkdtemp(join(tmpdir(), 'gw-sessions-'))));
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it('reconnects paired instances at boot without re-pairing; unpaired and canceled ones stay down', async () => {
    const first = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' }, {}, dataDir);
    const owner = await newAccount(first.api);
    const paired = await newInstance(first.api, owner, { name: 'paired' });
    const canceled = await newInstance(first.api, owner, { name: 'canceled' });
    const unpaired = await newInstance(first.api, owner, { name: 'unpaired' });
    const phone = await newPhone(first.api, owner, { push_name: 'Keeper', about: 'here', business: { name: 'Keep Co', email: 'k@example.com', categories: [{ id: '1', name: 'Shop' }] } });
    const other = await newPhone(first.api, owner);
    const friend = await newPhone(first.api, owner);
    await pairByQr(first.api, owner, paired.id, phone.phone);
    await pairByQr(first.api, owner, canceled.id, other.phone);
    await first.api('PUT', `/instances/${canceled.id}/cancel`, { token: owner.jwt });
    await waitFor(async () => (await status(first.api, owner, canceled.id)).connected === false, 'canceled down');
    // A message before the restart: the sandbox keeps it (it lives in the document store).
    await first.api('POST', `/sandbox/phones/${friend.phone}/messages`, { token: owner.jwt, body: { to: phone.phone, text: 'before' } });
    const before = await status(first.api, owner, paired.id);
    await first.stop();

    const second = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' }, {}, dataDir);
    try {
      const api = second.api;
      await waitFor(async () => (await status(api, owner, paired.id)).connected === true, 'reconnected');
      const data = await status(api, owner, paired.id);
      expect(data).to.include({ connected: true, phone: phone.phone, whatsapp_jid: phone.jid, push_name: 'Keeper', business_name: 'Keep Co' });
      expect(JSON.stringify(data)).to.equal(JSON.stringify(before));
      expect((await instanceOf(api, owner, paired.id)).connected).to.equal(true);
      expect(await status(api, owner, canceled.id)).to.deep.equal({ connected: false });
      expect((await instanceOf(api, owner, canceled.id)).connected).to.equal(false);
      expect(await status(api, owner, unpaired.id)).to.deep.equal({ connected: false });

      // The live session works, and the sandbox remembers its phones and their inboxes.
      const sent = await api('POST', `/sandbox/phones/${friend.phone}/messages`, { token: owner.jwt, body: { to: phone.phone, text: 'after' } });
      expect(sent.status).to.equal(201);
      const received = await waitForEvent(second.gateway, paired.id, (e) => e.type === 'MessageReceived' && e.data.message.text === 'after', 'message');
      expect(received.data.message.id).to.equal(sent.body.message_id);
      const inbox = await api('GET', `/sandbox/phones/${phone.phone}/inbox`, { token: owner.jwt });
      expect(inbox.body.messages.map((m: any) => m.text)).to.deep.equal(['before', 'after']);
      // No second pairing: one PairingStarted, one history sync.
      const types = (await sessionEvents(second.gateway, paired.id)).map((e) => e.type);
      expect(types.filter((t) => t === 'SessionPairingStarted')).to.have.length(1);
      expect(types.filter((t) => t === 'HistorySyncReceived')).to.have.length(1);
      expect(types.filter((t) => t === 'SessionConnected')).to.have.length(2);
    } finally {
      await second.stop();
    }
  });

  it('keeps an unlinked instance logged out and the phone with its new instance across restarts', async () => {
    const first = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' }, {}, dataDir);
    const owner = await newAccount(first.api);
    const instance = await newInstance(first.api, owner);
    const phone = await newPhone(first.api, owner);
    const newcomer = await newInstance(first.api, owner);
    await pairByQr(first.api, owner, instance.id, phone.phone);
    await first.stop();

    const second = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' }, {}, dataDir);
    try {
      // The second Connected, this gateway's: the first is the pairing's, there before the restart.
      const connected = async () => (await sessionEvents(second.gateway, instance.id)).filter((e) => e.type === 'SessionConnected').length;
      await waitFor(async () => (await connected()) === 2, 'reconnected');
      await second.api('POST', `/sandbox/phones/${phone.phone}/unlink`, { token: owner.jwt });
      await waitForEvent(second.gateway, instance.id, (e) => e.type === 'SessionLoggedOut', 'logged out');
      await pairByQr(second.api, owner, newcomer.id, phone.phone);
    } finally {
      await second.stop();
    }
    const third = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' }, {}, dataDir);
    try {
      expect(await status(third.api, owner, instance.id)).to.deep.equal({ connected: false });
      await waitFor(async () => (await status(third.api, owner, newcomer.id)).connected === true, 'newcomer reconnected');
    } finally {
      await third.stop();
    }
  });

  it('records the loss at boot when the phone removed the device while the gateway was down', async () => {
    const first = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' }, {}, dataDir);
    const owner = await newAccount(first.api);
    const instance = await newInstance(first.api, owner);
    const phone = await newPhone(first.api, owner);
    await pairByQr(first.api, owner, instance.id, phone.phone);
    await first.stop();
    // No gateway runs, so no route can do it: the sandbox forgets the link in its own store (the
    // gateway's document store: embedded in the data dir, or MongoDB under TEST_DOCSTORE).
    const docs = await openDocumentStore({ DATA_DIR: dataDir, ...(await testBackendsFor(dataDir)) });
    await docs.collection('sandbox_links').deleteMany({ _id: instance.id }, { durable: true });
    await docs.close();

    const second = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' }, {}, dataDir);
    try {
      await waitForEvent(second.gateway, instance.id, (e) => e.type === 'SessionLoggedOut', 'logged out');
      const events = await sessionEvents(second.gateway, instance.id);
      expect(events.at(-1)).to.deep.equal({ type: 'SessionLoggedOut', data: { by: 'phone' } });
      expect(events.filter((e) => e.type === 'SessionDisconnected')).to.deep.equal([]);
      await waitFor(async () => (await instanceOf(second.api, owner, instance.id)).connected === false, 'instance disconnected');
      expect(await status(second.api, owner, instance.id)).to.deep.equal({ connected: false });
      await pairByQr(second.api, owner, instance.id, phone.phone);
    } finally {
      await second.stop();
    }
  });

  it('through the real process: SIGTERM, start again, the paired instance is connected again', async () => {
    const env = { DATA_DIR: dataDir, MESSAGING_NETWORK: 'sandbox', ALLOW_PRIVATE_TARGETS: 'true' };
    const first = await spawnGateway(env);
    const api = apiFor(first.url);
    const owner = await newAccount(api);
    const instance = await newInstance(api, owner);
    const phone = await newPhone(api, owner);
    await pairByQr(api, owner, instance.id, phone.phone);
    first.child.kill('SIGTERM');
    expect(await first.exited).to.equal(0);

    const second = await spawnGateway(env);
    try {
      const again = apiFor(second.url);
      await waitFor(async () => (await status(again, owner, instance.id)).connected === true, 'reconnected', 15_000);
      expect((await status(again, owner, instance.id)).whatsapp_jid).to.equal(phone.jid);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
    }
  });
});
