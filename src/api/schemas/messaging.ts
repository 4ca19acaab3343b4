import { Type } from '@sinclair/typebox';
import { Envelope } from './common.js';

export const Phone = Type.String({
  pattern: '^([0-9]{8,15}|[0-9]{8,15}(:[0-9]+)?@s\\.whatsapp\\.net|[0-9]{5,20}(-[0-9]+)?@g\\.us|[0-9]{5,20}@lid)$',
  description: 'digits with country code, or a full jid (@s.whatsapp.net, @g.us, @lid)',
});
export const MessageId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' });

export const SendTextBody = Type.Object(
  { phone: Phone, message: Type.String({ minLength: 1, maxLength: 65_536 }), reply_to: Type.Optional(MessageId) },
  { additionalProperties: false },
);

export const SendButtonsBody = Type.Object(
  {
    phone: Phone,
    buttons: Type.Array(
      Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }), text: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false }),
      { minItems: 1, maxItems: 25 },
    ),
    message: Type.Optional(Type.String({ maxLength: 4096 })),
    footer: Type.Optional(Type.String({ maxLength: 1024 })),
    reply_to: Type.Optional(MessageId),
    delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 20_000 })),
    send_at: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false, examples: [{ phone: '5511999990001', message: 'Confirm your booking?', buttons: [{ id: 'yes', text: 'Yes' }, { id: 'no', text: 'No' }], footer: 'Reply any time' }] },
);

export const MarkReadBody = Type.Object(
  { phone: Phone, message_ids: Type.Array(MessageId, { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false },
);

export const ReactBody = Type.Object(
  { phone: Phone, message_id: MessageId, reaction: Type.String({ maxLength: 32, description: 'an emoji; "" removes the reaction' }) },
  { additionalProperties: false, examples: [{ phone: '5511999990001', message_id: '3EB0C431D5A1B2C3D4E5', reaction: '👍' }] },
);

const Queued = Type.Optional(Type.Literal('queued', { description: 'present when the send waits for its turn (send pacing); it goes out in order under message_id' }));
export const MessageIdAnswer = Envelope(Type.Object({ message_id: Type.String(), status: Queued }), { message_id: '3EB0C431D5A1B2C3D4E5' });
export const ButtonsAnswer = Envelope(
  Type.Object({
    message_id: Type.String(),
    status: Queued,
    fallback: Type.Optional(Type.String({ description: 'present when the network would not render buttons: what was sent instead (also in the X-Fallback header)' })),
  }),
);
export const EmptyAnswer = Envelope(Type.Object({}));
