import { Boom } from '@hapi/boom';
import {
  DisconnectReason,
  proto,
  initAuthCreds,
  type AnyMessageContent,
  type BaileysEventMap,
  type ConnectionState,
  type GroupMetadata,
  type UserFacingSocketConfig,
  type WAMessage,
  type WAMessageKey,
} from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { pino } from 'pino';
import type { NetworkMessage, DisconnectReason as OurReason, SessionEvent } from '../../../src/domain/session/events.js';
import { DomainError } from '../../../src/domain/errors.js';
import { BaileysNetwork } from '../../../src/sessions/baileys/baileys-network.js';
import { BoundedCache } from '../../../src/sessions/baileys/bounded-cache.js';
import { BUTTONS_FALLBACK } from '../../../src/sessions/baileys/buttons-fallback.js';
import type { AccountCalls, BaileysSocket } from '../../../src/sessions/baileys/socket.js';
import { NotConnectedError, type AuthStateStore, type ConnectionHandlers, type NetworkConnection } from '../../../src/sessions/port.js';
import { ALICE_LID, ALICE_PN, BOB_PN, expectValid, GROUP, ME, ME_LID, ME_PN, T0 } from './support.js';

/**
 * The driver's wiring, with a fake socket in place of Baileys' (no network: the live connection
 * is not what this tests). The fake behaves as Baileys' socket does where it matters here: its
 * end() emits the close to whoever still listens, buffered events are released by flush(), and
 * emissions go only to the current `ev.process` subscriber.
 */
// The account's calls are tested against Baileys' own socket (test/sessions/baileys/account-operations.test.ts).
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
interface FakeSocket extends Pick<BaileysSocket, AccountCalls> {}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
class FakeSocket implements BaileysSocket {
  user: BaileysSocket['user'] = undefined;
  readonly authState: BaileysSocket['authState'] = { creds: initAuthCreds() };
  readonly sent: { jid: string; content: AnyMessageContent }[] = [];
  buffered: Partial<BaileysEventMap> | undefined;
  private listener: ((batch: Partial<BaileysEventMap>) => void | Promise<void>) | undefined;
  private ended = false;

  constructor(
    readonly name: string,
    private readonly log: string[],
    readonly config: UserFacingSocketConfig,
  ) {}

  readonly ev: BaileysSocket['ev'] = {
    process: (handler) => {
      this.listener = handler;
      return () => {
        this.log.push(`${this.name}.unsubscribe`);
        this.listener = undefined;
      };
    },
    isBuffering: () => this.buffered !== undefined,
    flush: () => {
      const batch = this.buffered;
      if (!batch) return false;
      this.log.push(`${this.name}.flush`);
      this.buffered = undefined;
      this.emit(batch);
      return true;
    },
  };

  /** Delivers a buffer emission, as Baileys' event buffer does; false when nobody listens. */
  emit(batch: Partial<BaileysEventMap>): boolean {
    if (!this.listener) return false;
    void this.listener(batch);
    return true;
  }

  open(): void {
    this.user = { id: ME, lid: ME_LID, name: 'My Shop' };
    this.authState.creds.registered = true;
    this.emit({ 'connection.update': { connection: 'open' } });
  }

  close(statusCode: number, message: string): void {
    const update: Partial<ConnectionState> = { connection: 'close', lastDisconnect: { error: new Boom(message, { statusCode }), date: new Date(0) } };
    this.emit({ 'connection.update': update });
  }

  readonly end = async (error: Error | undefined): Promise<void> => {
    this.log.push(`${this.name}.end`);
    if (this.ended) return;
    this.ended = true;
    // Baileys' end() reports the close to the listeners still attached.
    this.emit({ 'connection.update': { connection: 'close', lastDisconnect: { error, date: new Date(0) } } });
  };

  readonly logout = async (): Promise<void> => {
    this.log.push(`${this.name}.logout`);
  };

