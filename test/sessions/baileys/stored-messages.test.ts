import type { UserFacingSocketConfig } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { sessionStream, type NetworkMessage, type SessionEvent } from '../../../src/domain/session/events.js';
import { openBackends, type Backends } from '../../../src/infra/backends.js';
import { loadConfig } from '../../../src/infra/config/config.js';
import type { EventStore } from '../../../src/infra/eventstore/port.js';
import { messagesProjection } from '../../../src/projections/messages/messages-projection.js';
import { StoredMessages } from '../../../src/projections/messages/stored-messages.js';
import { ProjectionRunner } from '../../../src/projections/runner.js';
import { BaileysNetwork } from '../../../src/sessions/baileys/baileys-network.js';
import type { BaileysSocket } from '../../../src/sessions/baileys/socket.js';
import type { AuthStateStore } from '../../../src/sessions/port.js';
import { testBackendsFor } from '../../support/gateway.js';
import { useGateway } from '../../support/use-gateway.js';
import { pairedInstance } from '../../support/chats.js';
import { newPhone, waitFor, waitForEvent } from '../../support/sandbox.js';

/** Baileys' getMessage as the driver gives it to the socket, answering from `storedMessage`. */
async function getMessageWith(storedMessage: (id: string, chat?: string) => Promise<NetworkMessage | undefined>) {
  let config: UserFacingSocketConfig | undefined;
  const network = new BaileysNetwork({
    version: [2, 3000, 1],
    logger: pino({ level: 'silent' }),
    // Only the options matter here: the socket is never used.
    makeSocket: (c) => ((config = c), { ev: { process: () => () => undefined } } as unknown as BaileysSocket),
  });
  const auth: AuthStateStore = { get: async () => ({}), set: async () => undefined, clear: async () => undefined };
  await network.connect({
    instanceId: 'I',
    accountId: 'A',
    auth,
    handlers: { onEvents: async () => undefined, onQr: () => undefined, onClose: () => undefined },
    storedMessage,
  });
  if (!config?.getMessage) throw new Error('no getMessage');
  return config.getMessage;
}

/**
 * A recipient's retry request (getMessage) is answered from the stored session events: messages
 * sent through the API (HTTP in, MessageSent stored) come back as the protobuf Baileys re-sends.
 */
describe('getMessage from the stored session events', function () {
  this.timeout(20_000);
  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });

  it('answers a text and a reply (with its quote) sent through the API, long after Baileys forgot them; nothing for unknown ids', async () => {
    const me = await pairedInstance(t, owner);
    const peer = await newPhone(t.api, owner);
    const send = async (body: Record<string, unknown>) => {
      const res = await t.api('POST', `/instances/${me.id}/chat/send/text`, { token: owner.jwt, body: { phone: peer.phone, ...body } });
      expect(res.status, res.text).to.equal(200);
      return res.body.data.message_id as string;
    };
    const first = await send({ message: 'the original' });
    for (let i = 0; i < 3; i++) await send({ message: `filler ${i}` });
    const reply = await send({ message: 'a reply', reply_to: first });

    const stored = new StoredMessages(t.gateway.docs, t.gateway.events);
    const getMessage = await getMessageWith((id, chat) => stored.find(me.id, id, chat));
    expect(await getMessage({ remoteJid: peer.jid, id: first, fromMe: true })).to.deep.equal({ conversation: 'the original' });
    expect(await getMessage({ remoteJid: peer.jid, id: reply, fromMe: true })).to.deep.equal({ extendedTextMessage: { text: 'a reply', contextInfo: { stanzaId: first } } });
    expect(await getMessage({ remoteJid: peer.jid, id: 'NOSUCH', fromMe: true })).to.equal(undefined);
    // The id of another chat's message is not this chat's.
    expect(await getMessage({ remoteJid: '5511900000999@s.whatsapp.net', id: first, fromMe: true })).to.equal(undefined);
    // A retry request is only ever for our own messages: a received one is not re-sent.
    const theirs = await t.api('POST', `/sandbox/phones/${peer.phone}/messages`, { token: owner.jwt, body: { to: me.phone, text: 'from them' } });
    await waitForEvent(t.gateway, me.id, (e) => e.type === 'MessageReceived' && e.data.message.id === theirs.body.message_id, 'their message');
    expect(await getMessage({ remoteJid: peer.jid, id: theirs.body.message_id, fromMe: false })).to.equal(undefined);
  });
});

