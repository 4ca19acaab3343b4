import {
  aesDecryptGCM,
  aesEncryptGCM,
  Curve,
  decodeBinaryNode,
  encodeBinaryNode,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  hkdf,
  hmacSign,
  NOISE_MODE,
  proto,
  sha256,
  WA_CERT_DETAILS,
  type BinaryNode,
  type KeyPair,
} from '@whiskeysockets/baileys';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { bundleOfUpload, Peer, type KeyBundle } from './peer.js';

/**
 * A WhatsApp server for tests: Baileys' real socket connects to it over a websocket, runs the
 * real Noise handshake and exchanges real binary nodes. The test scripts what the server says
 * (pairing, refusals, messages, acks); everything on the client side is Baileys' own code.
 *
 * One thing is changed in the client process, as a TLS test trusts a test CA: the root key Baileys
 * checks the server's certificate chain against (WA_CERT_DETAILS.PUBLIC_KEY) is set to this
 * server's test root. Nothing else of Baileys is touched.
 */
const ROOT: KeyPair = Curve.generateKeyPair();
WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(ROOT.public);

const S_WHATSAPP_NET = 's.whatsapp.net';
const INTRO = Buffer.from('WA');

/** Noise XX, the responder's side of what Baileys' noise-handler.js does as initiator. */
class NoiseResponder {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;

  constructor() {
    const mode = Buffer.from(NOISE_MODE);
    this.hash = mode.length === 32 ? mode : Buffer.from(sha256(mode));
    this.salt = this.hash;
    this.key = this.hash;
  }

  authenticate(data: Uint8Array): void {
    this.hash = Buffer.from(sha256(Buffer.concat([this.hash, data])));
  }

  encrypt(plain: Uint8Array): Buffer {
    const out = aesEncryptGCM(plain, this.key, iv(this.counter++), this.hash);
    this.authenticate(out);
    return out;
  }

  decrypt(cipher: Uint8Array): Buffer {
    const out = aesDecryptGCM(Buffer.from(cipher), this.key, iv(this.counter++), this.hash);
    this.authenticate(cipher);
    return out;
  }

  mix(data: Uint8Array): void {
    const key = Buffer.from(hkdf(Buffer.from(data), 64, { salt: this.salt, info: '' }));
    this.salt = key.subarray(0, 32);
    this.key = key.subarray(32);
    this.counter = 0;
  }

  /** The transport keys: the client writes with the first, reads with the second. */
  split(): { fromClient: Buffer; toClient: Buffer } {
    const key = Buffer.from(hkdf(Buffer.alloc(0), 64, { salt: this.salt, info: '' }));
    return { fromClient: key.subarray(0, 32), toClient: key.subarray(32) };
  }
}

function iv(counter: number): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt32BE(counter, 8);
  return out;
}

/** The certificate chain the client checks: an intermediate signed by the test root, a leaf by it. */
function certChain(serverStatic: Uint8Array): Uint8Array {
  const intermediate = Curve.generateKeyPair();
  const details = proto.CertChain.NoiseCertificate.Details.encode({ serial: 1, issuerSerial: WA_CERT_DETAILS.SERIAL, key: intermediate.public }).finish();
  const leaf = proto.CertChain.NoiseCertificate.Details.encode({ serial: 2, issuerSerial: 1, key: serverStatic }).finish();
  return proto.CertChain.encode({
    intermediate: { details, signature: Curve.sign(ROOT.private, details) },
    leaf: { details: leaf, signature: Curve.sign(intermediate.private, leaf) },
  }).finish();
}

/** A linked device the server knows: what a login must match. */
interface Device {
  user: string;
  device: number;
  lidUser: string;
  noiseKey: string;
  /** Pre-key bundles uploaded by this device, newest last. */
  uploads: KeyBundle[];
}

export type Handshake = (conn: ScriptedConnection) => void | Promise<void>;
/** Answers an iq; undefined leaves it to the next answerer (the default is an empty result). */
export type Answerer = (iq: BinaryNode, conn: ScriptedConnection) => BinaryNode | 'silent' | undefined | Promise<BinaryNode | 'silent' | undefined>;

/**
 * One client connection. `payload` is the ClientPayload of the handshake: a registration (a
 * first pairing) or a login (a paired device), with the client version it announces.
 */
