/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { startNats, type NatsServer } from '../servers/brokers/nats.js';
import { startRabbitMq, type RabbitMq } from '../servers/brokers/rabbitmq.js';
import { AmqpTap, streamMessages, type Consumed } from './support/consumers.js';

const METRICS = 'metrics-token-for-the-export-refusals-test';
/** Both brokers refuse messages over 32 KiB; a message of 40,000 characters makes a larger body. */
const LIMIT = 32_768;

/**
 * A broker's refusal that cannot change (a message over RabbitMQ's max_message_size, over NATS's
 * max_payload) must not hold an export lane forever (issue 27, finding 11): that event is passed
 * over, counted and shown, and the lane goes on. Against Debian's rabbitmq-server and nats-server.
 */
describe('event export: an event the broker refuses for good is passed over (real servers)', function () {
  this.timeout(300_000);
  let rabbit: RabbitMq;
  let nats: NatsServer;
  let t: TestGateway;
  let owner: TestAccount;
  let tap: AmqpTap;

  before(async () => {
    [rabbit, nats] = await Promise.all([startRabbitMq({ maxMessageBytes: LIMIT }), startNats({ maxPayload: LIMIT })]);
    tap = await new AmqpTap(rabbit.url, 'gateway').start();
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox', EXPORT_AMQP_URL: rabbit.url, EXPORT_NATS_URL: nats.url, EXPORT_RETRY_MAX_MS: '300', METRICS_TOKEN: METRICS });
    owner = await newAccount(t.api);
  });
  after(async () => {
    await t?.stop();
    await tap?.stop();
    await Promise.all([rabbit?.dispose(), nats?.dispose()]);
  });

  const texts = (messages: Consumed[]) => messages.map((m) => m.body.event.Message.conversation as string);

  it('skips the too large event on both brokers, counts it, says which, and publishes what follows', async () => {
    const instance = await newInstance(t.api, owner);
    const own = await newPhone(t.api, owner);
    const contact = await newPhone(t.api, owner);
    await pairByQr(t.api, owner, instance.id, own.phone);
    const id = instance.id;
    expect((await t.api('POST', `/instances/${id}/export`, { token: owner.jwt, body: { events: 'Message' } })).status).to.equal(200);
    const send = async (text: string) => {
      const res = await t.api('POST', `/sandbox/phones/${contact.phone}/messages`, { token: owner.jwt, body: { to: own.phone, text } });
      expect(res.status, res.text).to.equal(201);
      return res.body.message_id as string;
    };
    await send('before');
    await send('x'.repeat(40_000));
    await send('after');

    await waitFor(() => texts(tap.of(id)).includes('after'), 'the message after it on RabbitMQ', 120_000);
    await waitFor(async () => texts(await streamMessages(nats.url, 'GATEWAY', 'gateway', id)).includes('after'), 'the message after it on NATS', 120_000);
    expect(texts(tap.of(id))).to.deep.equal(['before', 'after']);
    expect(texts(await streamMessages(nats.url, 'GATEWAY', 'gateway', id))).to.deep.equal(['before', 'after']);

    let shown: any;
    await waitFor(async () => (shown = (await t.api('GET', `/instances/${id}/export`, { token: owner.jwt })).body.data).lag === 0, 'nothing left waiting');
    for (const sink of shown.sinks) {
      expect(sink.skipped, `${sink.sink} skipped`).to.equal(1);
      expect(sink.last_skipped, `${sink.sink} says why`).to.match(/was not exported/);
      expect(sink.connected, `${sink.sink} connected`).to.equal(true);
    }
    const [amqp, js] = [shown.sinks.find((s: any) => s.sink === 'amqp'), shown.sinks.find((s: any) => s.sink === 'nats')];
    expect(amqp.last_skipped).to.match(new RegExp(`${LIMIT}`));
    expect(js.last_skipped).to.match(/payload/i);
    // Which event: its id and seq, as a webhook receiver or a replay would find it.
    for (const sink of [amqp, js]) expect(sink.last_skipped).to.match(/event \S+ \(seq \d+\) was not exported/);
    const metrics = (await t.api('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS}` } })).text;
    const value = (sink: string) => Number(new RegExp(`^gateway_export_skipped_total\\{sink="${sink}"\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
    expect(value('amqp')).to.equal(1);
    expect(value('nats')).to.equal(1);
  });
});