/** Counts the stream reads a lookup makes. */
function counting(events: EventStore): EventStore & { reads: number } {
  const counted = Object.create(events) as EventStore & { reads: number };
  counted.reads = 0;
  counted.readStream = (...args) => (counted.reads++, events.readStream(...args));
  return counted;
}

describe('the messages model: stored messages by chat and id', function () {
  this.timeout(120_000);
  let dir: string;
  let backends: Backends;
  let runner: ProjectionRunner;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'message-index-'));
    backends = await openBackends(loadConfig({ DATA_DIR: dir, ...(await testBackendsFor(dir)) }));
    runner = new ProjectionRunner(backends.events, backends.docs, [messagesProjection], pino({ level: 'silent' }));
    await runner.start();
  });

  afterEach(async () => {
    await runner.stop();
    await backends.close();
    await rm(dir, { recursive: true, force: true });
  });

  const message = (id: string, chat: string, text: string, extra: Partial<NetworkMessage> = {}): NetworkMessage => ({
    id, chat, sender: chat, from_me: false, is_group: false, timestamp_s: 1_700_000_000, type: 'text', text, ...extra,
  });

  async function record(instanceId: string, events: SessionEvent[]): Promise<void> {
    const metadata = { occurredAt: new Date().toISOString(), instanceId, accountId: 'A' };
    for (let i = 0; i < events.length; i += 2000) {
      const chunk = events.slice(i, i + 2000).map((e) => ({ id: randomUUID(), type: e.type, data: { ...e.data }, metadata }));
      await backends.events.append(sessionStream(instanceId), chunk, 'any');
    }
  }

  it('tells two chats\' messages of the same id apart, finds a message behind 20,000 later events with one stream read, and a LID chat\'s by either jid', async () => {
    const alice = '5511988887777@s.whatsapp.net';
    const bob = '5511966665555@s.whatsapp.net';
    const bobLid = '300000000000003@lid';
    await record('I1', [{ type: 'MessageSent', data: { origin: 'api', message: message('SAME', alice, 'to Alice', { from_me: true }) } }]);
    const filler: SessionEvent[] = Array.from({ length: 20_100 }, (_, n) => ({ type: 'PresenceUpdated', data: { jid: alice, state: n % 2 ? 'available' : 'unavailable' } }));
    await record('I1', filler);
    await record('I1', [{ type: 'MessageReceived', data: { upsert: 'notify', message: message('SAME', bob, 'from Bob', { chat_lid: bobLid, sender_lid: bobLid }) } }]);
    const head = await backends.events.headPosition();
    await waitFor(() => runner.hasReached(head), 'the index caught up', 60_000);

    const events = counting(backends.events);
    const stored = new StoredMessages(backends.docs, events);
    expect((await stored.find('I1', 'SAME', alice))?.text).to.equal('to Alice');
    expect(events.reads, 'one read at the revision the messages model names').to.equal(1);
    expect((await stored.find('I1', 'SAME', bob))?.text).to.equal('from Bob');
    expect((await stored.find('I1', 'SAME', bobLid))?.text).to.equal('from Bob');
    expect(await stored.find('I1', 'SAME', '5511900000999@s.whatsapp.net')).to.equal(undefined);
    expect(await stored.find('I2', 'SAME', alice)).to.equal(undefined);
  });

  it('answers a retry request for a reply with its quote (author and content), by the chat Baileys names', async () => {
    const alice = '5511988887777@s.whatsapp.net';
    const me = '5511900000001@s.whatsapp.net';
    const reply = message('R1', alice, 'a reply', { from_me: true, sender: me, reply_to: 'Q1', quoted: { sender: alice, text: 'the question' } });
    await record('I1', [{ type: 'MessageSent', data: { origin: 'api', message: reply } }]);
    const head = await backends.events.headPosition();
    await waitFor(() => runner.hasReached(head), 'the index caught up');
    const stored = new StoredMessages(backends.docs, backends.events);
    const getMessage = await getMessageWith((id, chat) => stored.find('I1', id, chat));
    expect(await getMessage({ remoteJid: `5511988887777:3@s.whatsapp.net`, id: 'R1', fromMe: true })).to.deep.equal({
      extendedTextMessage: { text: 'a reply', contextInfo: { stanzaId: 'Q1', participant: alice, quotedMessage: { conversation: 'the question' } } },
    });
  });
});
