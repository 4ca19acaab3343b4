/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { pairedInstance, phoneSends, SteppingClock } from '../support/chats.js';
import { expectError, newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { Receiver } from '../webhooks/support/receiver.js';

const HOUR = 3_600_000;

describe('statistics over HTTP', () => {
  const clock = new SteppingClock();
  let t: TestGateway;
  let owner: TestAccount;
  let ok: Receiver;
  let refusing: Receiver;

  before(async () => {
    // The clock moves hours ahead: the access token must outlive it.
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox', JWT_TTL_SECONDS: '86400' }, { clock });
    owner = await newAccount(t.api);
    ok = await new Receiver().start();
    refusing = await new Receiver().start();
    refusing.respond = () => 400;
  });
  after(async () => {
    await t.stop();
    await ok.stop();
    await refusing.stop();
  });

  const stats = (path: string, query: string) => t.api('GET', `${path}?${query}`, { token: owner.jwt });
  const window = () => {
    const start = new Date(Math.floor(clock.now().getTime() / HOUR) * HOUR - 2 * HOUR);
    return `from=${start.toISOString()}&to=${new Date(start.getTime() + 6 * HOUR).toISOString()}`;
  };
  const total = (buckets: any[], field: string) => buckets.reduce((sum, b) => sum + (b[field] ?? 0), 0);

  it('counts messages and media each way, webhook outcomes with p95, and connected time, by hour and by day', async () => {
    const span = window();
    const phone = await newPhone(t.api, owner);
    const created = await newInstance(t.api, owner);
    await pairByQr(t.api, owner, created.id, phone.phone);
    const me = { id: created.id, phone: phone.phone, token: created.token };
    const peer = await newPhone(t.api, owner);
    const hook = await t.api('POST', `/instances/${me.id}/webhook`, { token: owner.jwt, body: { webhookURL: ok.url, events: 'Message' } });
    expect(hook.status, hook.text).to.equal(200);

    await phoneSends(t, owner, peer.phone, me.phone, { text: 'one' });
    await phoneSends(t, owner, peer.phone, me.phone, { media: { kind: 'image', mimetype: 'image/png', data_base64: Buffer.from('png').toString('base64') } });
    const sent = await t.api('POST', `/instances/${me.id}/chat/send/text`, { token: owner.jwt, body: { phone: peer.phone, message: 'back' } });
    expect(sent.status, sent.text).to.equal(200);
    await waitFor(() => ok.received.length >= 3, 'three deliveries');
    // A receiver that refuses makes the next deliveries fail for good (a 4xx is final).
    await t.api('POST', `/instances/${me.id}/webhook`, { token: owner.jwt, body: { webhookURL: refusing.url, events: 'Message' } });
    await phoneSends(t, owner, peer.phone, me.phone, { text: 'refused' });
    await waitFor(() => refusing.requests >= 1, 'a refused delivery');

    // Ninety minutes connected, then unpaired.
    clock.tick(5400);
    expect((await t.api('POST', `/instances/${me.id}/session/logout`, { token: owner.jwt })).status).to.equal(200);

    let hourly: any[] = [];
    await waitFor(
      async () => {
        hourly = (await stats(`/instances/${me.id}/stats`, `${span}&bucket=hour`)).body.buckets;
        return total(hourly, 'deliveries_failed') === 1 && total(hourly, 'connected_seconds') >= 5400;
      },
      'statistics of the instance',
    );
    expect(hourly).to.have.length(6);
    expect(hourly.map((b) => Date.parse(b.start) % HOUR)).to.deep.equal([0, 0, 0, 0, 0, 0]);
    expect(total(hourly, 'messages_in')).to.equal(3);
    expect(total(hourly, 'messages_out')).to.equal(1);
    expect(total(hourly, 'media_in')).to.equal(1);
    expect(total(hourly, 'media_out')).to.equal(0);
    expect(total(hourly, 'deliveries_ok')).to.equal(3);
    // Connected time lands in the hours it spans (the clock does not move while pairing).
    expect(total(hourly, 'connected_seconds')).to.equal(5400);
    expect(hourly.filter((b) => b.connected_seconds > 0).length).to.be.within(2, 3);
    const delivered = hourly.find((b) => b.deliveries_ok > 0);
    expect(delivered.delivery_p95_ms).to.be.a('number');
    expect(hourly.find((b) => b.deliveries_ok === 0 && b.deliveries_failed === 0).delivery_p95_ms).to.equal(null);

    const daily = (await stats(`/instances/${me.id}/stats`, 'bucket=day')).body.buckets;
    // The token pair reads the same (statistics are no secret of the account's).
    const pair = { 'x-instance-token': me.token, 'x-client-token': owner.clientToken };
    expect((await t.api('GET', `/instances/${me.id}/stats?bucket=day`, { headers: pair })).body.buckets).to.deep.equal(daily);
    expect(daily).to.have.length(8);
    expect(total(daily, 'messages_in')).to.equal(3);
    expect(total(daily, 'connected_seconds')).to.equal(5400);
    expect(Object.keys(daily[0])).to.deep.equal(['start', 'messages_in', 'messages_out', 'media_in', 'media_out', 'deliveries_ok', 'deliveries_failed', 'delivery_p95_ms', 'connected_seconds']);

    // Outcomes are events of the instance: history shows them.
    const history = await t.api('GET', `/instances/${me.id}/history?types=WebhookDelivered,WebhookDeliveryFailed`, { token: owner.jwt });
    expect(history.body.events.map((e: any) => e.type).sort()).to.deep.equal(['WebhookDelivered', 'WebhookDelivered', 'WebhookDelivered', 'WebhookDeliveryFailed']);
    expect(history.body.events[0].actor).to.deep.equal({ kind: 'system' });

    // The account sums its instances: a second one with one message in.
    const other = await pairedInstance(t, owner);
    await phoneSends(t, owner, peer.phone, other.phone, { text: 'to the other' });
    await waitFor(async () => total((await stats('/account/stats', `${span}&bucket=hour`)).body.buckets, 'messages_in') === 4, 'account statistics');
    const account = (await stats('/account/stats', `${span}&bucket=hour`)).body.buckets;
    expect(total(account, 'deliveries_ok')).to.equal(3);
    // The second instance is still connected: its open connection counts up to now.
    clock.tick(60);
    const later = (await stats('/account/stats', `${span}&bucket=hour`)).body.buckets;
    expect(total(later, 'connected_seconds')).to.equal(5460);
  });

  it('refuses bad ranges and buckets with 400, and other accounts', async () => {
    const me = await pairedInstance(t, owner);
    for (const query of ['bucket=week', 'from=yesterday', 'from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z', 'from=2000-01-01T00:00:00Z&bucket=hour', 'extra=1']) {
      expectError(await stats(`/instances/${me.id}/stats`, query), 400, 'invalid_input');
      expectError(await stats('/account/stats', query), 400, 'invalid_input');
    }
    const stranger = await newAccount(t.api);
    expect((await t.api('GET', `/instances/${me.id}/stats`, { token: stranger.jwt })).status).to.be.oneOf([403, 404]);
    expect((await t.api('GET', '/account/stats')).status).to.equal(401);
  });
});
