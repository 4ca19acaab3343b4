/* eslint-disable @typescript-eslint/no-explicit-any -- bodies are read field by field */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/sandbox.js';
import { tcpBufferMaxBytes } from '../support/tcp-buffers.js';
import { Receiver } from '../webhooks/support/receiver.js';

/** Appends `n` received text messages to an instance's session stream, as the driver would. */
async function messages(t: TestGateway, instanceId: string, n: number, text = 'hello', first = 0): Promise<void> {
  const events = Array.from({ length: n }, (_, i) => ({
    id: randomUUID(),
    type: 'MessageReceived',
    data: {
      upsert: 'notify',
      message: { id: `3EB0${randomUUID().slice(0, 8).toUpperCase()}`, chat: '5511999990000@s.whatsapp.net', sender: '5511999990000@s.whatsapp.net', from_me: false, is_group: false, timestamp_s: 1_700_000_000 + i, type: 'text', text: `${text} ${first + i}` },
    },
    metadata: { instanceId, occurredAt: new Date().toISOString(), correlationId: 'test', actor: { kind: 'network', id: 'sandbox' } },
  }));
  for (let i = 0; i < events.length; i += 500) await t.gateway.events.append(`session-${instanceId}`, events.slice(i, i + 500), 'any');
}

/** The seq of the last event in an instance's session stream. */
async function headSeq(t: TestGateway, instanceId: string): Promise<number> {
  const [last] = await t.gateway.events.readStream(`session-${instanceId}`, { direction: 'backwards', maxCount: 1 });
  return last ? Number(last.revision) + 1 : 0;
}

async function receipt(t: TestGateway, instanceId: string): Promise<void> {
  await t.gateway.events.append(
    `session-${instanceId}`,
    [{ id: randomUUID(), type: 'ReceiptReceived', data: { message_ids: ['X'], chat: '1@s.whatsapp.net', sender: '1@s.whatsapp.net', state: 'Read', timestamp_s: 1 }, metadata: { instanceId } }],
    'any',
  );
}

interface Client {
  ws: WebSocket;
  bodies: any[];
  closed: Promise<{ code: number; reason: string }>;
}

function open(t: TestGateway, path: string, headers: Record<string, string> = {}): Promise<Client> {
  const ws = new WebSocket(t.gateway.url.replace('http', 'ws') + path, { headers });
  const bodies: any[] = [];
  ws.on('message', (data) => bodies.push(JSON.parse(data.toString())));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, bodies, closed }));
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`status ${res.statusCode}`), { status: res.statusCode })));
    ws.once('error', reject);
  });
}

async function refusedWith(t: TestGateway, path: string, headers: Record<string, string> = {}): Promise<number> {
  try {
    const client = await open(t, path, headers);
    client.ws.close();
    return 101;
  } catch (err) {
    return (err as { status?: number }).status ?? -1;
  }
}

