/* eslint-disable @typescript-eslint/no-explicit-any -- bodies are read field by field */
import { expect } from 'chai';
import { Value } from '@sinclair/typebox/value';
import '../../src/api/schemas/common.js';
import type { NetworkMessage } from '../../src/domain/session/events.js';
import { renderEvent, RENDERED_EVENT_TYPES } from '../../src/webhooks/bodies/render.js';
import { typedEvent } from '../../src/domain/recorded.js';
import { WebhookBodies, type WebhookType } from '../../src/webhooks/bodies/schemas.js';
import { webhookOpenApi } from '../../src/api/webhook-openapi.js';
import { buildOpenApi } from '../../src/api/openapi.js';

const base: NetworkMessage = {
  id: 'ABC123',
  chat: '5511988887777@s.whatsapp.net',
  sender: '5511988887777@s.whatsapp.net',
  from_me: false,
  is_group: false,
  push_name: 'Alice',
  timestamp_s: 1_700_000_000,
  type: 'text',
  text: 'hi',
};

const media = {
  url: 'https://mmg.whatsapp.net/v/t62/abc.enc',
  direct_path: '/v/t62/abc.enc',
  media_key: Buffer.alloc(32, 1).toString('base64'),
  file_enc_sha256: Buffer.alloc(32, 2).toString('base64'),
  file_sha256: Buffer.alloc(32, 3).toString('base64'),
  file_length: 12345,
  mimetype: 'image/jpeg',
};

/** Every stored event that becomes a webhook, with realistic data. */
const SAMPLES: [string, Record<string, unknown>][] = [
  ['MessageReceived', { message: base, upsert: 'notify' }],
  ['MessageReceived', { message: { ...base, type: 'media', text: undefined, media: { kind: 'image', ...media, caption: 'look', width: 10, height: 20 } }, upsert: 'notify' }],
  ['MessageReceived', { message: { ...base, type: 'media', media: { kind: 'video', ...media, mimetype: 'video/mp4', seconds: 3 } }, upsert: 'append' }],
  ['MessageReceived', { message: { ...base, type: 'media', media: { kind: 'audio', ...media, mimetype: 'audio/ogg', ptt: true } }, upsert: 'notify' }],
  ['MessageReceived', { message: { ...base, type: 'media', media: { kind: 'document', ...media, mimetype: 'application/pdf', file_name: 'a.pdf' } }, upsert: 'notify' }],
  ['MessageReceived', { message: { ...base, type: 'reaction', text: undefined, reaction: { message_id: 'X1', text: '👍' } }, upsert: 'notify' }],
  ['MessageReceived', { message: { ...base, reply_to: 'PREV1' }, upsert: 'notify' }],
  ['MessageSent', { message: { ...base, from_me: true, type: 'buttons', buttons: { footer: 'f', items: [{ id: 'b1', text: 'Yes' }] } }, origin: 'api' }],
  ['MessageSent', { message: { ...base, from_me: true }, origin: 'device' }],
  ['ReceiptReceived', { message_ids: ['A', 'B'], chat: base.chat, sender: base.sender, state: 'Read', timestamp_s: 1_700_000_001 }],
  ['SessionConnected', { jid: '5511@s.whatsapp.net', phone: '5511', push_name: 'Me', business: false }],
  ['SessionDisconnected', { reason: 'connection_lost', status_code: 428 }],
  ['SessionLoggedOut', { by: 'phone' }],
  ['PresenceUpdated', { jid: base.sender, state: 'unavailable', last_seen_s: 1_700_000_002 }],
  ['ChatPresenceUpdated', { chat: base.chat, sender: base.sender, state: 'recording' }],
  [
    'HistorySyncReceived',
    {
      sync_type: 'INITIAL_BOOTSTRAP',
      progress: 40,
      chats: [{ jid: base.chat, name: 'Alice', unread_count: 2, last_message_s: 1_700_000_000 }],
      messages: [base, { ...base, id: 'Z', chat: '120363@g.us' }],
    },
  ],
  ['GroupParticipantsAdded', { group: '120363@g.us', participants: [{ jid: 'p1@s.whatsapp.net', is_admin: false, is_super_admin: false }], by: base.sender }],
  ['GroupParticipantsRemoved', { group: '120363@g.us', participants: [{ jid: 'p1@s.whatsapp.net', is_admin: false, is_super_admin: false }] }],
  ['SendAbandoned', { message_id: 'Q1', reason: 'the network refused it: phone: 1@lid is not on WhatsApp', to: '1@lid', code: 400, timestamp_s: 1_700_000_002 }],
];

function body(storedType: string, data: Record<string, unknown>): any {
  // As stored and read back: the sample must be a valid stored event of its type.
  const raw = { id: 'e1', streamId: 'session-3EABC', revision: 0n, position: 0n, metadata: {}, created: new Date(0), type: storedType, data: JSON.parse(JSON.stringify(data)) };
  const typed = typedEvent(raw);
  if (!typed.ok) throw new Error(`${storedType}: ${typed.reason}`);
  const webhook = renderEvent(typed.event)!;
  return { id: `evt_${'a'.repeat(32)}`, type: webhook.type, instance_id: '3EABC', seq: 1, created_at: new Date(0).toISOString(), ...webhook.rendered };
}

