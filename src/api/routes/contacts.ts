import { Type } from '@sinclair/typebox';
import { onNetwork } from '../../sessions/network-call.js';
import type { SessionManager } from '../../sessions/session-manager.js';
import { envelope } from '../envelope.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { Envelope, InstanceIdParams } from '../schemas/common.js';

const CheckQuery = Type.Object(
  { phone: Type.String({ pattern: '^[0-9]{7,15}$', description: 'digits with country code', example: '5511999990001' }) },
  { additionalProperties: false },
);

const CheckAnswer = Envelope(
  Type.Object({
    phone: Type.String({ description: 'the number as asked' }),
    exists: Type.Boolean({ description: 'whether the number has a WhatsApp account' }),
    jid: Type.Union([Type.String(), Type.Null()], {
      description: 'the jid the network uses for it (a Brazilian mobile may differ from the number asked by its ninth digit); null when it does not exist',
    }),
  }),
);

/** The number check of CONTRACT.md (Webhooks): the same lookup a send makes before the first message to a number. */
export function contactRoutes(manager: SessionManager): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/instances/{id}/contacts/check',
      tag: 'Messaging',
      summary: 'Whether a phone number is on WhatsApp, and the jid to write to (409 not_connected when the session is down)',
      auth: 'instance',
      params: InstanceIdParams,
      query: CheckQuery,
      response: { description: 'the check', schema: CheckAnswer },
      errors: [400, 409, 502],
      handler: async ({ instance, query }) => {
        const check = await onNetwork(manager, instance._id, (c) => c.checkNumber(query.phone));
        return { body: envelope({ phone: query.phone, exists: check.exists, jid: check.exists ? check.jid : null }) };
      },
    }),
  ];
}
