import { Type } from '@sinclair/typebox';
import { MessageId, Phone } from './messaging.js';

const body = <P extends Parameters<typeof Type.Object>[0]>(properties: P) => Type.Object({ phone: Phone, ...properties }, { additionalProperties: false });

export const ArchiveBody = body({ archived: Type.Boolean({ description: 'true archives, false unarchives' }) });
export const PinBody = body({ pinned: Type.Boolean({ description: 'true pins, false unpins' }) });
export const MuteBody = body({
  until: Type.Integer({
    minimum: -1,
    maximum: 253_402_300_799,
    description: 'unix seconds when the mute ends (in the future); 0 unmutes; -1 mutes for always',
  }),
});
export const MarkUnreadBody = body({ unread: Type.Boolean({ description: 'true marks the chat unread; false marks it read (count and mark cleared)' }) });
export const DeleteChatBody = body({
  message_id: Type.Optional(
    Type.String({
      minLength: MessageId.minLength,
      maxLength: MessageId.maxLength,
      pattern: MessageId.pattern,
      description: 'delete this message for this account only; without it the whole chat is deleted',
    }),
  ),
  from_me: Type.Optional(Type.Boolean({ description: 'whether message_id was sent by this account (default: as last seen, else false)' })),
});
export const ClearChatBody = body({});