describe('realtime stream over a real WebSocket', function () {
  this.timeout(30_000);
  let t: TestGateway;
  let owner: TestAccount;
  before(async () => {
    // 5 s without an ack closes a stream: short enough for the no-ack test to see it, long enough
    // that the resume test's never-acking client gets its messages on a loaded CI box.
    t = await startTestGateway({ REALTIME_MAX_STREAMS_PER_ACCOUNT: '3' }, { realtime: { ackTimeoutMs: 5000 } });
    owner = await newAccount(t.api);
  });
  after(async () => t.stop());

  it('sends live webhook bodies of the subscribed types, starting live, with seq increasing', async () => {
    const { id } = await newInstance(t.api, owner);
    await messages(t, id, 2, 'before');
    const client = await open(t, `/instances/${id}/events/ws?access_token=${owner.jwt}&types=Message`);
    await receipt(t, id);
    await messages(t, id, 3, 'live');
    await waitFor(() => client.bodies.length === 3, 'three live messages');
    expect(client.bodies.map((b) => b.event.Message.conversation)).to.deep.equal(['live 0', 'live 1', 'live 2']);
    expect(client.bodies.map((b) => Object.keys(b))).to.deep.equal(Array(3).fill(['id', 'type', 'instance_id', 'seq', 'created_at', 'event']));
    expect(client.bodies.every((b) => b.type === 'Message' && b.instance_id === id && /^evt_[0-9a-f]{32}$/.test(b.id))).to.equal(true);
    const seqs = client.bodies.map((b) => b.seq);
    expect(seqs).to.deep.equal([...seqs].sort((a, b) => a - b));
    client.ws.close();
  });

  it('after a dropped connection, resumes from after_seq: every event once, in order, then live', async () => {
    const { id } = await newInstance(t.api, owner);
    const first = await open(t, `/instances/${id}/events/ws`, { authorization: `Bearer ${owner.jwt}` });
    await messages(t, id, 5, 'a');
    await waitFor(() => first.bodies.length === 5, 'five');
    const last = first.bodies[2].seq;
    first.ws.send(JSON.stringify({ ack: last }));
    first.ws.terminate();
    await messages(t, id, 4, 'b');
    const second = await open(t, `/instances/${id}/events/ws?after_seq=${last}`, { authorization: `Bearer ${owner.jwt}` });
    await messages(t, id, 2, 'c');
    await waitFor(() => second.bodies.length === 8, 'everything after the ack');
    await new Promise((r) => setTimeout(r, 200));
    expect(second.bodies.map((b) => b.event.Message.conversation)).to.deep.equal(['a 3', 'a 4', 'b 0', 'b 1', 'b 2', 'b 3', 'c 0', 'c 1']);
    const seqs = second.bodies.map((b) => b.seq);
    expect(new Set(seqs).size).to.equal(8);
    expect(seqs[0]).to.be.greaterThan(last);
    second.ws.close();
  });

  it("gives each event the seq its webhook body has, so resuming with a webhook's seq neither misses nor repeats", async () => {
    const rx = await new Receiver().start();
    try {
      const account = await newAccount(t.api);
      const { id } = await newInstance(t.api, account);
      // The webhook takes messages only; the stream takes every type: their seqs still agree.
      expect((await t.api('POST', `/instances/${id}/webhook`, { token: account.jwt, body: { webhookURL: rx.url, events: 'Message' } })).status).to.equal(200);
      const first = await open(t, `/instances/${id}/events/ws?access_token=${account.jwt}`);
      for (const text of ['one', 'two', 'three']) {
        await receipt(t, id);
        await messages(t, id, 1, text);
      }
      await waitFor(() => rx.received.length === 3 && first.bodies.length === 6, 'three webhooks and six frames', 30_000);
      first.ws.send(JSON.stringify({ ack: first.bodies[5].seq }));
      first.ws.close();
      const frames = new Map(first.bodies.map((b) => [b.id, b]));
      for (const hook of rx.received) {
        expect(frames.get(hook.body.id)?.seq, `seq of ${hook.body.id}`).to.equal(hook.body.seq);
        // The stream sends the webhook body itself.
        expect(frames.get(hook.body.id)).to.deep.equal(hook.body);
      }
      // A client that saw the first message by webhook resumes the stream after its seq.
      const seen = rx.received.find((r) => r.body.event.Message.conversation === 'one 0')?.body;
      const resumed = await open(t, `/instances/${id}/events/ws?access_token=${account.jwt}&after_seq=${seen.seq}`);
      await waitFor(() => resumed.bodies.length === 4, 'everything after the webhook\'s event');
      await new Promise((r) => setTimeout(r, 200));
      expect(resumed.bodies.map((b) => b.id)).to.deep.equal(first.bodies.slice(2).map((b) => b.id));
      resumed.ws.close();
    } finally {
      await rx.stop();
    }
  });

  it('closes a stream whose client stops acknowledging', async () => {
    const { id } = await newInstance(t.api, owner);
    const client = await open(t, `/instances/${id}/events/ws`, { authorization: `Bearer ${owner.jwt}` });
    await messages(t, id, 1);
    const { code, reason } = await client.closed;
    expect(code).to.equal(4008);
    expect(reason).to.match(/no ack/);
  });

  it('refuses the upgrade without credentials, for another account, with bad types, and past the cap per account', async () => {
    const { id, token } = await newInstance(t.api, owner);
    const other = await newAccount(t.api);
    expect(await refusedWith(t, `/instances/${id}/events/ws`)).to.equal(401);
    expect(await refusedWith(t, `/instances/${id}/events/ws?access_token=${other.jwt}`)).to.equal(403);
    expect(await refusedWith(t, `/instances/${id}/events/ws?access_token=${owner.jwt}&types=Receipt`)).to.equal(400);
    expect(await refusedWith(t, `/instances/${id}/events/ws?access_token=${owner.jwt}&after_seq=-1`)).to.equal(400);
    expect(await refusedWith(t, `/instances/NOPE/events/ws?access_token=${owner.jwt}`)).to.equal(404);
    // The token pair works too.
    const pair = await open(t, `/instances/${id}/events/ws`, { 'x-instance-token': token, 'x-client-token': owner.clientToken });
    const more = [await open(t, `/instances/${id}/events/ws?access_token=${owner.jwt}`), await open(t, `/instances/${id}/events/ws?access_token=${owner.jwt}`)];
    expect(await refusedWith(t, `/instances/${id}/events/ws?access_token=${owner.jwt}`)).to.equal(429);
    for (const c of [pair, ...more]) c.ws.close();
    await Promise.all([pair, ...more].map((c) => c.closed));
    const plain = await t.api('GET', `/instances/${id}/events/ws`, { token: owner.jwt });
    expect(plain.status).to.equal(426);
  });
});

