/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { instanceOf, newPhone, pairByCode, pairByQr, sessionEvents, status, waitFor, waitForEvent } from '../support/sandbox.js';

/** Issue 3 over HTTP: pairing, status as the spec orders it, logout, unlink, restart, cancel. */
describe('sessions over HTTP with the sandbox', function () {
  this.timeout(20_000);

  const { t: gw, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });

  it('pairs by QR: the QR answer carries a PNG data URL, and the instance follows the session', async () => {
    const instance = await newInstance(gw.api, owner);
    const phone = await newPhone(gw.api, owner, { push_name: 'Ana' });
    const qr = await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt });
    expect(qr.status).to.equal(200);
    expect(Object.keys(qr.body.data)).to.deep.equal(['qr', 'qr_image']);
    expect(qr.body.data.qr).to.be.a('string').and.not.equal('');
    expect(qr.body.data.qr_image).to.match(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    // Asking again while pairing shows the same pairing, not a new socket.
    const again = await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt });
    expect(again.body.data.qr).to.equal(qr.body.data.qr);

    const scan = await gw.api('POST', `/sandbox/phones/${phone.phone}/scan`, { token: owner.jwt, body: { qr: qr.body.data.qr } });
    expect(scan.status).to.equal(200);
    await waitFor(async () => (await status(gw.api, owner, instance.id)).connected === true, 'connected');

    await waitFor(async () => (await instanceOf(gw.api, owner, instance.id)).connected === true, 'instance connected');
    const shown = await instanceOf(gw.api, owner, instance.id);
    expect(shown.whatsapp_jid).to.equal(phone.jid);
    expect(shown.whatsapp_push_name).to.equal('Ana');
    expect(Date.parse(shown.connected_at)).to.be.a('number').and.not.NaN;

    const types = (await sessionEvents(gw.gateway, instance.id)).map((e) => e.type);
    expect(types.slice(0, 4)).to.deep.equal(['SessionPairingStarted', 'SessionConnected', 'ProfileUpdated', 'HistorySyncReceived']);
  });

  it('pairs by code, accepting the code with or without its dash', async () => {
    const instance = await newInstance(gw.api, owner);
    const phone = await newPhone(gw.api, owner);
    const code = await gw.api('GET', `/instances/${instance.id}/session/paircode/${phone.phone}`, { token: owner.jwt });
    expect(code.status).to.equal(200);
    expect(Object.keys(code.body.data)).to.deep.equal(['code']);
    expect(code.body.data.code).to.match(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    const typed = (code.body.data.code as string).replace('-', '').toLowerCase();
    expect((await gw.api('POST', `/sandbox/phones/${phone.phone}/link`, { token: owner.jwt, body: { code: typed } })).status).to.equal(200);
    await waitFor(async () => (await status(gw.api, owner, instance.id)).connected === true, 'connected');
    const started = (await sessionEvents(gw.gateway, instance.id)).find((e) => e.type === 'SessionPairingStarted');
    expect(started?.data).to.deep.equal({ method: 'code' });
  });

  it('answers the status of a personal phone exactly as the spec orders it, empty fields left out', async () => {
    const instance = await newInstance(gw.api, owner);
    const phone = await newPhone(gw.api, owner, { push_name: 'Bea', about: '' });
    await pairByQr(gw.api, owner, instance.id, phone.phone);
    const data = await status(gw.api, owner, instance.id);
    expect(Object.keys(data)).to.deep.equal(['connected', 'phone', 'whatsapp_jid', 'push_name', 'profile_url']);
    expect(data).to.deep.equal({
      connected: true,
      phone: phone.phone,
      whatsapp_jid: phone.jid,
      push_name: 'Bea',
      profile_url: `https://wa.me/${phone.phone}`,
    });
  });

  it('answers the status of a business phone with every field in the spec order, business_profile subfields in order', async () => {
    const instance = await newInstance(gw.api, owner);
    // Given in a scrambled order: the answer's order comes from the spec, not from the input.
    const business = {
      email: 'shop@example.com',
      website: 'https://shop.example.com',
      address: 'Rua A, 1',
      profile_options: { commerce_experience: 'catalog' },
      categories: [{ id: '133436743388217', name: 'Shopping & retail' }],
      business_hours_timezone: 'America/Sao_Paulo',
      verified_name: 'Shop Ltd',
      name: 'Shop',
    };
    const phone = await newPhone(gw.api, owner, { push_name: 'Shop front', about: 'Open 9-18', business });
    await pairByCode(gw.api, owner, instance.id, phone.phone);
    const data = await status(gw.api, owner, instance.id);
    expect(Object.keys(data)).to.deep.equal([
      'connected',
      'phone',
      'whatsapp_jid',
      'push_name',
      'business_name',
      'business_profile',
      'profile_url',
      'verified_name',
      'about',
      'website',
    ]);
    expect(Object.keys(data.business_profile)).to.deep.equal(['business_hours_timezone', 'categories', 'profile_options', 'address', 'email']);
    expect(data).to.deep.equal({
      connected: true,
      phone: phone.phone,
      whatsapp_jid: phone.jid,
      push_name: 'Shop front',
      business_name: 'Shop',
      business_profile: {
        business_hours_timezone: 'America/Sao_Paulo',
        categories: [{ id: '133436743388217', name: 'Shopping & retail' }],
        profile_options: { commerce_experience: 'catalog' },
        address: 'Rua A, 1',
        email: 'shop@example.com',
      },
      profile_url: `https://wa.me/${phone.phone}`,
      verified_name: 'Shop Ltd',
      about: 'Open 9-18',
      website: 'https://shop.example.com',
    });
  });

  it('answers {connected: false} alone before pairing, with the instance token pair too', async () => {
    const instance = await newInstance(gw.api, owner);
    const res = await gw.api('GET', `/instances/${instance.id}/session/status`, {
      headers: { 'x-instance-token': instance.token, 'x-client-token': owner.clientToken },
    });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ code: 200, success: true, data: { connected: false } });
  });

  it('logs out: {connected: false}, status and instance disconnected, the phone no longer reaches it', async () => {
    const instance = await newInstance(gw.api, owner);
    const phone = await newPhone(gw.api, owner);
    const friend = await newPhone(gw.api, owner);
    await pairByQr(gw.api, owner, instance.id, phone.phone);
    const out = await gw.api('POST', `/instances/${instance.id}/session/logout`, { token: owner.jwt });
    expect(out.status).to.equal(200);
    expect(out.body).to.deep.equal({ code: 200, success: true, data: { connected: false } });
    // The logout answer waits for the read models: no polling needed.
    expect(await status(gw.api, owner, instance.id)).to.deep.equal({ connected: false });
    const shown = await instanceOf(gw.api, owner, instance.id);
    expect([shown.connected, shown.connected_at, shown.whatsapp_jid, shown.whatsapp_push_name]).to.deep.equal([false, null, null, null]);
    // One event says it all (and makes one Disconnected webhook): no SessionDisconnected before it.
    const logged = await sessionEvents(gw.gateway, instance.id);
    expect(logged.at(-1)).to.deep.equal({ type: 'SessionLoggedOut', data: { by: 'user' } });
    expect(logged.filter((e) => e.type === 'SessionDisconnected')).to.deep.equal([]);
    await gw.api('POST', `/sandbox/phones/${friend.phone}/messages`, { token: owner.jwt, body: { to: phone.phone, text: 'anyone?' } });
    const after = await sessionEvents(gw.gateway, instance.id);
    expect(after.some((e) => e.type === 'MessageReceived')).to.equal(false);
    // Unpaired, it can pair again (with the same phone).
    await pairByQr(gw.api, owner, instance.id, phone.phone);
  });

  it('is unlinked from the phone: status {connected: false}, instance disconnected, LoggedOut logged once', async () => {
    const instance = await newInstance(gw.api, owner);
    const phone = await newPhone(gw.api, owner);
    await pairByQr(gw.api, owner, instance.id, phone.phone);
    expect((await gw.api('POST', `/sandbox/phones/${phone.phone}/unlink`, { token: owner.jwt })).status).to.equal(200);
    await waitForEvent(gw.gateway, instance.id, (e) => e.type === 'SessionLoggedOut', 'logged out');
    const events = await sessionEvents(gw.gateway, instance.id);
    expect(events.at(-1)).to.deep.equal({ type: 'SessionLoggedOut', data: { by: 'phone' } });
    expect(events.filter((e) => e.type === 'SessionLoggedOut' || e.type === 'SessionDisconnected')).to.have.length(1);
    await waitFor(async () => (await instanceOf(gw.api, owner, instance.id)).connected === false, 'instance disconnected');
    expect(await status(gw.api, owner, instance.id)).to.deep.equal({ connected: false });
    // At once, before any read model could have caught up: the instance may pair again.
    const qr = await gw.api('GET', `/instances/${instance.id}/session/qr`, { token: owner.jwt });
    expect(qr.status, qr.text).to.equal(200);
  });

  it('restarts: session/restart answers connected and the session is live again', async () => {
    const instance = await newInstance(gw.api, owner);
    const phone = await newPhone(gw.api, owner);
    const friend = await newPhone(gw.api, owner);
    await pairByQr(gw.api, owner, instance.id, phone.phone);
    const res = await gw.api('POST', `/instances/${instance.id}/session/restart`, { token: owner.jwt });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ code: 200, success: true, data: { connected: true } });
    expect((await status(gw.api, owner, instance.id)).connected).to.equal(true);
    const sent = await gw.api('POST', `/sandbox/phones/${friend.phone}/messages`, { token: owner.jwt, body: { to: phone.phone, text: 'after restart' } });
    const received = await waitForEvent(gw.gateway, instance.id, (e) => e.type === 'MessageReceived', 'message');
    expect(received.data.message.id).to.equal(sent.body.message_id);
    // A reconnect with credentials syncs no history again.
    expect((await sessionEvents(gw.gateway, instance.id)).filter((e) => e.type === 'HistorySyncReceived')).to.have.length(1);
  });

  it('restarts an instance that was never paired: nothing to re-open, connected false', async () => {
    const instance = await newInstance(gw.api, owner);
    const res = await gw.api('POST', `/instances/${instance.id}/session/restart`, { token: owner.jwt });
    expect(res.body).to.deep.equal({ code: 200, success: true, data: { connected: false } });
    expect(await sessionEvents(gw.gateway, instance.id)).to.deep.equal([]);
  });

  it('stops the session of a canceled instance and refuses to pair or restart it', async () => {
    const instance = await newInstance(gw.api, owner);
    const phone = await newPhone(gw.api, owner);
    const friend = await newPhone(gw.api, owner);
    await pairByQr(gw.api, owner, instance.id, phone.phone);
    const cancel = await gw.api('PUT', `/instances/${instance.id}/cancel`, { token: owner.jwt });
    expect(cancel.status, cancel.text).to.equal(200);
    await waitFor(async () => (await status(gw.api, owner, instance.id)).connected === false, 'disconnected');
    await waitFor(async () => (await instanceOf(gw.api, owner, instance.id)).connected === false, 'instance disconnected');
    const last = (await sessionEvents(gw.gateway, instance.id)).at(-1);
    expect(last).to.deep.equal({ type: 'SessionDisconnected', data: { reason: 'connection_closed' } });

    await gw.api('POST', `/sandbox/phones/${friend.phone}/messages`, { token: owner.jwt, body: { to: phone.phone, text: 'hello?' } });
    expect((await sessionEvents(gw.gateway, instance.id)).some((e) => e.type === 'MessageReceived')).to.equal(false);
    for (const [method, path] of [
      ['POST', 'session/restart'],
      ['GET', 'session/qr'],
      ['GET', `session/paircode/${phone.phone}`],
    ] as const) {
      const res = await gw.api(method, `/instances/${instance.id}/${path}`, { token: owner.jwt });
      expect(res.status, `${path}: ${res.text}`).to.equal(402);
      expect(res.body.error.type).to.equal('payment_required');
    }
  });
});