export class ScriptedConnection {
  readonly received: BinaryNode[] = [];
  payload!: proto.ClientPayload;
  closed = false;
  private transport: { fromClient: Buffer; toClient: Buffer; read: number; write: number } | undefined;
  private waiters: { match: (node: BinaryNode) => boolean; resolve: (node: BinaryNode) => void }[] = [];
  private readonly noise = new NoiseResponder();
  private inBytes = Buffer.alloc(0);
  private introSeen = false;
  private ephemeral: KeyPair = Curve.generateKeyPair();
  private readonly serverStatic: KeyPair = Curve.generateKeyPair();
  private clientStatic: Uint8Array | undefined;
  private queue: Promise<void> = Promise.resolve();
  private readonly handshakeDone: Promise<void>;
  private finishHandshake!: () => void;

  constructor(
    readonly server: ScriptedWhatsApp,
    readonly index: number,
    private readonly ws: WebSocket,
  ) {
    this.handshakeDone = new Promise((resolve) => (this.finishHandshake = resolve));
    ws.on('message', (data: Buffer) => {
      this.queue = this.queue.then(() => this.onData(data)).catch((error: unknown) => {
        server.errors.push(error instanceof Error ? error : new Error(String(error)));
        ws.terminate();
      });
    });
    ws.on('close', () => (this.closed = true));
  }

  /** True for a first pairing (the client has no account yet), false for a login. */
  get registering(): boolean {
    return !!this.payload.devicePairingData;
  }

  /** The client version announced, as WhatsApp Web writes it ("2.3000.1027934701"). */
  get version(): string {
    const v = this.payload.userAgent?.appVersion;
    return [v?.primary, v?.secondary, v?.tertiary].join('.');
  }

  /** The client's static noise key (fresh credentials have a fresh one). */
  get noiseKey(): string {
    return Buffer.from(this.clientStatic ?? []).toString('base64');
  }

  ready(): Promise<void> {
    return this.handshakeDone;
  }

  async send(node: BinaryNode): Promise<void> {
    const t = this.transport;
    if (!t || this.closed) return;
    const plain = encodeBinaryNode(node);
    const cipher = aesEncryptGCM(plain, t.toClient, iv(t.write++), Buffer.alloc(0));
    this.ws.send(frame(cipher));
  }

