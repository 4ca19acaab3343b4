import { Type, type TProperties } from '@sinclair/typebox';
import { Envelope } from './common.js';
import { MessageId, Phone } from './messaging.js';

/** CONTRACT.md, "Sending every kind of message": bodies, options and answers of the send routes. */

const common = {
  reply_to: Type.Optional({ ...MessageId, description: 'a message id of this chat: the send quotes it' }),
  mentions: Type.Optional(
    Type.Array(Type.String({ pattern: '^([0-9]{8,15}|[0-9]{5,20}(:[0-9]+)?@(s\\.whatsapp\\.net|lid))$' }), {
      maxItems: 256,
      description: 'phones or user jids mentioned (notified); in a group each must be a member',
    }),
  ),
  delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 20_000, description: 'show typing (recording, for a voice note) this long before sending' })),
  send_at: Type.Optional(
    Type.String({ format: 'date-time', description: 'send later: 10 s to 30 days ahead; answers status "scheduled"; durable across restarts and nodes' }),
  ),
};

const sendBody = <P extends TProperties>(props: P, example: Record<string, unknown>) =>
  Type.Object({ phone: Phone, ...props, ...common }, { additionalProperties: false, examples: [example] });

export const MediaSource = Type.Union(
  [
    Type.Object(
      {
        url: Type.String({ minLength: 1, maxLength: 4096, description: 'fetched under the outbound-safety rules, at most MEDIA_MAX_BYTES' }),
        mimetype: Type.Optional(Type.String({ maxLength: 255 })),
        file_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        data: Type.String({ minLength: 1, description: 'the file, base64' }),
        mimetype: Type.Optional(Type.String({ maxLength: 255 })),
        file_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      },
      { additionalProperties: false },
    ),
  ],
  { description: '{url} or {data}; the type is read from the bytes, never trusted' },
);

const P = '5511999990001';
const URL_EXAMPLE = { url: 'https://example.com/files/photo.jpg' };

