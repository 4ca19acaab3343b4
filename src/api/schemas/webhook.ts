import { Type } from '@sinclair/typebox';
import { Envelope } from './common.js';

export const SetWebhookBody = Type.Object(
  {
    webhookURL: Type.Union([Type.String({ format: 'uri', maxLength: 2048 }), Type.Literal('')], {
      description: 'HTTPS URL that receives payloads; an empty string clears the configuration',
    }),
    events: Type.Optional(
      Type.String({
        pattern: '^$|^[A-Za-z]+(,[A-Za-z]+)*$',
        maxLength: 512,
        description: 'comma-separated event names without spaces; omitted keeps the configured list',
      }),
    ),
  },
  { additionalProperties: false },
);

export const WebhookConfiguration = Envelope(Type.Object({ webhook: Type.String(), events: Type.String() }));
export const WebhookWithSecret = Envelope(
  Type.Object({ webhook: Type.String(), events: Type.String(), secret: Type.String({ description: 'whsec_...' }) }),
);
export const WebhookSecret = Envelope(Type.Object({ secret: Type.String() }));