describe('webhook bodies', () => {
  it('renders every mapped event into a body its TypeBox schema accepts', () => {
    const covered = new Set<string>();
    for (const [storedType, data] of SAMPLES) {
      const b = body(storedType, data);
      const schema = WebhookBodies[b.type as WebhookType];
      const errors = [...Value.Errors(schema, b)].map((e) => `${e.path} ${e.message}`);
      expect(errors, `${storedType} → ${b.type}`).to.deep.equal([]);
      covered.add(storedType);
    }
    expect([...covered].sort()).to.deep.equal([...RENDERED_EVENT_TYPES].sort());
  });

  it('rejects a body that breaks its schema (the check can fail)', () => {
    const b = body('MessageReceived', { message: base, upsert: 'notify' });
    delete b.event.Info.IsFromMe;
    expect(Value.Check(WebhookBodies.Message, b)).to.equal(false);
  });

  it('carries the media fields under the spec names, bytes in base64', () => {
    const b = body('MessageReceived', SAMPLES[1]![1]);
    expect(b.event.Info).to.include({ ID: 'ABC123', Type: 'media', MediaType: 'image', IsFromMe: false, PushName: 'Alice' });
    expect(b.event.Info.Timestamp).to.equal('2023-11-14T22:13:20.000Z');
    expect(b.event.Message.imageMessage).to.deep.equal({
      URL: media.url,
      mediaKey: media.media_key,
      directPath: media.direct_path,
      fileEncSha256: media.file_enc_sha256,
      fileSHA256: media.file_sha256,
      fileLength: 12345,
      mimetype: 'image/jpeg',
      caption: 'look',
      width: 10,
      height: 20,
    });
    expect(body('MessageReceived', SAMPLES[4]![1]).event.Message.documentMessage.fileName).to.equal('a.pdf');
    expect(body('MessageReceived', SAMPLES[3]![1]).event.Message.audioMessage.PTT).to.equal(true);
  });

  it('puts the receipt state beside the event, and maps the other events', () => {
    const receipt = body('ReceiptReceived', SAMPLES[9]![1]);
    expect(receipt.state).to.equal('Read');
    expect(receipt.event).to.deep.equal({ MessageIDs: ['A', 'B'], Chat: base.chat, Sender: base.sender, Timestamp: '2023-11-14T22:13:21.000Z' });
    expect(body('SessionLoggedOut', { by: 'phone' }).event).to.deep.equal({ Reason: 'logged_out', LoggedOut: true, By: 'phone' });
    expect(body('SessionDisconnected', SAMPLES[11]![1]).event).to.deep.equal({ Reason: 'connection_lost', LoggedOut: false, StatusCode: 428 });
    const history = body('HistorySyncReceived', SAMPLES[15]![1]).event;
    expect(history.Progress).to.equal(40);
    expect(history.Conversations).to.deep.equal([
      { ID: base.chat, Name: 'Alice', UnreadCount: 2, LastMessageTimestamp: '2023-11-14T22:13:20.000Z', MessageCount: 1 },
      { ID: '120363@g.us', MessageCount: 1 },
    ]);
    expect(body('GroupParticipantsRemoved', SAMPLES[17]![1]).event).to.deep.equal({ JID: '120363@g.us', Participants: ['p1@s.whatsapp.net'], Sender: '' });
    expect(body('MessageReceived', SAMPLES[6]![1]).event.Message).to.deep.equal({ extendedTextMessage: { text: 'hi', contextInfo: { stanzaID: 'PREV1' } } });
    expect(body('MessageReceived', SAMPLES[5]![1]).event.Message).to.deep.equal({ reactionMessage: { key: { ID: 'X1', remoteJID: base.chat }, text: '👍' } });
  });

  it('documents every body in the OpenAPI webhooks section', () => {
    const doc = buildOpenApi([], '1.0.0', webhookOpenApi()) as any;
    expect(Object.keys(doc.webhooks).sort()).to.deep.equal(Object.keys(WebhookBodies).sort());
    const message = doc.webhooks.Message.post.requestBody.content['application/json'].schema;
    expect(message.properties.event.properties.Message.properties.imageMessage.properties).to.have.keys(
      'URL', 'mediaKey', 'directPath', 'fileEncSha256', 'fileSHA256', 'fileLength', 'mimetype', 'caption', 'width', 'height', 'contextInfo',
    );
    expect(doc.webhooks.ReadReceipt.post.requestBody.content['application/json'].schema.required).to.include('state');
    // CONTRACT.md's body fields, in its order.
    expect(Object.keys(message.properties)).to.deep.equal(['id', 'type', 'instance_id', 'seq', 'created_at', 'event']);
    expect(Object.keys(doc.webhooks.ReadReceipt.post.requestBody.content['application/json'].schema.properties)).to.deep.equal(
      ['id', 'type', 'instance_id', 'seq', 'created_at', 'event', 'state'],
    );
  });
});