  readonly sendMessage = async (jid: string, content: AnyMessageContent): Promise<WAMessage | undefined> => {
    this.sent.push({ jid, content });
    const text = 'text' in content && typeof content.text === 'string' ? content.text : '';
    return { key: { remoteJid: jid, fromMe: true, id: `SENT${this.sent.length}` }, message: { extendedTextMessage: { text } }, messageTimestamp: T0 };
  };

  readonly groupFetchAllParticipating = async (): Promise<{ [jid: string]: GroupMetadata }> => ({});
  readonly groupMetadata = async (jid: string): Promise<GroupMetadata> => ({ id: jid, subject: 'Team', owner: undefined, participants: [] });
  readonly groupInviteCode = async (): Promise<string | undefined> => 'INVITE';
  readonly fetchStatus = async () => undefined;
  readonly profilePictureUrl = async () => undefined;
  readonly getBusinessProfile = async () => undefined;
  readonly waitForSocketOpen = async (): Promise<void> => undefined;
  /** The network's directory: Alice, and a Brazilian mobile registered without its ninth digit. */
  readonly lookups: string[][] = [];
  readonly onWhatsApp = async (...jids: string[]): Promise<{ jid: string; exists: boolean }[]> => {
    this.lookups.push(jids);
    const known = [ALICE_PN, '552187654321@s.whatsapp.net'];
    return jids.filter((j) => known.includes(j)).map((jid) => ({ jid, exists: true }));
  };
  readonly requestPairingCode = async (): Promise<string> => 'ABCD1234';
  readonly readMessages = async (keys: WAMessageKey[]): Promise<void> => {
    this.log.push(`${this.name}.read ${keys.map((k) => k.id).join(',')}`);
  };
  /** Refusals queued for the next chat actions, as Baileys refuses before the app-state key exists. */
  readonly chatModifyRefusals: Error[] = [];
  readonly chatModify = async (): Promise<void> => {
    this.log.push(`${this.name}.chatModify`);
    const refusal = this.chatModifyRefusals.shift();
    if (refusal) throw refusal;
  };
  readonly reuploads: WAMessage[] = [];
  /** The phone uploads the media again: same keys, a new path. */
  readonly updateMediaMessage = async (message: WAMessage): Promise<WAMessage> => {
    this.reuploads.push(message);
    const image = message.message?.imageMessage;
    return { ...message, message: { imageMessage: { ...image, directPath: '/v/t62.7118-24/fresh.enc', url: 'https://mmg.whatsapp.net/v/t62.7118-24/fresh.enc' } } };
  };
  readonly presenceSubscribe = async (jid: string): Promise<void> => {
    this.log.push(`${this.name}.presenceSubscribe ${jid}`);
  };
  readonly sendPresenceUpdate = async (type: string): Promise<void> => {
    this.log.push(`${this.name}.presence ${type}`);
  };
  readonly rejectCall = async (): Promise<void> => undefined;
  readonly relayed: { jid: string; message: WAMessage['message'] }[] = [];
  readonly relayMessage = async (jid: string, message: NonNullable<WAMessage['message']>, options: { messageId?: string | null }): Promise<string> => {
    this.relayed.push({ jid, message });
    return options.messageId ?? 'RELAYED';
  };
  readonly waUploadToServer: BaileysSocket['waUploadToServer'] = async () => ({ mediaUrl: 'https://mmg.whatsapp.net/v/t62/up.enc', directPath: '/v/t62/up.enc' });
}

/** Credentials in memory: this test is about the wiring, persistence has its own test. */
function memoryAuth(): AuthStateStore & { writes: Record<string, Record<string, unknown | null>>[] } {
  const data = new Map<string, unknown>();
  const writes: Record<string, Record<string, unknown | null>>[] = [];
  return {
    writes,
    async get(type, ids) {
      return Object.fromEntries(ids.flatMap((id) => (data.has(`${type}/${id}`) ? [[id, data.get(`${type}/${id}`)]] : [])));
    },
    async set(set) {
      writes.push(set);
      for (const [type, values] of Object.entries(set)) for (const [id, v] of Object.entries(values)) v === null ? data.delete(`${type}/${id}`) : data.set(`${type}/${id}`, v);
    },
    async clear() {
      data.clear();
    },
  };
}

