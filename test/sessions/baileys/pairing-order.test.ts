import { makeWASocket, type WASocket } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { BaileysNetwork } from '../../../src/sessions/baileys/baileys-network.js';
import type { AuthStateStore, NetworkConnection } from '../../../src/sessions/port.js';

/**
 * Pairing by code against Baileys' real socket code. The fake server accepts the websocket and
 * then holds the Noise handshake open, as WhatsApp does while it decides: it reads the client's
 * hello and answers nothing. Until the network offers pairing (its pair-device stanza, which
 * Baileys turns into the first `qr` update) the code must not be requested: requesting it sets
 * `creds.me`, which turns the registration into a login.
 */
describe('Baileys pairing code: requested only once the network offers pairing', function () {
  this.timeout(10_000);
  let server: WebSocketServer;
  let frames: Buffer[];
  let sock: WASocket | undefined;
  let connection: NetworkConnection | undefined;
  let opened: Promise<WebSocket>;

  beforeEach(async () => {
    frames = [];
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    opened = new Promise((resolve) => server.once('connection', (ws) => {
      ws.on('message', (data: Buffer) => frames.push(data));
      resolve(ws);
    }));
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  });

  afterEach(async () => {
    await connection?.end().catch(() => undefined);
    connection = undefined;
    for (const client of server.clients) client.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function connect(): Promise<{ conn: NetworkConnection; real: WASocket; qrs: string[] }> {
    const { port } = server.address() as AddressInfo;
    const qrs: string[] = [];
    const network = new BaileysNetwork({
      version: [2, 3000, 1_027_934_701],
      logger: pino({ level: 'silent' }),
      makeSocket: (config) => {
        sock = makeWASocket({ ...config, waWebSocketUrl: `ws://127.0.0.1:${port}/ws/chat`, connectTimeoutMs: 30_000 });
        return sock;
      },
    });
    const conn = await network.connect({
      instanceId: 'I1',
      accountId: 'A1',
      auth: memoryAuth(),
      handlers: { onEvents: async () => undefined, onQr: (qr) => qrs.push(qr), onClose: () => undefined },
    });
    connection = conn;
    if (!sock) throw new Error('no socket made');
    return { conn, real: sock, qrs };
  }

  it('waits through the open websocket and the held handshake, then asks once the first QR came', async () => {
    const { conn, real, qrs } = await connect();
    await opened;
    const answer = conn.requestPairingCode('5511988887777');
    let settled = false;
    void answer.then(() => (settled = true), () => (settled = true));

    // The websocket is open and the client hello has reached the server; nothing answers it.
    await until('the client hello', () => frames.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled, 'no code while the handshake is held').to.equal(false);
    expect(real.authState.creds.me, 'creds.me untouched during the handshake').to.equal(undefined);
    expect(frames).to.have.length(1);

    // What Baileys emits when the server's pair-device stanza arrives.
    real.ev.emit('connection.update', { qr: 'QR-1' });
    const code = await answer;
    expect(qrs).to.deep.equal(['QR-1']);
    expect(code).to.match(/^[A-Z0-9]{8}$/);
    expect(real.authState.creds.me?.id).to.equal('5511988887777@s.whatsapp.net');
    // The companion-hello iq went out after the QR, as the second frame.
    await until('the pairing request frame', () => frames.length >= 2);
  });

  it('fails clearly when the connection ends before the network offered pairing', async () => {
    const { conn, real } = await connect();
    await opened;
    const answer = conn.requestPairingCode('5511988887777').then(() => undefined, (e: unknown) => e);
    await until('the client hello', () => frames.length >= 1);
    await conn.end();
    const error = await answer;
    expect(error).to.be.instanceOf(Error);
    expect(String((error as Error).message)).to.match(/closed/);
    expect(real.authState.creds.me).to.equal(undefined);
  });
});

function memoryAuth(): AuthStateStore {
  const data = new Map<string, unknown>();
  return {
    async get(type, ids) {
      return Object.fromEntries(ids.flatMap((id) => (data.has(`${type}/${id}`) ? [[id, data.get(`${type}/${id}`)]] : [])));
    },
    async set(set) {
      for (const [type, values] of Object.entries(set)) for (const [id, v] of Object.entries(values)) v === null ? data.delete(`${type}/${id}`) : data.set(`${type}/${id}`, v);
    },
    async clear() {
      data.clear();
    },
  };
}

async function until(what: string, condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