  /** The first node received (now or later) that matches. */
  next(match: (node: BinaryNode) => boolean, what = 'a node', timeoutMs = 15_000): Promise<BinaryNode> {
    const seen = this.received.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`connection ${this.index}: timed out waiting for ${what}`)), timeoutMs);
      this.waiters.push({ match, resolve: (node) => (clearTimeout(timer), resolve(node)) });
    });
  }

  /** Drops the connection as a network failure would. */
  drop(): void {
    this.ws.terminate();
  }

  /** Ends the stream the way the server does (`<xmlstreamend/>`), then closes. */
  close(): void {
    this.ws.close();
  }

  /** `<failure reason="…"/>`: a refused login or registration (405 client version, 403 banned, 401 unknown device). */
  async fail(reason: number): Promise<void> {
    await this.send({ tag: 'failure', attrs: { reason: String(reason), location: 'test' } });
  }

  async streamError(code: number): Promise<void> {
    await this.send({ tag: 'stream:error', attrs: { code: String(code) } });
  }

  /** Offers pairing: the `pair-device` iq with its QR refs, as WhatsApp does for a new companion. */
  async offerPairing(refs = ['REF-1', 'REF-2', 'REF-3']): Promise<void> {
    await this.send({
      tag: 'iq',
      attrs: { from: S_WHATSAPP_NET, type: 'set', id: this.server.tag() },
      content: [{ tag: 'pair-device', attrs: {}, content: refs.map((ref) => ({ tag: 'ref', attrs: {}, content: Buffer.from(ref) })) }],
    });
  }

  /** A paired device's login is accepted: `<success>`, then the end of the offline queue. */
  async acceptLogin(): Promise<void> {
    const device = this.server.deviceOf(this);
    await this.send({ tag: 'success', attrs: { t: String(Math.floor(Date.now() / 1000)), lid: `${device?.lidUser ?? '1'}:${device?.device ?? 0}@lid` } });
  }

  async endOfflineQueue(): Promise<void> {
    await this.send({ tag: 'ib', attrs: {}, content: [{ tag: 'offline', attrs: { count: '0' } }] });
  }

  private async onData(data: Buffer): Promise<void> {
    this.inBytes = Buffer.concat([this.inBytes, data]);
    if (!this.introSeen) {
      if (this.inBytes.length < 4) return;
      if (!this.inBytes.subarray(0, 2).equals(INTRO)) throw new Error('not a WhatsApp client');
      this.noise.authenticate(this.inBytes.subarray(0, 4));
      this.inBytes = this.inBytes.subarray(4);
      this.introSeen = true;
    }
    while (this.inBytes.length >= 3) {
      const size = (this.inBytes[0]! << 16) | (this.inBytes[1]! << 8) | this.inBytes[2]!;
      if (this.inBytes.length < size + 3) return;
      const body = this.inBytes.subarray(3, size + 3);
      this.inBytes = this.inBytes.subarray(size + 3);
      await this.onFrame(body);
    }
  }

  private async onFrame(body: Buffer): Promise<void> {
    if (this.transport) {
      const t = this.transport;
      const plain = aesDecryptGCM(body, t.fromClient, iv(t.read++), Buffer.alloc(0));
      const node = await decodeBinaryNode(plain);
      this.received.push(node);
      for (const w of this.waiters.filter((w) => w.match(node))) {
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve(node);
      }
      await this.server.dispatch(node, this);
      return;
    }
    const message = proto.HandshakeMessage.decode(body);
    if (message.clientHello?.ephemeral) {
      const clientEphemeral = message.clientHello.ephemeral;
      this.noise.authenticate(clientEphemeral);
      this.noise.authenticate(this.ephemeral.public);
      this.noise.mix(Curve.sharedKey(this.ephemeral.private, clientEphemeral));
      const staticEnc = this.noise.encrypt(this.serverStatic.public);
      this.noise.mix(Curve.sharedKey(this.serverStatic.private, clientEphemeral));
      const payload = this.noise.encrypt(certChain(this.serverStatic.public));
      this.ws.send(frame(proto.HandshakeMessage.encode({ serverHello: { ephemeral: this.ephemeral.public, static: staticEnc, payload } }).finish()));
      return;
    }
    if (message.clientFinish?.static && message.clientFinish.payload) {
      this.clientStatic = this.noise.decrypt(message.clientFinish.static);
      this.noise.mix(Curve.sharedKey(this.ephemeral.private, this.clientStatic));
      this.payload = proto.ClientPayload.decode(this.noise.decrypt(message.clientFinish.payload));
      const keys = this.noise.split();
      this.transport = { ...keys, read: 0, write: 0 };
      this.finishHandshake();
      // Not awaited: a script may wait for what the client sends next, which this queue delivers.
      void Promise.resolve(this.server.handshake(this)).catch((error: unknown) => this.server.errors.push(error instanceof Error ? error : new Error(String(error))));
      return;
    }
    throw new Error('unexpected handshake message');
  }
}

function frame(data: Uint8Array): Buffer {
  const out = Buffer.alloc(3 + data.length);
  out.writeUIntBE(data.length, 0, 3);
  out.set(data, 3);
  return out;
}

export interface ScriptedWhatsAppOptions {
  /** What the server does once a handshake is done; by default `standardHandshake`. */
  onHandshake?: Handshake;
  /** Client versions the server accepts (default: any); others get `<failure reason="405">`. */
  acceptsVersion?: (version: string) => boolean;
}

/**
 * The server. By default it behaves as WhatsApp does for a well-behaved client: a registration is
 * offered pairing (QR refs), a known device's login succeeds, an unknown device's login is refused
 * (401), a refused version gets 405. Tests change what they need: `onHandshake`, `answer`.
 */
export class ScriptedWhatsApp {
  readonly connections: ScriptedConnection[] = [];
  readonly errors: Error[] = [];
  /** The account's own phone (the one that scans the QR) and the people it talks with. */
  readonly phone = new Peer('5511900000001', '100000000000001', 'Owner');
  readonly peers = new Map<string, Peer>();
  readonly devices: Device[] = [];
  onHandshake: Handshake;
  acceptsVersion: (version: string) => boolean;
  private answerers: Answerer[] = [];
  private tags = 0;
  private constructor(
    private readonly wss: WebSocketServer,
    options: ScriptedWhatsAppOptions,
  ) {
    this.onHandshake = options.onHandshake ?? ((conn) => this.standardHandshake(conn));
    this.acceptsVersion = options.acceptsVersion ?? (() => true);
    wss.on('connection', (ws) => {
      const conn = new ScriptedConnection(this, this.connections.length, ws);
      this.connections.push(conn);
    });
    this.addPeer(this.phone);
  }

