/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { Value } from '@sinclair/typebox/value';
import { WebhookBodies, type WebhookType } from '../../src/webhooks/bodies/schemas.js';
import { expectError, newAccount, newInstance, type Api } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { Receiver, verifies } from './support/receiver.js';

/**
 * End to end over HTTP with the sandbox network: a simulated phone pairs with an instance and
 * sends it messages; the gateway records them, the reactor queues deliveries, the dispatcher
 * sends them to a local receiver.
 */
describe('webhooks over HTTP (sandbox network)', function () {
  this.timeout(30_000);
  let api: Api;
  let rx: Receiver;

  const { t: gw, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox', WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_RETRY_MAX_MS: '200' });
  before(() => (api = gw.api));
  beforeEach(async () => (rx = await new Receiver().start()));
  afterEach(async () => rx.stop());

  /** An instance paired with a fresh phone, its webhook on the receiver; plus a contact that writes to it. */
  async function pairedInstance(events: string) {
    const instance = await newInstance(api, owner, { webhook: rx.url, events_subscribe: events.split(',') });
    const own = await newPhone(api, owner);
    const contact = await newPhone(api, owner, { contacts: [own.phone] });
    await pairByQr(api, owner, instance.id, own.phone);
    const secret = (await api('GET', `/instances/${instance.id}/webhook`, { token: owner.jwt })).body.data.secret as string;
    const send = async (text: string) => {
      const res = await api('POST', `/sandbox/phones/${contact.phone}/messages`, { token: owner.jwt, body: { to: own.phone, text } });
      if (res.status !== 201) throw new Error(`send failed: ${res.status} ${res.text}`);
      return res.body.message_id as string;
    };
    return { id: instance.id, own, contact, secret, send };
  }

  const log = async (id: string, query = '') => {
    const res = await api('GET', `/instances/${id}/webhook/deliveries${query}`, { token: owner.jwt });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  it('delivers only the subscribed types, each verifiable, seq strictly increasing', async () => {
    const a = await pairedInstance('Message,Connected');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await a.send(`hello ${i}`));
    // Presence and a read receipt happen too, but are not subscribed.
    await api('POST', `/sandbox/phones/${a.contact.phone}/presence`, { token: owner.jwt, body: { state: 'available' } });
    await waitFor(() => rx.ofType('Message').length === 5, 'five messages');
    await new Promise((r) => setTimeout(r, 200));

    // In seq order, as receivers read them: an instance's first attempts may overlap and arrive in
    // any order (WEBHOOK_CONCURRENCY_PER_INSTANCE); seq follows the order things happened.
    const bySeq = [...rx.received].sort((x, y) => x.body.seq - y.body.seq);
    const messages = bySeq.filter((r) => r.body.type === 'Message');
    expect(bySeq.map((r) => r.body.type)).to.deep.equal(['Connected', 'Message', 'Message', 'Message', 'Message', 'Message']);
    expect(messages.map((r) => r.body.event.Info.ID)).to.deep.equal(ids);
    expect(messages.map((r) => r.body.event.Message.conversation)).to.deep.equal([0, 1, 2, 3, 4].map((i) => `hello ${i}`));
    const seqs = bySeq.map((r) => r.body.seq as number);
    seqs.forEach((s, i) => i > 0 && expect(s).to.be.greaterThan(seqs[i - 1]!));
    for (const r of rx.received) {
      expect(verifies(a.secret, r), `signature of ${r.body.id}`).to.equal(true);
      expect(r.body.instance_id).to.equal(a.id);
    }
    const first = messages[0]!.body;
    expect(first.event.Info).to.include({ IsFromMe: false, IsGroup: false, Type: 'text', Sender: a.contact.jid });
    const page = await log(a.id);
    expect(page).to.include({ page: 1, page_size: 50, total: 6, total_pages: 1 });
    expect(page.content.map((d: any) => d.status)).to.deep.equal(Array(6).fill('delivered'));
    // CONTRACT.md's fields, in its order.
    expect(Object.keys(page)).to.deep.equal(['page', 'page_size', 'total', 'total_pages', 'content']);
    expect(Object.keys(page.content[0])).to.deep.equal(
      ['id', 'event_id', 'type', 'status', 'attempts', 'last_status_code', 'last_error', 'created_at', 'delivered_at', 'next_attempt_at'],
    );
  });

  it('turns every kind of session happening into its documented body', async () => {
    const a = await pairedInstance('All');
    const third = await newPhone(api, owner);
    await a.send('inbound');
    const sent = await api('POST', `/instances/${a.id}/chat/send/text`, { token: owner.jwt, body: { phone: a.contact.phone, message: 'outbound' } });
    expect(sent.status, sent.text).to.equal(200);
    const outId = sent.body.data.message_id as string;
    const sandbox = (path: string, body: unknown) => api('POST', path, { token: owner.jwt, body });
    expect((await sandbox(`/sandbox/phones/${a.contact.phone}/receipts`, { message_ids: [outId], state: 'Read' })).status).to.equal(200);
    expect((await sandbox(`/sandbox/phones/${a.contact.phone}/presence`, { state: 'available' })).status).to.equal(200);
    expect((await sandbox(`/sandbox/phones/${a.contact.phone}/chat-presence`, { to: a.own.phone, state: 'composing' })).status).to.equal(200);
    const group = await sandbox('/sandbox/groups', { name: 'Team', owner: a.contact.phone, participants: [a.own.phone] });
    expect(group.status, group.text).to.equal(201);
    const by = a.contact.phone;
    expect((await sandbox(`/sandbox/groups/${group.body.jid}/participants`, { add: [third.phone], by })).status).to.equal(200);
    expect((await sandbox(`/sandbox/groups/${group.body.jid}/participants`, { remove: [third.phone], by })).status).to.equal(200);
    expect((await sandbox(`/sandbox/phones/${a.own.phone}/unlink`, {})).status).to.equal(200);
    // The disconnection is the last happening; deliveries before it may still be in flight
    // (concurrent first attempts), so wait for every delivery the log recorded (seqs have gaps:
    // events no webhook carries).
    const receivedIds = () => new Set(rx.received.map((r) => r.body.id as string)).size;
    await waitFor(async () => rx.ofType('Disconnected').length === 1 && receivedIds() >= (await log(a.id)).total, 'everything up to the disconnection');

    const types = new Set(rx.received.map((r) => r.body.type as WebhookType));
    expect([...types].sort()).to.deep.equal(Object.keys(WebhookBodies).sort());
    for (const r of rx.received) {
      const errors = [...Value.Errors(WebhookBodies[r.body.type as WebhookType], r.body)].map((e) => `${e.path} ${e.message}`);
      expect(errors, `${r.body.type} body`).to.deep.equal([]);
      expect(verifies(a.secret, r)).to.equal(true);
    }
    const out = rx.ofType('Message').find((r) => r.body.event.Info.ID === outId)!.body;
    expect(out.event.Info.IsFromMe).to.equal(true);
    expect(out.event.Message.conversation).to.equal('outbound');
    const receipt = rx.ofType('ReadReceipt')[0]!.body;
    expect(receipt.state).to.equal('Read');
    expect(Object.keys(receipt)).to.deep.equal(['id', 'type', 'instance_id', 'seq', 'created_at', 'event', 'state']);
    expect(receipt.event.MessageIDs).to.deep.equal([outId]);
    expect(rx.ofType('GroupParticipantsAdd')[0]!.body.event).to.include({ JID: group.body.jid });
    expect(rx.ofType('GroupParticipantsAdd')[0]!.body.event.Participants).to.deep.equal([third.jid]);
    expect(rx.ofType('HistorySync')[0]!.body.event.Conversations).to.be.an('array');
    expect(rx.ofType('ChatPresence')[0]!.body.event).to.include({ State: 'composing', Sender: a.contact.jid });
    // One seq per event, each once, the disconnection last.
    const seqs = rx.received.map((r) => r.body.seq as number);
    expect(new Set(seqs).size).to.equal(seqs.length);
    expect(Math.max(...seqs)).to.equal(rx.ofType('Disconnected')[0]!.body.seq);
  });

  it('gets the event to a receiver that answers 500 and then recovers', async () => {
    const a = await pairedInstance('Message');
    rx.respond = (_, n) => (n <= 3 ? 500 : 200);
    const id = await a.send('after a hiccup');
    await waitFor(() => rx.received.length === 1, 'the delivery after recovery');
    expect(rx.received[0]!.body.event.Info.ID).to.equal(id);
    expect(rx.requests).to.equal(4);
    await waitFor(async () => (await log(a.id)).content[0]?.status === 'delivered', 'delivered in the log');
    expect((await log(a.id)).content[0]).to.include({ attempts: 4, last_status_code: 200 });
  });

  it('fails a 400 at once, without retrying, and delivers it on a manual retry', async () => {
    const a = await pairedInstance('Message');
    rx.respond = () => 400;
    await a.send('rejected first');
    await waitFor(async () => (await log(a.id, '?status=failed')).total === 1, 'failed in the log');
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.requests).to.equal(1);
    const failed = (await log(a.id, '?status=failed')).content[0];
    expect(failed).to.include({ status: 'failed', attempts: 1, last_status_code: 400, next_attempt_at: null });
    expect((await log(a.id, '?status=pending')).total).to.equal(0);

    rx.respond = () => 200;
    const retry = await api('POST', `/instances/${a.id}/webhook/deliveries/${failed.id}/retry`, { token: owner.jwt });
    expect(retry.status, retry.text).to.equal(200);
    expect(retry.body).to.deep.equal({ code: 200, success: true, data: { status: 'pending' } });
    await waitFor(() => rx.received.length === 1, 'the retried delivery');
    expect(rx.received[0]!.body.id).to.equal(failed.id);
    expect(verifies(a.secret, rx.received[0]!)).to.equal(true);
    await waitFor(async () => (await log(a.id)).content[0]?.status === 'delivered', 'delivered after the retry');
    expect((await log(a.id)).content[0]).to.include({ attempts: 2, last_status_code: 200, last_error: null });
  });

  it('delivers everything to a receiver that was down for a while', async () => {
    const a = await pairedInstance('Message');
    await rx.stop();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await a.send(`while down ${i}`));
    await waitFor(async () => (await log(a.id)).content.every((d: any) => d.attempts >= 1 && d.status === 'pending' && d.last_error), 'failed attempts', 10_000);
    await rx.restart();
    await waitFor(() => new Set(rx.received.map((r) => r.body.id)).size === 10, 'all ten after the receiver came back', 10_000);
    expect(rx.ofType('Message').map((r) => r.body.event.Info.ID).sort()).to.deep.equal([...ids].sort());
  });

  it('validates the delivery log query and answers 404 for an unknown delivery', async () => {
    const instance = await newInstance(api, owner, { name: 'empty log' });
    expectError(await api('GET', `/instances/${instance.id}/webhook/deliveries?status=lost`, { token: owner.jwt }), 400, 'invalid_input');
    const bad = await api('GET', `/instances/${instance.id}/webhook/deliveries?page=0&page_size=9999`, { token: owner.jwt });
    expectError(bad, 400, 'invalid_input');
    expect(bad.body.error.details.map((d: any) => d.field).sort()).to.deep.equal(['page', 'page_size']);
    const status = await api('GET', `/instances/${instance.id}/webhook/deliveries?status=lost`, { token: owner.jwt });
    expect(status.body.error.details[0].field).to.equal('status');
    expect(await log(instance.id, '?page=2&page_size=10')).to.deep.equal({ page: 2, page_size: 10, total: 0, total_pages: 0, content: [] });
    expectError(await api('POST', `/instances/${instance.id}/webhook/deliveries/evt_${'0'.repeat(32)}/retry`, { token: owner.jwt }), 404, 'not_found');
    const stranger = await newAccount(api);
    expectError(await api('GET', `/instances/${instance.id}/webhook/deliveries`, { token: stranger.jwt }), 403, 'forbidden');
    expectError(await api('GET', `/instances/${instance.id}/webhook/deliveries`), 401, 'unauthorized');
    // The instance-token pair works as on the other webhook routes.
    const pair = { 'x-instance-token': instance.token, 'x-client-token': owner.clientToken };
    expect((await api('GET', `/instances/${instance.id}/webhook/deliveries`, { headers: pair })).status).to.equal(200);
  });

  it('does not retry another instance’s delivery', async () => {
    const a = await pairedInstance('Message');
    await a.send('mine');
    await waitFor(() => rx.received.length === 1, 'delivered');
    const other = await newInstance(api, owner, { name: 'other' });
    const id = rx.received[0]!.body.id as string;
    expectError(await api('POST', `/instances/${other.id}/webhook/deliveries/${id}/retry`, { token: owner.jwt }), 404, 'not_found');
  });

  it('documents the bodies and the delivery routes in the OpenAPI document', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    expect(Object.keys(doc.webhooks).sort()).to.deep.equal(
      ['ChatPresence', 'Connected', 'Disconnected', 'GroupParticipantsAdd', 'GroupParticipantsRemove', 'HistorySync', 'Message', 'Presence', 'ReadReceipt'],
    );
    expect(doc.paths['/instances/{id}/webhook/deliveries'].get.parameters.map((p: any) => p.name)).to.include.members(['page', 'page_size', 'status']);
    expect(doc.paths['/instances/{id}/webhook/deliveries/{deliveryId}/retry'].post.responses).to.have.property('404');
  });
});
