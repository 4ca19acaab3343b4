/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { apiFor, expectError, newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { Receiver, verifies } from '../webhooks/support/receiver.js';
import { startNats, type NatsServer } from '../servers/brokers/nats.js';
import { startRabbitMq, type RabbitMq } from '../servers/brokers/rabbitmq.js';
import { AmqpTap, streamMessages, type Consumed } from './support/consumers.js';

const STREAM = 'GATEWAY';
const METRICS = 'metrics-token-for-the-export-test';

/**
 * Event export over HTTP with the sandbox, against Debian's rabbitmq-server and nats-server run
 * by the test on free ports: what the brokers store is what a consumer of theirs gets.
 */
describe('event export to RabbitMQ and NATS JetStream (real servers)', function () {
  this.timeout(300_000);
  let rabbit: RabbitMq;
  let nats: NatsServer;
  let t: TestGateway;
  let owner: TestAccount;
  let tap: AmqpTap;
  let rx: Receiver;

  before(async () => {
    [rabbit, nats] = await Promise.all([startRabbitMq(), startNats()]);
    tap = await new AmqpTap(rabbit.url, 'gateway').start();
    rx = await new Receiver().start();
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox', EXPORT_AMQP_URL: rabbit.url, EXPORT_NATS_URL: nats.url, EXPORT_RETRY_MAX_MS: '300', METRICS_TOKEN: METRICS });
    owner = await newAccount(t.api);
  });
  after(async () => {
    await t?.stop();
    await tap?.stop();
    await rx?.stop();
    await Promise.all([rabbit?.dispose(), nats?.dispose()]);
  });

  /** A paired instance with a contact that writes to it. */
  async function pairedInstance(body: Record<string, unknown> = {}) {
    const instance = await newInstance(t.api, owner, body);
    const own = await newPhone(t.api, owner);
    const contact = await newPhone(t.api, owner);
    await pairByQr(t.api, owner, instance.id, own.phone);
    const send = async (text: string) => {
      const res = await t.api('POST', `/sandbox/phones/${contact.phone}/messages`, { token: owner.jwt, body: { to: own.phone, text } });
      if (res.status !== 201) throw new Error(`send: ${res.status} ${res.text}`);
      return res.body.message_id as string;
    };
    return { id: instance.id, send };
  }

  const exportOf = async (id: string) => {
    const res = await t.api('GET', `/instances/${id}/export`, { token: owner.jwt });
    expect(res.status).to.equal(200);
    return res.body.data;
  };
  const natsOf = (id: string) => streamMessages(nats.url, STREAM, 'gateway', id);
  const ids = (messages: Consumed[]) => messages.map((m) => m.body.event.Info.ID as string);

  it('publishes the webhook body byte for byte, signed as the webhook, to both brokers', async () => {
    const { id, send } = await pairedInstance({ webhook: rx.url, events_subscribe: ['Message'] });
    const on = await t.api('POST', `/instances/${id}/export`, { token: owner.jwt, body: { events: 'Message' } });
    expect(on.status).to.equal(200);
    expect(on.body.data).to.include({ events: 'Message', lag: 0, last_published_seq: 0, last_error: null });
    const sent = [await send('one'), await send('two'), await send('three')];

    await waitFor(() => rx.ofType('Message').filter((r) => r.body.instance_id === id).length === 3, 'three webhooks', 60_000);
    await waitFor(() => tap.of(id).length === 3, 'three AMQP messages', 60_000);
    await waitFor(async () => (await natsOf(id)).length === 3, 'three NATS messages', 60_000);
    const hooks = rx.received.filter((r) => r.body.instance_id === id);
    const amqp = tap.of(id);
    const js = await natsOf(id);
    const secret = (await t.api('GET', `/instances/${id}/webhook`, { token: owner.jwt })).body.data.secret as string;

    expect(ids(amqp)).to.deep.equal(sent);
    expect(ids(js)).to.deep.equal(sent);
    for (let i = 0; i < 3; i++) {
      const hook = hooks[i]!;
      for (const m of [amqp[i]!, js[i]!]) {
        // Webhook and export configured alike from the start: the same bytes, seq included.
        expect(m.raw).to.equal(hook.raw);
        expect(m.headers['webhook-id']).to.equal(hook.body.id);
        expect(m.messageId).to.equal(hook.body.id);
        expect(verifies(secret, m), 'signature checks with the webhook secret').to.equal(true);
        expect(verifies(`whsec_${Buffer.alloc(24, 7).toString('base64')}`, m), 'and fails with another').to.equal(false);
      }
      expect(amqp[i]!.topic).to.equal(`${id}.Message`);
      expect(amqp[i]!.persistent).to.equal(true);
      expect(js[i]!.topic).to.equal(`gateway.${id}.Message`);
    }
    // The instance's seq (its session stream's, as the webhook's): pairing came first, so not from 1.
    const seqs = amqp.map((m) => m.body.seq as number);
    expect(seqs).to.deep.equal(js.map((m) => m.body.seq as number));
    expect(seqs.every((x, i) => i === 0 || x > seqs[i - 1]!), `increasing: ${seqs.join(',')}`).to.equal(true);
    const last = seqs[2]!;

    await waitFor(async () => (await exportOf(id)).last_published_seq === last, `the export shows seq ${last} published`);
    const shown = await exportOf(id);
    expect(shown).to.include({ events: 'Message', lag: 0, last_published_seq: last, last_error: null });
    expect(shown.sinks.map((s: any) => [s.sink, s.connected, s.last_published_seq])).to.deep.equal([
      ['amqp', true, last],
      ['nats', true, last],
    ]);
  });

  it('says who changed the export in the history, and stops on DELETE', async () => {
    const { id, send } = await pairedInstance();
    expect((await t.api('POST', `/instances/${id}/export`, { token: owner.jwt, body: { events: ['Message', 'ReadReceipt'] } })).status).to.equal(200);
    await send('exported');
    await waitFor(() => tap.of(id).length === 1, 'one message exported', 60_000);
    const off = await t.api('DELETE', `/instances/${id}/export`, { token: owner.jwt });
    expect(off.status).to.equal(200);
    expect(off.body.data.events).to.equal('');
    await send('not exported');
    const history = await t.api('GET', `/instances/${id}/history?types=ExportConfigured,ExportCleared`, { token: owner.jwt });
    expect(history.status).to.equal(200);
    expect(history.body.events.map((e: any) => [e.type, e.actor.kind, e.actor.id])).to.deep.equal([
      ['ExportConfigured', 'account', owner.accountId],
      ['ExportCleared', 'account', owner.accountId],
    ]);
    expect(history.body.events[0].data).to.deep.equal({ events: ['Message', 'ReadReceipt'] });
    // A later exported event proves the one in between was passed over, not merely late.
    expect((await t.api('POST', `/instances/${id}/export`, { token: owner.jwt, body: { events: 'All' } })).status).to.equal(200);
    const last = await send('exported again');
    await waitFor(() => ids(tap.of(id).filter((m) => m.body.type === 'Message')).includes(last), 'the later message exported', 60_000);
    expect(tap.of(id).filter((m) => m.body.type === 'Message').map((m) => m.body.event.Message.conversation)).to.deep.equal(['exported', 'exported again']);
  });

  it('refuses bad input with a clear 4xx and changes nothing', async () => {
    const { id } = await pairedInstance();
    const post = (body: unknown) => t.api('POST', `/instances/${id}/export`, { token: owner.jwt, body });
    const unknown = await post({ events: 'Message,Nope' });
    expectError(unknown, 400, 'invalid_input');
    expect(unknown.body.error.message).to.match(/Nope/);
    expectError(await post({ events: '' }), 400, 'invalid_input');
    expectError(await post({ events: [] }), 400, 'invalid_input');
    expectError(await post({}), 400, 'invalid_input');
    expectError(await post({ events: 'Message', url: 'amqp://elsewhere' }), 400, 'invalid_input');
    expectError(await t.api('POST', `/instances/${id}/export`, { token: owner.jwt, raw: '{"events":' }), 400, 'invalid_input');
    expect((await exportOf(id)).events).to.equal('');
    const other = await newAccount(t.api);
    expect((await t.api('GET', `/instances/${id}/export`, { token: other.jwt })).status).to.be.oneOf([403, 404]);
    expect((await t.api('GET', `/instances/${id}/export`)).status).to.equal(401);
  });

  it('answers 402 to export changes of a canceled instance and keeps its settings', async () => {
    const { id, send } = await pairedInstance();
    expect((await t.api('POST', `/instances/${id}/export`, { token: owner.jwt, body: { events: 'Message' } })).status).to.equal(200);
    await send('before');
    await waitFor(() => tap.of(id).length === 1, 'the message before the cancel', 60_000);
    expect((await t.api('DELETE', `/instances/${id}/cancel`, { token: owner.jwt })).status).to.equal(200);
    expectError(await t.api('POST', `/instances/${id}/export`, { token: owner.jwt, body: { events: 'All' } }), 402, 'payment_required');
    expectError(await t.api('DELETE', `/instances/${id}/export`, { token: owner.jwt }), 402, 'payment_required');
    expect((await exportOf(id)).events).to.equal('Message');
  });

  for (const broker of ['amqp', 'nats'] as const) {
    it(`${broker}: the broker stopped while 200 messages arrive, then started: all 200 published once each, in order`, async () => {
      const { id, send } = await pairedInstance();
      expect((await t.api('POST', `/instances/${id}/export`, { token: owner.jwt, body: { events: 'Message' } })).status).to.equal(200);
      const published = async () => (broker === 'amqp' ? tap.of(id) : await natsOf(id));
      const first = await send('before the stop');
      await waitFor(async () => (await published()).length === 1, 'the first message published', 60_000);
      if (broker === 'amqp') await rabbit.stop();
      else await nats.stop();
      const sent = [first];
      for (let i = 0; i < 200; i++) sent.push(await send(`while down ${i}`));
      // Every message acknowledged is waiting, and the export says why.
      await waitFor(async () => {
        const s = (await exportOf(id)).sinks.find((x: any) => x.sink === broker);
        return s.lag === 200 && s.last_error !== null && s.connected === false;
      }, 'the export shows 200 waiting and the broker down', 60_000);
      // The other broker keeps publishing meanwhile: one down broker holds nobody else.
      const other = broker === 'amqp' ? await natsOf(id) : tap.of(id);
      await waitFor(async () => (broker === 'amqp' ? (await natsOf(id)).length : tap.of(id).length) === 201, 'the other broker has all 201', 60_000);
      expect(other.length).to.be.at.most(201);

      if (broker === 'amqp') {
        await rabbit.start();
        await tap.reconnect();
      } else await nats.start();
      await waitFor(async () => new Set(ids(await published())).size === 201, `all 201 published to ${broker}`, 120_000);
      const got = await published();
      // Once each: a copy would carry the same event id; none came.
      expect(ids(got)).to.deep.equal(sent);
      const seqs = got.map((m) => m.body.seq as number);
      expect(seqs.every((x, i) => i === 0 || x > seqs[i - 1]!), 'in seq order').to.equal(true);
      await waitFor(async () => (await exportOf(id)).lag === 0 && (await exportOf(id)).last_error === null, 'the export caught up, its error cleared', 60_000);
    });
  }

  it('counts published and failed messages and the lag on /metrics', async () => {
    const text = (await t.api('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS}` } })).text;
    const value = (name: string, sink: string) => Number(new RegExp(`^${name}\\{sink="${sink}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    // The earlier tests published hundreds to each broker. While a broker is down its lanes wait
    // for it to come back rather than fail publish after publish, so failures may be none.
    for (const sink of ['amqp', 'nats']) {
      expect(value('gateway_export_published_total', sink)).to.be.greaterThan(200);
      expect(value('gateway_export_failed_total', sink)).to.be.at.least(0);
      expect(value('gateway_export_lag_events', sink)).to.equal(0);
    }
    expect(text).to.match(/gateway_export_latency_seconds_bucket\{le="0.05",sink="amqp"\}/);
  });

  it('an exchange of another type already there: a clear error, retried, the webhook path unaffected', async () => {
    // An operator's fanout exchange under the name the gateway is told to use.
    const { connect } = await import('amqplib');
    const admin = await connect(rabbit.url);
    const channel = await admin.createChannel();
    await channel.assertExchange('taken-by-fanout', 'fanout', { durable: true });
    await admin.close();
    const other = await startTestGateway({ MESSAGING_NETWORK: 'sandbox', EXPORT_AMQP_URL: rabbit.url, EXPORT_AMQP_EXCHANGE: 'taken-by-fanout', EXPORT_RETRY_MAX_MS: '300' });
    const hooks = await new Receiver().start();
    try {
      const account = await newAccount(other.api);
      const instance = await newInstance(other.api, account, { webhook: hooks.url, events_subscribe: ['Message'] });
      expect((await other.api('POST', `/instances/${instance.id}/export`, { token: account.jwt, body: { events: 'Message' } })).status).to.equal(200);
      const own = await newPhone(other.api, account);
      const contact = await newPhone(other.api, account);
      await pairByQr(other.api, account, instance.id, own.phone);
      await other.api('POST', `/sandbox/phones/${contact.phone}/messages`, { token: account.jwt, body: { to: own.phone, text: 'hello' } });
      await waitFor(() => hooks.ofType('Message').length === 1, 'the webhook delivered', 60_000);
      await waitFor(async () => {
        const s = (await other.api('GET', `/instances/${instance.id}/export`, { token: account.jwt })).body.data;
        return s.lag === 1 && /taken-by-fanout/.test(String(s.last_error)) && /topic/.test(String(s.last_error));
      }, 'the export names the exchange and the type it needs', 60_000);
    } finally {
      await hooks.stop();
      await other.stop();
    }
  });

  it('keeps the webhook path working when a broker refuses the login', async () => {
    const refused = await startTestGateway({
      MESSAGING_NETWORK: 'sandbox',
      EXPORT_AMQP_URL: rabbit.url.replace('guest:guest', 'guest:wrong'),
      EXPORT_RETRY_MAX_MS: '300',
    });
    try {
      const api = refused.api;
      const account = await newAccount(api);
      const hooks = await new Receiver().start();
      try {
        const instance = await newInstance(api, account, { webhook: hooks.url, events_subscribe: ['Message'] });
        expect((await api('POST', `/instances/${instance.id}/export`, { token: account.jwt, body: { events: 'Message' } })).status).to.equal(200);
        const own = await newPhone(api, account);
        const contact = await newPhone(api, account);
        await pairByQr(api, account, instance.id, own.phone);
        await api('POST', `/sandbox/phones/${contact.phone}/messages`, { token: account.jwt, body: { to: own.phone, text: 'hello' } });
        await waitFor(() => hooks.ofType('Message').length === 1, 'the webhook delivered', 60_000);
        await waitFor(async () => {
          const s = (await api('GET', `/instances/${instance.id}/export`, { token: account.jwt })).body.data;
          return s.lag === 1 && /ACCESS.REFUSED|refused/i.test(String(s.last_error));
        }, 'the export says the login was refused', 60_000);
        const shown = (await api('GET', `/instances/${instance.id}/export`, { token: account.jwt })).body.data;
        expect(shown.last_error).to.not.include('wrong');
        expect((await apiFor(refused.gateway.url)('GET', '/health')).status).to.equal(200);
      } finally {
        await hooks.stop();
      }
    } finally {
      await refused.stop();
    }
  });
});