async function until(what: string, condition: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe('BaileysNetwork wiring (fake socket)', () => {
  let log: string[];
  let sockets: FakeSocket[];
  let network: BaileysNetwork;
  let events: SessionEvent[];
  let closes: { reason: OurReason; statusCode?: number }[];
  let qrs: string[];
  let calls: { id: string; from: string }[];
  let auth: ReturnType<typeof memoryAuth>;

  const handlers: ConnectionHandlers = {
    onEvents: async (batch) => {
      expectValid(batch);
      log.push(`events ${batch.map((e) => e.type).join(',')}`);
      events.push(...batch);
    },
    onQr: (qr) => qrs.push(qr),
    onClose: (close) => {
      log.push(`onClose ${close.reason}`);
      closes.push(close);
    },
    onCall: (call) => calls.push(call),
  };

  const connect = (instanceId = 'I1'): Promise<NetworkConnection> => network.connect({ instanceId, accountId: 'A1', auth, handlers });
  const socket = (i: number): FakeSocket => {
    const s = sockets[i];
    if (!s) throw new Error(`no socket ${i}`);
    return s;
  };

  beforeEach(() => {
    log = [];
    sockets = [];
    events = [];
    closes = [];
    qrs = [];
    calls = [];
    auth = memoryAuth();
    network = new BaileysNetwork({
      version: [2, 3000, 1_027_934_701],
      logger: pino({ level: 'silent' }),
      makeSocket: (config) => {
        const sock = new FakeSocket(`sock${sockets.length + 1}`, log, config);
        sockets.push(sock);
        return sock;
      },
    });
  });

  it('announces the configured WhatsApp version and turns off what the gateway does itself', async () => {
    await connect();
    const { config } = socket(0);
    expect(config.version).to.deep.equal([2, 3000, 1_027_934_701]);
    expect(config.emitOwnEvents).to.equal(false);
    expect(config.markOnlineOnConnect).to.equal(false);
  });

  it('asks for the recent history only (never a full sync), and drops status posts and channels unless asked', async () => {
    await connect();
    const { config } = socket(0);
    expect(config.syncFullHistory).to.equal(false);
    const Sync = proto.HistorySync.HistorySyncType;
    expect(config.shouldSyncHistoryMessage?.({ syncType: Sync.RECENT })).to.equal(true);
    expect(config.shouldSyncHistoryMessage?.({ syncType: Sync.INITIAL_BOOTSTRAP })).to.equal(true);
    expect(config.shouldSyncHistoryMessage?.({ syncType: Sync.FULL })).to.equal(false);
    expect(config.shouldIgnoreJid?.('status@broadcast')).to.equal(true);
    expect(config.shouldIgnoreJid?.('120363000000000777@newsletter')).to.equal(true);
    expect(config.shouldIgnoreJid?.(ALICE_PN)).to.equal(false);

    let other: UserFacingSocketConfig | undefined;
    const none = new BaileysNetwork({
      version: [2, 3000, 1],
      logger: pino({ level: 'silent' }),
      historySyncDays: 0,
      receiveStatus: true,
      makeSocket: (c) => ((other = c), new FakeSocket('x', log, c)),
    });
    await none.connect({ instanceId: 'I9', accountId: 'A1', auth, handlers });
    // HISTORY_SYNC_DAYS=0: no history at all; RECEIVE_STATUS=true: nothing ignored.
    expect(other?.shouldSyncHistoryMessage?.({ syncType: Sync.RECENT })).to.equal(false);
    expect(other?.shouldIgnoreJid).to.equal(undefined);
  });

  it('keeps HISTORY_SYNC_DAYS of the synced messages, and every synced chat', async () => {
    network = new BaileysNetwork({
      version: [2, 3000, 1_027_934_701],
      logger: pino({ level: 'silent' }),
      historySyncDays: 2,
      makeSocket: (config) => {
        const sock = new FakeSocket(`sock${sockets.length + 1}`, log, config);
        sockets.push(sock);
        return sock;
      },
    });
    await connect();
    socket(0).open();
    const now = Math.floor(Date.now() / 1000);
    const at = (id: string, ageDays: number): WAMessage => ({ key: { remoteJid: ALICE_PN, fromMe: false, id }, message: { conversation: id }, messageTimestamp: now - ageDays * 86_400 });
    socket(0).emit({
      'messaging-history.set': { chats: [{ id: ALICE_PN, conversationTimestamp: now }], contacts: [], messages: [at('OLD', 5), at('NEW', 1)], syncType: proto.HistorySync.HistorySyncType.RECENT },
    });
    await until('the history', () => events.some((e) => e.type === 'HistorySyncReceived'));
    const history = events.find((e) => e.type === 'HistorySyncReceived');
    expect(history?.type === 'HistorySyncReceived' && history.data.messages.map((m) => m.id)).to.deep.equal(['NEW']);
    expect(history?.type === 'HistorySyncReceived' && history.data.chats.map((c) => c.jid)).to.deep.equal([ALICE_PN]);
  });

  it('passes bounded caches for every cache option Baileys would otherwise make per socket', async () => {
    await connect();
    const { config } = socket(0);
    for (const cache of [config.msgRetryCounterCache, config.userDevicesCache, config.callOfferCache, config.placeholderResendCache]) {
      expect(cache).to.be.instanceOf(BoundedCache);
    }
  });

  it('on a network close: releases buffered events, detaches, ends the socket, then reports the close', async () => {
    await connect();
    const sock = socket(0);
    sock.emit({ 'connection.update': { qr: 'QR-1' } });
    expect(qrs).to.deep.equal(['QR-1']);
    sock.open();
    // A message Baileys decrypted but still holds in its buffer when the connection drops.
    sock.buffered = { 'messages.upsert': { type: 'notify', messages: [{ key: { remoteJid: ALICE_PN, fromMe: false, id: 'LATE' }, message: { conversation: 'x' }, messageTimestamp: T0 }] } };
    sock.close(DisconnectReason.connectionLost, 'Connection was lost');
    await until('the close', () => closes.length > 0);

    // Everything the socket gave before the drop is stored before the manager hears of it; the
    // profile lookup still running when it dropped delivers nothing after the close.
    expect(log).to.deep.equal([
      'sock1.flush',
      'sock1.unsubscribe',
      'events SessionConnected',
      'events MessageReceived',
      'sock1.end',
      'onClose connection_lost',
    ]);
    expect(closes).to.deep.equal([{ reason: 'connection_lost', statusCode: 408 }]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(log.at(-1)).to.equal('onClose connection_lost');
    // Late emissions of the old socket reach nobody.
    expect(sock.emit({ 'messages.upsert': { type: 'notify', messages: [] } })).to.equal(false);
  });

  it('reuses the instance caches on the reconnect, and keeps other instances apart', async () => {
    await connect();
    const first = socket(0);
    first.open();
    const meta: GroupMetadata = { id: GROUP, subject: 'Team', owner: undefined, participants: [] };
    first.emit({ 'groups.upsert': [meta] });
    first.close(DisconnectReason.connectionClosed, 'Connection Terminated');
    await until('the close', () => closes.length > 0);

    await connect();
    const second = socket(1);
    expect(log.indexOf('sock1.end')).to.be.lessThan(log.indexOf('onClose connection_closed'));
    for (const option of ['msgRetryCounterCache', 'userDevicesCache', 'callOfferCache', 'placeholderResendCache'] as const) {
      expect(second.config[option], option).to.equal(first.config[option]);
    }
    // Group metadata learned on the first socket serves the second one's sends.
    expect(await second.config.cachedGroupMetadata?.(GROUP)).to.deep.equal(meta);

    await connect('I2');
    expect(socket(2).config.msgRetryCounterCache).to.not.equal(first.config.msgRetryCounterCache);
  });

  it('a deliberate end (restart, shutdown) detaches before ending, so no close is reported', async () => {
    const connection = await connect();
    const sock = socket(0);
    sock.open();
    await connection.end();
    expect(log.filter((l) => l.startsWith('sock1'))).to.deep.equal(['sock1.unsubscribe', 'sock1.end']);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(closes).to.deep.equal([]);
    await expectRejected(connection.sendText(ALICE_PN, 'x'), NotConnectedError);
  });

  it('forgets the instance caches once the account is unlinked (logged out from the phone, or by us)', async () => {
    await connect();
    socket(0).open();
    socket(0).close(DisconnectReason.loggedOut, 'Connection Failure');
    await until('the close', () => closes.length > 0);
    expect(closes).to.deep.equal([{ reason: 'logged_out', statusCode: 401 }]);
    const afterPhone = await connect();
    expect(socket(1).config.msgRetryCounterCache).to.not.equal(socket(0).config.msgRetryCounterCache);

    socket(1).open();
    await afterPhone.logout();
    expect(log.filter((l) => l.startsWith('sock2'))).to.deep.equal(['sock2.unsubscribe', 'sock2.logout', 'sock2.end']);
    await connect();
    expect(socket(2).config.msgRetryCounterCache).to.not.equal(socket(1).config.msgRetryCounterCache);
  });

  it('reports a refused client version (405) as client_outdated, naming the version and WHATSAPP_VERSION', async () => {
    await connect();
    socket(0).close(405, 'Connection Failure');
    await until('the close', () => closes.length > 0);
    expect(closes).to.deep.equal([
      {
        reason: 'client_outdated',
        statusCode: 405,
        // A fixed version (no source to fetch a newer one from): the operator must set one.
        message:
          'WhatsApp refused client version 2.3000.1027934701 (405) and no newer version could be fetched from web.whatsapp.com: ' +
          'set WHATSAPP_VERSION to the current WhatsApp Web version, restart the gateway, then pair again (or restart the session)',
      },
    ]);
  });

  it('sends buttons as a numbered text and says so, never dropping them', async () => {
    const connection = await connect();
    socket(0).open();
    const { message, fallback } = await connection.sendButtons(ALICE_PN, {
      text: 'Pick one',
      footer: 'shop',
      buttons: [
        { id: 'y', text: 'Yes' },
        { id: 'n', text: 'No' },
      ],
    });
    expect(socket(0).sent).to.deep.equal([{ jid: ALICE_PN, content: { text: 'Pick one\n\n1. Yes\n2. No\n\n_shop_' } }]);
    expect(fallback).to.equal(BUTTONS_FALLBACK);
    expect(message).to.include({ id: 'SENT1', chat: ALICE_PN, from_me: true, type: 'text', text: 'Pick one\n\n1. Yes\n2. No\n\n_shop_' });
  });

  it('checks a number on the network before the first send to it, trying the Brazilian ninth digit, and caches the answer', async () => {
    const connection = await connect();
    socket(0).open();
    const error = await connection.sendText('5511977776666', 'hello').then(() => undefined, (e: unknown) => e);
    expect(error).to.be.instanceOf(DomainError);
    expect(error).to.include({ type: 'invalid_input' });
    expect((error as Error).message).to.match(/not on WhatsApp/);
    expect(socket(0).sent).to.deep.equal([]);

    // Written with the ninth digit, known to the network without it.
    const sent = await connection.sendText('5521987654321', 'oi');
    expect(socket(0).sent.map((s) => s.jid)).to.deep.equal(['552187654321@s.whatsapp.net']);
    expect(sent.chat).to.equal('552187654321@s.whatsapp.net');
    expect(socket(0).lookups.at(-1)).to.deep.equal(['5521987654321@s.whatsapp.net', '552187654321@s.whatsapp.net']);
    const asked = socket(0).lookups.length;
    await connection.sendText('5521987654321@s.whatsapp.net', 'again');
    expect(socket(0).lookups.length, 'the second send asks nobody').to.equal(asked);
    expect(await connection.checkNumber('552187654321')).to.deep.equal({ exists: true, jid: '552187654321@s.whatsapp.net' });
    // Groups are not numbers.
    await connection.sendText(GROUP, 'team');
    expect(socket(0).sent.at(-1)!.jid).to.equal(GROUP);
  });

  it('subscribes once to the presence of the people it talks with, and announces itself only as configured', async () => {
    const connection = await connect();
    socket(0).open();
    socket(0).emit({
      'messages.upsert': {
        type: 'notify',
        messages: [
          { key: { remoteJid: ALICE_PN, fromMe: false, id: 'P1' }, message: { conversation: 'a' }, messageTimestamp: T0 },
          { key: { remoteJid: ALICE_PN, fromMe: false, id: 'P2' }, message: { conversation: 'b' }, messageTimestamp: T0 },
          { key: { remoteJid: GROUP, participant: ALICE_PN, fromMe: false, id: 'P3' }, message: { conversation: 'c' }, messageTimestamp: T0 },
        ],
      },
    });
    // Emissions are translated in the delivery queue, in order.
    await until('the messages translated', () => log.includes(`sock1.presenceSubscribe ${ALICE_PN}`));
    await connection.sendText('5521987654321', 'hello');
    expect(log.filter((l) => l.includes('presence'))).to.deep.equal([`sock1.presenceSubscribe ${ALICE_PN}`, 'sock1.presenceSubscribe 552187654321@s.whatsapp.net']);

    network = new BaileysNetwork({ version: [2, 3000, 1], logger: pino({ level: 'silent' }), presence: 'available', makeSocket: (c) => { const sock = new FakeSocket('on', log, c); sockets.push(sock); return sock; } });
    await connect('I2');
    sockets.at(-1)!.open();
    expect(log).to.include('on.presence available');
  });

  it('retries a chat action once the phone has shared its app-state keys (right after pairing)', async () => {
    network = new BaileysNetwork({ version: [2, 3000, 1], logger: pino({ level: 'silent' }), appStateKeyWaitMs: 200, makeSocket: (c) => { const sock = new FakeSocket(`sock${sockets.length + 1}`, log, c); sockets.push(sock); return sock; } });
    const connection = await connect();
    socket(0).open();
    socket(0).chatModifyRefusals.push(new Boom('App state key not present!', { statusCode: 400 }));
    const archived = connection.modifyChat(ALICE_PN, { type: 'archive', archived: true });
    await until('the first attempt', () => log.includes('sock1.chatModify'));
    socket(0).emit({ 'creds.update': { myAppStateKeyId: 'AAAAAB' } });
    await archived;
    expect(log.filter((l) => l === 'sock1.chatModify')).to.have.length(2);

    // Keys that never come: a clear refusal after the wait, not a hang.
    socket(0).chatModifyRefusals.push(new Boom('myAppStateKey ("AAAAAB") not present', { data: { isMissingKey: true } }));
    const error = await connection.modifyChat(ALICE_PN, { type: 'pin', pinned: true }).then(() => undefined, (e: unknown) => e);
    expect((error as Error).message).to.match(/not shared its chat-sync keys yet/);
    // Other refusals are not waited on.
    socket(0).chatModifyRefusals.push(new Error('bad request'));
    const other = await connection.modifyChat(ALICE_PN, { type: 'pin', pinned: true }).then(() => undefined, (e: unknown) => e);
    expect((other as Error).message).to.equal('bad request');
  });

  it('quotes a reply with the quoted message\'s author and content from the stored events', async () => {
    const stored: Record<string, NetworkMessage> = {
      MINE: { id: 'MINE', chat: ALICE_PN, sender: ME_PN, from_me: true, is_group: false, timestamp_s: T0, type: 'text', text: 'our question' },
      THEIRS: { id: 'THEIRS', chat: GROUP, sender: BOB_PN, from_me: false, is_group: true, timestamp_s: T0, type: 'text', text: 'their idea' },
    };
    const connection = await network.connect({ instanceId: 'I1', accountId: 'A1', auth, handlers, storedMessage: async (id) => stored[id] });
    socket(0).open();
    await connection.sendText(ALICE_PN, 'answering myself', { replyTo: 'MINE' });
    await connection.sendText(GROUP, 'good idea', { replyTo: 'THEIRS' });
    await connection.sendText(ALICE_PN, 'old one', { replyTo: 'FORGOTTEN' });
    const contexts = socket(0).sent.map((s) => ('contextInfo' in s.content ? s.content.contextInfo : undefined));
    // Ours in a 1:1 chat is ours, not the peer's; content travels with the quote.
    expect(contexts[0]).to.deep.equal({ stanzaId: 'MINE', participant: ME_PN, quotedMessage: { conversation: 'our question' } });
    expect(contexts[1]).to.deep.equal({ stanzaId: 'THEIRS', participant: BOB_PN, quotedMessage: { conversation: 'their idea' } });
    // Past retention: by id, attributed to the peer as before.
    expect(contexts[2]).to.deep.equal({ stanzaId: 'FORGOTTEN', participant: ALICE_PN, quotedMessage: { conversation: '' } });
  });

  it('asks the phone to upload expired media again (updateMediaMessage) and answers the new location', async () => {
    const connection = await connect();
    socket(0).open();
    const media = { kind: 'image' as const, url: 'https://mmg.whatsapp.net/v/t62.7118-24/old.enc', direct_path: '/v/t62.7118-24/old.enc', media_key: Buffer.alloc(32, 1).toString('base64'), file_sha256: Buffer.alloc(32, 2).toString('base64'), file_length: 10, mimetype: 'image/jpeg' };
    const stored: NetworkMessage = { id: 'IMG1', chat: GROUP, sender: BOB_PN, sender_lid: '300000000000003@lid', from_me: false, is_group: true, timestamp_s: T0, type: 'media', media };
    const fresh = await connection.refreshMedia!(stored);
    expect(socket(0).reuploads[0]?.key).to.deep.equal({ remoteJid: GROUP, id: 'IMG1', fromMe: false, participant: '300000000000003@lid' });
    expect(fresh).to.include({ url: 'https://mmg.whatsapp.net/v/t62.7118-24/fresh.enc', direct_path: '/v/t62.7118-24/fresh.enc', media_key: media.media_key, kind: 'image' });
  });

  it('refuses to send before the connection is open', async () => {
    const connection = await connect();
    await expectRejected(connection.sendButtons(ALICE_PN, { buttons: [{ id: 'a', text: 'A' }] }), NotConnectedError);
    expect(socket(0).sent).to.deep.equal([]);
  });

  it('hands live call offers to the manager, not replayed offers or later call states', async () => {
    await connect();
    const call = { chatId: ALICE_PN, from: `${ALICE_PN.split('@')[0]}:2@s.whatsapp.net`, id: 'CALL1', date: new Date(0), offline: false, status: 'offer' as const };
    socket(0).emit({ call: [call, { ...call, id: 'CALL2', offline: true }, { ...call, id: 'CALL3', status: 'terminate' }] });
    expect(calls).to.deep.equal([{ id: 'CALL1', from: call.from }]);
  });

  it('persists creds on every creds.update, and reports a LID pair once per connection', async () => {
    await connect();
    const sock = socket(0);
    sock.open();
    sock.emit({ 'creds.update': { nextPreKeyId: 31 } });
    const lidMessage = (id: string): WAMessage => ({ key: { remoteJid: ALICE_LID, remoteJidAlt: ALICE_PN, fromMe: false, id }, message: { conversation: id }, messageTimestamp: T0 });
    sock.emit({ 'messages.upsert': { type: 'notify', messages: [lidMessage('L1')] } });
    sock.emit({ 'messages.upsert': { type: 'notify', messages: [lidMessage('L2')] } });
    await until('both messages', () => events.filter((e) => e.type === 'MessageReceived').length === 2);
    expect(events.filter((e) => e.type === 'LidMappingLearned')).to.deep.equal([{ type: 'LidMappingLearned', data: { pairs: [{ pn: ALICE_PN, lid: ALICE_LID }] } }]);
    await until('the creds write', () => auth.writes.some((w) => 'creds' in w));
  });
});

async function expectRejected(promise: Promise<unknown>, type: new (...args: never[]) => Error): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).to.be.instanceOf(type);
}