export const SendTextBody = sendBody(
  { message: Type.String({ minLength: 1, maxLength: 65_536 }), link_preview: Type.Optional(Type.Boolean({ description: 'default true' })) },
  { phone: P, message: 'Hello! Your order https://shop.example.com/o/42 has shipped.' },
);
export const SendImageBody = sendBody(
  { media: MediaSource, caption: Type.Optional(Type.String({ maxLength: 4096 })), view_once: Type.Optional(Type.Boolean()) },
  { phone: P, media: URL_EXAMPLE, caption: 'Your receipt' },
);
export const SendVideoBody = sendBody(
  {
    media: MediaSource,
    caption: Type.Optional(Type.String({ maxLength: 4096 })),
    view_once: Type.Optional(Type.Boolean()),
    gif: Type.Optional(Type.Boolean({ description: 'plays looped and muted, as a GIF' })),
  },
  { phone: P, media: { url: 'https://example.com/files/demo.mp4' }, caption: 'How it works' },
);
export const SendAudioBody = sendBody(
  { media: MediaSource, voice: Type.Optional(Type.Boolean({ description: 'a voice note (default true): converted to OGG/Opus with duration and waveform' })) },
  { phone: P, media: { url: 'https://example.com/files/hello.mp3' }, voice: true },
);
export const SendDocumentBody = sendBody(
  { media: MediaSource, file_name: Type.String({ minLength: 1, maxLength: 255 }), caption: Type.Optional(Type.String({ maxLength: 4096 })) },
  { phone: P, media: { url: 'https://example.com/files/invoice.pdf' }, file_name: 'invoice-42.pdf' },
);
export const SendStickerBody = sendBody({ media: MediaSource }, { phone: P, media: { url: 'https://example.com/files/sticker.png' } });
export const SendLocationBody = sendBody(
  {
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    name: Type.Optional(Type.String({ maxLength: 1024 })),
    address: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { phone: P, latitude: -23.5614, longitude: -46.6559, name: 'Paulista store', address: 'Av. Paulista, 1000' },
);
export const ContactInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    phones: Type.Array(Type.String({ pattern: '^[0-9]{8,15}$' }), { minItems: 1, maxItems: 10 }),
    email: Type.Optional(Type.String({ format: 'email' })),
    organization: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: false },
);
export const SendContactBody = sendBody(
  { contacts: Type.Array(ContactInput, { minItems: 1, maxItems: 10 }) },
  { phone: P, contacts: [{ name: 'Support', phones: ['5511999990002'], email: 'help@example.com', organization: 'Example Ltd' }] },
);
export const SendPollBody = sendBody(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    options: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 2, maxItems: 12, uniqueItems: true }),
    selectable_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 12, description: 'default 1; 0 = any number' })),
  },
  { phone: P, name: 'Best delivery time?', options: ['Morning', 'Afternoon', 'Evening'], selectable_count: 1 },
);
export const SendListBody = sendBody(
  {
    text: Type.String({ minLength: 1, maxLength: 4096 }),
    button_text: Type.String({ minLength: 1, maxLength: 20 }),
    sections: Type.Array(
      Type.Object(
        {
          title: Type.String({ maxLength: 24 }),
          rows: Type.Array(
            Type.Object(
              { id: Type.String({ minLength: 1, maxLength: 200 }), title: Type.String({ minLength: 1, maxLength: 24 }), description: Type.Optional(Type.String({ maxLength: 72 })) },
              { additionalProperties: false },
            ),
            { minItems: 1, maxItems: 10 },
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 10 },
    ),
    title: Type.Optional(Type.String({ maxLength: 60 })),
    footer: Type.Optional(Type.String({ maxLength: 60 })),
  },
  { phone: P, text: 'Pick a plan', button_text: 'Plans', sections: [{ title: 'Monthly', rows: [{ id: 'basic', title: 'Basic', description: '$10' }, { id: 'pro', title: 'Pro' }] }] },
);

export const SendAnswer = Envelope(
  Type.Object({
    message_id: Type.String(),
    jid: Type.String({ description: 'the chat the network used (a LID chat answers the LID)' }),
    status: Type.Union([Type.Literal('sent'), Type.Literal('queued'), Type.Literal('scheduled')]),
    timestamp: Type.String({ format: 'date-time', description: 'when it was sent, queued, or is scheduled for' }),
    fallback: Type.Optional(Type.String({ description: 'present when the network would not render the kind: what was sent instead (also in X-Fallback)' })),
  }),
  { message_id: '3EB0C431D5A1B2C3D4E5', jid: '5511999990001@s.whatsapp.net', status: 'sent', timestamp: '2026-01-15T12:00:00.000Z' },
);

export const EditBody = Type.Object(
  { phone: Phone, message_id: MessageId, message: Type.String({ minLength: 1, maxLength: 65_536 }) },
  { additionalProperties: false, examples: [{ phone: P, message_id: '3EB0C431D5A1B2C3D4E5', message: 'Corrected: the store opens at 9.' }] },
);
export const MessageRefBody = Type.Object(
  { phone: Phone, message_id: MessageId },
  { additionalProperties: false, examples: [{ phone: P, message_id: '3EB0C431D5A1B2C3D4E5' }] },
);
export const ForwardBody = Type.Object(
  { phone: Phone, message_id: MessageId, delay_ms: common.delay_ms },
  { additionalProperties: false, examples: [{ phone: '5511999990003', message_id: '3EB0C431D5A1B2C3D4E5' }] },
);
export const PresenceBody = Type.Object(
  { phone: Phone, state: Type.Union([Type.Literal('composing'), Type.Literal('recording'), Type.Literal('paused')]) },
  { additionalProperties: false, examples: [{ phone: P, state: 'composing' }] },
);
export const MessageParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), message_id: MessageId });
export const MessageIdData = Envelope(Type.Object({ message_id: Type.String() }), { message_id: '3EB0C431D5A1B2C3D4E5' });
export const EmptyData = Envelope(Type.Object({}), {});