describe('realtime stream and a client that never reads', function () {
  // The kernel may take several MB before the gateway has to buffer; on the adapters' test servers
  // (one process) the stream reads such a log at a few hundred KB/s on a busy machine.
  this.timeout(180_000);
  let t: TestGateway;
  let owner: TestAccount;
  const HIGH_WATER = 64 * 1024;
  before(async () => {
    t = await startTestGateway({}, { realtime: { ackTimeoutMs: 120_000, limits: { window: 1_000_000, highWaterBytes: HIGH_WATER } } });
    owner = await newAccount(t.api);
  });
  after(async () => t.stop());

  it('stops sending at the high water mark (measured), and delivers everything in order once the client reads again', async () => {
    const { id } = await newInstance(t.api, owner);
    const client = await open(t, `/instances/${id}/events/ws?access_token=${owner.jwt}`);
    // The client's socket stops reading: the kernel's buffers fill, then the gateway's would.
    const socket = (client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    // How much the kernel takes before the gateway has to buffer depends on the machine (its TCP
    // buffer tuning, up to tens of MB) and on how fast the stream reads the log: so events of
    // 128 KB are appended until the stream reports that it stopped at its high water mark, each
    // batch once the stream has handled the one before, up to more than the kernel can hold.
    const padding = 'x'.repeat(128 * 1024);
    const kernelBytes = tcpBufferMaxBytes(); // the kernel's limits: receive + send buffer
    let n = 0;
    let pressure = { pauses: 0, peakBuffered: 0, cursor: 0 };
    while (pressure.pauses === 0) {
      expect(n * padding.length, `the stream never stopped after ${n} events of 128 KB (kernel buffers hold at most ${kernelBytes} bytes)`).to.be.at.most(kernelBytes + (8 << 20));
      await messages(t, id, 8, padding, n);
      n += 8;
      const seq = await headSeq(t, id);
      await waitFor(() => {
        pressure = t.gateway.realtime.stats().pressure[0] ?? pressure;
        return pressure.pauses > 0 || pressure.cursor >= seq;
      }, 'the stream handled the batch or stopped', 30_000);
    }
    // Stopped at the high water mark: one more MB arrives, and none of it may be sent (it is read
    // from the log once the socket drains). A stream that went on sending would hold it.
    await messages(t, id, 8, padding, n);
    n += 8;
    await new Promise((r) => setTimeout(r, 500));
    pressure = t.gateway.realtime.stats().pressure[0] ?? pressure;
    expect(pressure.cursor, 'seq the stream stands at').to.be.below(await headSeq(t, id));
    expect(pressure.peakBuffered, `peak ${pressure.peakBuffered}`).to.be.at.most(HIGH_WATER + padding.length + 1024);
    console.log(`      (gateway buffer for a client that does not read: at most ${pressure.peakBuffered} bytes after ${n} events of 128 KB were due)`);
    socket.resume();
    await waitFor(() => client.bodies.length === n, 'every event after resuming', 30_000);
    const texts = client.bodies.map((b) => Number(b.event.Message.conversation.split(' ')[1]));
    expect(texts).to.deep.equal(Array.from({ length: n }, (_, i) => i));
    client.ws.close();
  });
});
