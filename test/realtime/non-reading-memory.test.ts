/* eslint-disable @typescript-eslint/no-explicit-any -- bodies are read field by field */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { apiFor, newAccount, newInstance, type Api, type TestAccount } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/process.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';

/**
 * The gateway's own memory (issue 27, finding 13): anonymous resident memory of the process
 * (`RssAnon`), which is what it holds itself. The embedded log's mapped file pages are not in it:
 * they are the page cache's, shared, and dropped by the kernel when it needs the room.
 */
function rssAnonBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('RssAnon:'));
  if (!line) throw new Error('no RssAnon in /proc/<pid>/status');
  return Number(line.split(/\s+/)[1]) * 1024;
}

/**
 * A full garbage collection in the gateway, through its inspector (started with --inspect on a
 * free port): what is measured afterwards is what the gateway holds, not garbage V8 has not
 * collected yet (a quiet process grows its heap by tens of MB before it collects, readers or not).
 */
async function collectGarbage(gw: GatewayProcess): Promise<void> {
  const url = /ws:\/\/127\.0\.0\.1:\d+\/[\w-]+/.exec(gw.logs.join('\n'))?.[0];
  if (!url) throw new Error('the gateway printed no inspector URL');
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  for (let i = 1; i <= 2; i++) {
    ws.send(JSON.stringify({ id: i, method: 'HeapProfiler.collectGarbage' }));
    await new Promise<void>((resolve) => {
      const onMessage = (data: WebSocket.RawData) => {
        if ((JSON.parse(data.toString()) as { id?: number }).id !== i) return;
        ws.off('message', onMessage);
        resolve();
      };
      ws.on('message', onMessage);
    });
  }
  ws.close();
}

const METRICS_TOKEN = 'rtmem-metrics-token-0123456789';

/** Open realtime streams, as the gateway counts them. */
async function openStreams(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  return Number(/^gateway_realtime_streams (\d+)$/m.exec(text)?.[1] ?? NaN);
}

const MB = 1 << 20;
/**
 * The probe's 2,000 took minutes on a busy CI box; 400 of 48 KB (19 MB) are more than one stream
 * may hold (its 1 MB high water and 256-body window), so a stream that kept what it cannot send
 * would hold 4 x 19 MB, past the bound, while the socket buffers it may hold stay a few MB.
 */
const MESSAGES = 400;
const TEXT_BYTES = 48 * 1024;
const BOUND = 50 * MB;

interface Reader {
  ws: WebSocket;
  texts: Set<string>;
}

/**
 * A client that reads and acknowledges everything: tells when the gateway has handled all it was
 * sent. Its acks are sent on the non-reading clients too (writing needs no reading), so their
 * streams are held back by the socket's high water mark alone, not closed for want of acks
 * (60 s) before the memory is measured.
 */
function reader(url: string, alsoAck: WebSocket[]): Promise<Reader> {
  const ws = new WebSocket(url);
  const texts = new Set<string>();
  ws.on('message', (data) => {
    const raw = data.toString();
    const body = JSON.parse(raw);
    // The message's tag, wherever the body's message type keeps its text.
    const tag = /"((?:warm|meas) \d{5} \.*)x/.exec(raw);
    if (tag) texts.add(tag[1] as string);
    const ack = JSON.stringify({ ack: body.seq });
    for (const client of [ws, ...alsoAck]) client.send(ack);
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, texts }));
    ws.once('error', reject);
  });
}

/** A client that opens the stream and never reads from its socket again. */
function nonReader(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  ws.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      (ws as unknown as { _socket: { pause(): void } })._socket.pause();
      resolve(ws);
    });
    ws.once('error', reject);
  });
}

describe('realtime stream: clients that never read do not grow the gateway', function () {
  this.timeout(600_000);
  let dataDir: string;
  let gw: GatewayProcess | undefined;
  before(async () => (dataDir = await mkdtemp(join(tmpdir(), 'gw-rtmem-'))));
  after(async () => {
    if (gw && gw.child.exitCode === null && gw.child.signalCode === null) {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it(`holds at most ${BOUND / MB} MB more private memory while 4 of them get ${MESSAGES} messages of 48 KB, after a same-size warm-up`, async () => {
    gw = await spawnGateway({ DATA_DIR: dataDir, MESSAGING_NETWORK: 'sandbox', REALTIME_MAX_STREAMS_PER_ACCOUNT: '20', METRICS_TOKEN, NODE_OPTIONS: '--inspect=127.0.0.1:0' });
    const api: Api = apiFor(gw.url);
    const owner: TestAccount = await newAccount(api);
    const { id } = await newInstance(api, owner);
    const me = await newPhone(api, owner);
    const them = await newPhone(api, owner);
    await pairByQr(api, owner, id, me.phone);
    const wsUrl = `${gw.url.replace('http', 'ws')}/instances/${id}/events/ws?access_token=${owner.jwt}`;
    const pid = gw.child.pid as number;

    const round = async (label: string): Promise<WebSocket[]> => {
      const stuck = await Promise.all([1, 2, 3, 4].map(() => nonReader(wsUrl)));
      const watcher = await reader(wsUrl, stuck);
      let next = 0;
      const pad = 'x'.repeat(TEXT_BYTES);
      const send = async (): Promise<void> => {
        while (next < MESSAGES) {
          const n = next++;
          const tag = `${label} ${String(n).padStart(5, '0')} `.padEnd(16, '.');
          const res = await api('POST', `/sandbox/phones/${them.phone}/messages`, { token: owner.jwt, body: { to: me.phone, text: tag + pad.slice(16) } });
          if (res.status !== 201) throw new Error(`send ${n}: ${res.status} ${res.text}`);
        }
      };
      const began = Date.now();
      await Promise.all([send(), send(), send(), send()]);
      console.log(`      (${label}: ${MESSAGES} sent in ${Date.now() - began} ms, RssAnon ${(rssAnonBytes(pid) / MB).toFixed(1)} MB)`);
      // Every message reached the streams once the reading client has them all.
      await waitFor(() => [...watcher.texts].filter((t) => t.startsWith(label)).length >= MESSAGES, `${label}: every message on the stream`, 300_000);
      watcher.ws.close();
      return stuck;
    };

    const start = rssAnonBytes(pid);
    for (const ws of await round('warm')) ws.terminate();
    await collectGarbage(gw);
    const before = rssAnonBytes(pid);
    // Measured while the 4 clients are still connected and not reading: what they cost is held now.
    const stuck = await round('meas');
    await collectGarbage(gw);
    const after = rssAnonBytes(pid);
    // Still open, so what they cost was measured (the reading client may not be gone yet).
    expect(await openStreams(gw.url), 'streams open when measured').to.be.at.least(4);
    for (const ws of stuck) ws.terminate();
    const grew = after - before;
    console.log(`      (gateway RssAnon ${(start / MB).toFixed(1)} MB at the start, ${(before / MB).toFixed(1)} MB after the warm-up, ${(after / MB).toFixed(1)} MB with 4 more non-reading clients and ${MESSAGES} more messages: +${(grew / MB).toFixed(1)} MB)`);
    expect(grew, `RssAnon grew ${(grew / MB).toFixed(1)} MB`).to.be.at.most(BOUND);
  });
});