  static async start(options: ScriptedWhatsAppOptions = {}): Promise<ScriptedWhatsApp> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    return new ScriptedWhatsApp(wss, options);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/ws/chat`;
  }

  tag(): string {
    return `srv.${++this.tags}`;
  }

  addPeer(peer: Peer): Peer {
    this.peers.set(peer.phone, peer);
    this.peers.set(peer.lidUser, peer);
    return peer;
  }

  /** The n-th connection (0-based) once its handshake is done. */
  async connection(n: number, timeoutMs = 20_000): Promise<ScriptedConnection> {
    const deadline = Date.now() + timeoutMs;
    while (!this.connections[n]) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for connection ${n} (have ${this.connections.length})`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const conn = this.connections[n];
    await Promise.race([
      conn.ready(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`connection ${n}: no handshake`)), Math.max(1, deadline - Date.now()))),
    ]);
    return conn;
  }

  /** Adds an answerer tried before the earlier ones (later scripts override). */
  answer(answerer: Answerer): void {
    this.answerers.unshift(answerer);
  }

  deviceOf(conn: ScriptedConnection): Device | undefined {
    const user = String(conn.payload.username ?? '');
    return this.devices.find((d) => d.user === user && d.device === (conn.payload.device ?? 0));
  }

  /** The default: refuse versions it does not accept, offer pairing to a registration, log a known device in. */
  async standardHandshake(conn: ScriptedConnection): Promise<void> {
    if (!this.acceptsVersion(conn.version)) return conn.fail(405);
    if (conn.registering) return conn.offerPairing();
    const device = this.deviceOf(conn);
    if (!device || device.noiseKey !== conn.noiseKey) return conn.fail(401);
    await this.logIn(conn);
  }

  /**
   * Success, then (once the client has settled its pre-keys and gone active) the end of the
   * offline queue: the client opens, and releases what it buffered.
   */
  async logIn(conn: ScriptedConnection): Promise<void> {
    await conn.acceptLogin();
    await conn.next((n) => n.tag === 'iq' && n.attrs.xmlns === 'passive', 'the client going active');
    await conn.endOfflineQueue();
  }

  /**
   * The phone scans the QR: `pair-success` with a device identity signed by the account, as the
   * phone makes it, then the 515 that asks the client for a fresh socket.
   */
  async scanQr(conn: ScriptedConnection, qr: string, device = 7): Promise<void> {
    const [, noiseB64, identityB64, advB64] = qr.replace(/^.*#/, '').split(',');
    if (!noiseB64 || !identityB64 || !advB64) throw new Error(`not a pairing QR: ${qr}`);
    const companionIdentity = Buffer.from(identityB64, 'base64');
    const account = this.phone.creds.signedIdentityKey;
    const deviceDetails = proto.ADVDeviceIdentity.encode({ rawId: 1, timestamp: Math.floor(Date.now() / 1000), keyIndex: 1 }).finish();
    const accountSignature = Curve.sign(account.private, Buffer.concat([Buffer.from([6, 0]), deviceDetails, companionIdentity]));
    const details = proto.ADVSignedDeviceIdentity.encode({ details: deviceDetails, accountSignatureKey: account.public, accountSignature }).finish();
    const hmac = hmacSign(Buffer.from(details), Buffer.from(advB64, 'base64'));
    const identity = proto.ADVSignedDeviceIdentityHMAC.encode({ details, hmac }).finish();
    this.devices.push({ user: this.phone.phone, device, lidUser: this.phone.lidUser, noiseKey: noiseB64, uploads: [] });
    const id = this.tag();
    await conn.send({
      tag: 'iq',
      attrs: { from: S_WHATSAPP_NET, type: 'set', id },
      content: [
        {
          tag: 'pair-success',
          attrs: {},
          content: [
            { tag: 'device-identity', attrs: {}, content: identity },
            { tag: 'platform', attrs: { name: 'android' } },
            { tag: 'device', attrs: { jid: `${this.phone.phone}:${device}@${S_WHATSAPP_NET}`, lid: `${this.phone.lidUser}:${device}@lid` } },
          ],
        },
      ],
    });
    await conn.next((n) => n.tag === 'iq' && n.attrs.id === id, 'the pair-device-sign answer');
    await conn.streamError(515);
  }

  /** A message from a peer to the paired device, encrypted with a real Signal session. */
  async deliver(conn: ScriptedConnection, from: Peer, message: proto.IMessage, options: { id?: string; by?: 'lid' | 'pn'; offline?: boolean } = {}): Promise<string> {
    const device = this.deviceOf(conn);
    if (!device) throw new Error('no paired device on this connection');
    const target = `${device.user}:${device.device}@${S_WHATSAPP_NET}`;
    const bundle = device.uploads.at(-1);
    if (!bundle) throw new Error('the device uploaded no pre-keys');
    await from.meet(target, bundle);
    const { type, ciphertext } = await from.encrypt(target, message);
    const id = options.id ?? `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
    const byLid = (options.by ?? 'lid') === 'lid';
    await conn.send({
      tag: 'message',
      attrs: {
        from: byLid ? from.lid : from.pn,
        id,
        type: 'text',
        t: String(Math.floor(Date.now() / 1000)),
        notify: from.pushName,
        addressing_mode: byLid ? 'lid' : 'pn',
        ...(byLid ? { sender_pn: from.pn } : { sender_lid: from.lid }),
        ...(options.offline ? { offline: '1' } : {}),
      },
      content: [{ tag: 'enc', attrs: { v: '2', type }, content: ciphertext }],
    });
    return id;
  }

  async dispatch(node: BinaryNode, conn: ScriptedConnection): Promise<void> {
    if (node.tag === 'iq' && (node.attrs.type === 'get' || node.attrs.type === 'set')) {
      for (const answerer of this.answerers) {
        const answer = await answerer(node, conn);
        if (answer === 'silent') return;
        if (answer) return conn.send({ ...answer, attrs: { from: S_WHATSAPP_NET, type: 'result', id: node.attrs.id ?? '', ...answer.attrs } });
      }
      return conn.send(await this.defaultAnswer(node, conn));
    }
    if (node.tag === 'message') {
      // The server takes every message; a test scripts a refusal (`error`) through ackOf.
      const extra = this.ackOf(node);
      await conn.send({ tag: 'ack', attrs: { class: 'message', id: node.attrs.id ?? '', from: node.attrs.to ?? '', t: String(Math.floor(Date.now() / 1000)), ...extra } });
    }
  }

  /** Extra attributes of the server's ack of a message the client sent (e.g. `{error: '463'}`). */
  ackOf: (message: BinaryNode) => Record<string, string> = () => ({});

  /** Groups the account is in: subject, members (the account's own phone among them), disappearing timer. */
  readonly groups = new Map<string, { subject: string; members: Peer[]; ephemeral?: number; /** Left out of the list at login (joined since). */ unlisted?: boolean }>();

  /** A receipt from a peer for messages the device sent (`read`, or delivery when `type` is undefined). */
  async receipt(conn: ScriptedConnection, from: string, ids: string[], type?: 'read' | 'played'): Promise<void> {
    const [first, ...rest] = ids;
    await conn.send({
      tag: 'receipt',
      attrs: { from, id: first ?? '', t: String(Math.floor(Date.now() / 1000)), ...(type ? { type } : {}) },
      ...(rest.length ? { content: [{ tag: 'list', attrs: {}, content: rest.map((id) => ({ tag: 'item', attrs: { id } })) }] } : {}),
    });
  }

  async presence(conn: ScriptedConnection, from: string, available: boolean): Promise<void> {
    await conn.send({ tag: 'presence', attrs: { from, ...(available ? {} : { type: 'unavailable' }) } });
  }

  private groupNode(jid: string): BinaryNode | undefined {
    const group = this.groups.get(jid);
    if (!group) return undefined;
    return {
      tag: 'group',
      attrs: { id: jid.split('@')[0] ?? jid, subject: group.subject, creation: '1700000000', creator: this.phone.pn, s_t: '1700000000' },
      content: [
        ...group.members.map((m) => ({ tag: 'participant', attrs: { jid: m.pn, ...(m === this.phone ? { type: 'superadmin' } : {}) } })),
        ...(group.ephemeral ? [{ tag: 'ephemeral', attrs: { expiration: String(group.ephemeral) } }] : []),
      ],
    };
  }

  private async defaultAnswer(iq: BinaryNode, conn: ScriptedConnection): Promise<BinaryNode> {
    const result = (content?: BinaryNode[]): BinaryNode => ({ tag: 'iq', attrs: { from: S_WHATSAPP_NET, type: 'result', id: iq.attrs.id ?? '' }, ...(content ? { content } : {}) });
    const first = Array.isArray(iq.content) ? (iq.content[0] as BinaryNode | undefined) : undefined;
    const xmlns = iq.attrs.xmlns;
    if (xmlns === 'encrypt' && first?.tag === 'count') {
      const device = this.deviceOf(conn);
      const count = device?.uploads.reduce((n, b) => n + b.preKeys.length, 0) ?? 0;
      return result([{ tag: 'count', attrs: { value: String(count) } }]);
    }
    if (xmlns === 'encrypt' && iq.attrs.type === 'set' && getBinaryNodeChild(iq, 'list')) {
      this.deviceOf(conn)?.uploads.push(bundleOfUpload(iq));
      return result();
    }
    if (xmlns === 'encrypt' && first?.tag === 'digest') return result([{ tag: 'digest', attrs: {} }]);
    if (xmlns === 'encrypt' && first?.tag === 'key') {
      const users = getBinaryNodeChildren(first, 'user');
      const bundles = await Promise.all(users.map((u) => this.peerOf(u.attrs.jid ?? '')?.bundleNode(u.attrs.jid ?? '')));
      return result([{ tag: 'list', attrs: {}, content: bundles.filter((b): b is BinaryNode => !!b) }]);
    }
    if (xmlns === 'usync') return result([this.usyncAnswer(iq, conn)]);
    if (xmlns === 'w:g2' && first?.tag === 'participating') {
      const listed = [...this.groups].filter(([, g]) => !g.unlisted).map(([jid]) => jid);
      const groups = listed.map((jid) => this.groupNode(jid)).filter((g): g is BinaryNode => !!g);
      return result([{ tag: 'groups', attrs: {}, content: groups }]);
    }
    if (xmlns === 'w:g2' && first?.tag === 'query') {
      const group = this.groupNode(iq.attrs.to ?? '');
      return result(group ? [group] : [{ tag: 'error', attrs: { code: '404', text: 'item-not-found' } }]);
    }
    if (xmlns === 'privacy') return result([{ tag: 'privacy', attrs: {}, content: [{ tag: 'category', attrs: { name: 'readreceipts', value: 'all' } }] }]);
    return result();
  }

  private peerOf(jid: string): Peer | undefined {
    return this.peers.get(jid.split('@')[0]?.split(':')[0] ?? '');
  }

  /** Contact checks and device lists: every peer exists with its phone (device 0). */
  private usyncAnswer(iq: BinaryNode, conn: ScriptedConnection): BinaryNode {
    const usync = getBinaryNodeChild(iq, 'usync');
    const query = getBinaryNodeChild(usync, 'query');
    const asked = new Set((Array.isArray(query?.content) ? query.content : []).map((n) => (n as BinaryNode).tag));
    const users = getBinaryNodeChildren(getBinaryNodeChild(usync, 'list'), 'user');
    const device = this.deviceOf(conn);
    const list: BinaryNode[] = [];
    for (const user of users) {
      const contact = getBinaryNodeChild(user, 'contact');
      const phone = contact?.content ? Buffer.from(contact.content as Uint8Array).toString().replace('+', '') : undefined;
      const jid = user.attrs.jid ?? (phone ? `${phone}@${S_WHATSAPP_NET}` : '');
      const peer = this.peerOf(jid);
      if (!peer) {
        if (asked.has('contact')) list.push({ tag: 'user', attrs: { jid }, content: [{ tag: 'contact', attrs: { type: 'out' } }] });
        continue;
      }
      const content: BinaryNode[] = [];
      if (asked.has('contact')) content.push({ tag: 'contact', attrs: { type: 'in' } });
      if (asked.has('devices')) {
        const ids = [0, ...(device && peer === this.phone ? [device.device] : [])];
        content.push({
          tag: 'devices',
          attrs: {},
          content: [{ tag: 'device-list', attrs: {}, content: ids.map((id) => ({ tag: 'device', attrs: { id: String(id), ...(id ? { 'key-index': '1' } : {}) } })) }],
        });
      }
      // Every account has a LID now; the client maps phone numbers to it before fetching keys.
      if (asked.has('lid')) content.push({ tag: 'lid', attrs: { val: peer.lid } });
      list.push({ tag: 'user', attrs: { jid }, content });
    }
    return { tag: 'usync', attrs: {}, content: [{ tag: 'list', attrs: {}, content: list }] };
  }

  /** Called once a connection's handshake is done. */
  async handshake(conn: ScriptedConnection): Promise<void> {
    await this.onHandshake(conn);
  }

  async stop(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
