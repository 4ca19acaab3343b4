/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_EXPORT_BATCH } from '../../src/export/index.js';
import { apiFor, newAccount, newInstance, type Api } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/process.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { startNats, type NatsServer } from '../servers/brokers/nats.js';
import { startRabbitMq, type RabbitMq } from '../servers/brokers/rabbitmq.js';
import { AmqpTap, streamMessages, type Consumed } from './support/consumers.js';
import { phoneMessage } from '../support/phone-message.js';

const TOTAL = 400;
const SENDERS = 8;

describe('event export across a gateway crash (SIGKILL), real brokers', function () {
  this.timeout(300_000);
  let rabbit: RabbitMq;
  let nats: NatsServer;
  let tap: AmqpTap;
  let dataDir: string;
  const running: GatewayProcess[] = [];

  before(async () => {
    [rabbit, nats] = await Promise.all([startRabbitMq(), startNats()]);
    tap = await new AmqpTap(rabbit.url, 'gateway').start();
    dataDir = await mkdtemp(join(tmpdir(), 'gw-export-crash-'));
  });
  after(async () => {
    for (const gw of running) if (gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
    await tap?.stop();
    await Promise.all([rabbit?.dispose(), nats?.dispose()]);
    await rm(dataDir, { recursive: true, force: true });
  });

  const env = () => ({ DATA_DIR: dataDir, MESSAGING_NETWORK: 'sandbox', ALLOW_PRIVATE_TARGETS: 'true', EXPORT_AMQP_URL: rabbit.url, EXPORT_NATS_URL: nats.url, EXPORT_RETRY_MAX_MS: '300' });

  it('publishes every acknowledged message after a kill and a restart; NATS stores each once, AMQP repeats at most two batches', async () => {
    const first = await spawnGateway(env());
    running.push(first);
    let api: Api = apiFor(first.url);
    const owner = await newAccount(api);
    const instance = await newInstance(api, owner);
    expect((await api('POST', `/instances/${instance.id}/export`, { token: owner.jwt, body: { events: 'Message' } })).status).to.equal(200);
    const own = await newPhone(api, owner);
    const contact = await newPhone(api, owner);
    await pairByQr(api, owner, instance.id, own.phone);

    const acknowledged = new Set<string>();
    let next = 0;
    let killed = false;
    const send = async (target: Api) => {
      const i = next++;
      const res = await phoneMessage(() => target('POST', `/sandbox/phones/${contact.phone}/messages`, { token: owner.jwt, body: { to: own.phone, text: `message ${i}` } }));
      if (res.status !== 201) throw new Error(`send ${i}: ${res.status} ${res.text}`);
      acknowledged.add(res.body.message_id as string);
    };
    await Promise.all(
      Array.from({ length: SENDERS }, async () => {
        while (!killed && next < TOTAL) {
          try {
            await send(api);
          } catch {
            if (!killed) throw new Error('a send failed before the kill');
            return;
          }
          // Killed mid-stream: some published, some in flight, some not yet read from the outbox.
          if (acknowledged.size >= TOTAL / 2 && !killed && tap.of(instance.id).length > 0) {
            killed = true;
            first.child.kill('SIGKILL');
          }
        }
      }),
    );
    expect(await first.exited).to.equal(null);
    const atKill = tap.of(instance.id).length;
    const sentAtKill = next;

    const second = await spawnGateway(env());
    running.push(second);
    api = apiFor(second.url);
    while (acknowledged.size < TOTAL) await send(api);

    const idsOf = (messages: Consumed[]) => messages.map((m) => m.body.event.Info.ID as string);
    const all = (messages: Consumed[]) => [...acknowledged].every((id) => new Set(idsOf(messages)).has(id));
    await waitFor(() => all(tap.of(instance.id)), 'every acknowledged message on RabbitMQ', 120_000);
    await waitFor(async () => all(await streamMessages(nats.url, 'GATEWAY', 'gateway', instance.id)), 'every acknowledged message on JetStream', 120_000);

    for (const [broker, messages] of [['amqp', tap.of(instance.id)], ['nats', await streamMessages(nats.url, 'GATEWAY', 'gateway', instance.id)]] as const) {
      // A copy is the very same message: same id, same bytes.
      const firstSeen = new Map<string, Consumed>();
      for (const m of messages) {
        const seen = firstSeen.get(m.body.id);
        if (seen) expect(m.raw, `${broker}: a repeated message is byte for byte the first`).to.equal(seen.raw);
        else firstSeen.set(m.body.id, m);
      }
      const seqs = [...firstSeen.values()].map((m) => m.body.seq as number);
      // In order, each once; none missing (waited for above). Beyond the acknowledged ones, only
      // sends in flight at the kill: stored before it, their answers lost with the process.
      expect(seqs.every((x, i) => i === 0 || x > seqs[i - 1]!), `${broker}: each seq once, in order`).to.equal(true);
      const unacknowledged = [...firstSeen.values()].filter((m) => !acknowledged.has(m.body.event.Info.ID as string));
      expect(unacknowledged.length, `${broker}: published but never acknowledged`).to.be.at.most(SENDERS);
      for (const m of unacknowledged) expect(Number(/^message (\d+)$/.exec(m.body.event.Message.conversation as string)?.[1]), 'a send made before the kill').to.be.lessThan(sentAtKill);
      const repeats = messages.length - firstSeen.size;
      if (broker === 'nats') expect(repeats, 'JetStream drops a message id it has stored').to.equal(0);
      else expect(repeats, 'AMQP repeats at most the two batches a lane may have unrecorded').to.be.at.most(2 * DEFAULT_EXPORT_BATCH);
      console.log(`      ${broker}: ${acknowledged.size} acknowledged, ${atKill} on RabbitMQ at the kill, ${repeats} repeated after the restart, 0 lost`);
    }
    second.child.kill('SIGTERM');
    expect(await second.exited).to.equal(0);
  });

  it('a broker URL that does not parse is a clear error at start, the URL not repeated', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-export-bad-url-'));
    try {
      let failure = '';
      await spawnGateway({ DATA_DIR: dir, MESSAGING_NETWORK: 'sandbox', EXPORT_AMQP_URL: 'amqp://user:hunter2secret@[not-a-host' }).then(
        (gw) => {
          running.push(gw);
          throw new Error('the gateway started');
        },
        (err: Error) => (failure = err.message),
      );
      expect(failure).to.match(/EXPORT_AMQP_URL does not parse as a URL/);
      expect(failure).to.not.include('hunter2secret');
      failure = '';
      await spawnGateway({ DATA_DIR: dir, MESSAGING_NETWORK: 'sandbox', EXPORT_NATS_URL: 'http://127.0.0.1:4222' }).then(
        () => {
          throw new Error('the gateway started');
        },
        (err: Error) => (failure = err.message),
      );
      expect(failure).to.match(/EXPORT_NATS_URL has the scheme 'http', not nats or tls/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
