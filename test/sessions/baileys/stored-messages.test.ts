import type { UserFacingSocketConfig } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { pino } from 'pino';
import { BaileysNetwork } from '../../../src/sessions/baileys/baileys-network.js';
import type { BaileysSocket } from '../../../src/sessions/baileys/socket.js';
import { storedSessionMessages } from '../../../src/sessions/baileys/stored-messages.js';
import type { AuthStateStore } from '../../../src/sessions/port.js';
import { useGateway } from '../../support/use-gateway.js';
import { pairedInstance } from '../../support/chats.js';
import { newPhone, waitForEvent } from '../../support/sandbox.js';

/**
 * A recipient's retry request (getMessage) is answered from the stored session events: messages
 * sent through the API (HTTP in, MessageSent stored) come back as the protobuf Baileys re-sends.
 */
describe('getMessage from the stored session events', function () {
  this.timeout(20_000);
  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });

  async function getMessageOf(instanceId: string): Promise<NonNullable<UserFacingSocketConfig['getMessage']>> {
    let config: UserFacingSocketConfig | undefined;
    const network = new BaileysNetwork({
      version: [2, 3000, 1],
      logger: pino({ level: 'silent' }),
      // Only the options matter here: the socket is never used.
      makeSocket: (c) => ((config = c), { ev: { process: () => () => undefined } } as unknown as BaileysSocket),
    });
    const lookup = storedSessionMessages(t.gateway.events);
    const auth: AuthStateStore = { get: async () => ({}), set: async () => undefined, clear: async () => undefined };
    await network.connect({
      instanceId,
      accountId: owner.accountId,
      auth,
      handlers: { onEvents: async () => undefined, onQr: () => undefined, onClose: () => undefined },
      storedMessage: (id) => lookup(instanceId, id),
    });
    if (!config?.getMessage) throw new Error('no getMessage');
    return config.getMessage;
  }

  it('answers a text and a reply sent through the API, long after Baileys forgot them; nothing for unknown ids', async () => {
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

    const getMessage = await getMessageOf(me.id);
    expect(await getMessage({ remoteJid: peer.jid, id: first, fromMe: true })).to.deep.equal({ conversation: 'the original' });
    expect(await getMessage({ remoteJid: peer.jid, id: reply, fromMe: true })).to.deep.equal({ extendedTextMessage: { text: 'a reply', contextInfo: { stanzaId: first } } });
    expect(await getMessage({ remoteJid: peer.jid, id: 'NOSUCH', fromMe: true })).to.equal(undefined);
    // A retry request is only ever for our own messages: a received one is not re-sent.
    const theirs = await t.api('POST', `/sandbox/phones/${peer.phone}/messages`, { token: owner.jwt, body: { to: me.phone, text: 'from them' } });
    await waitForEvent(t.gateway, me.id, (e) => e.type === 'MessageReceived' && e.data.message.id === theirs.body.message_id, 'their message');
    expect(await getMessage({ remoteJid: peer.jid, id: theirs.body.message_id, fromMe: false })).to.equal(undefined);
  });
});
