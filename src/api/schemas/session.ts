import { Type } from '@sinclair/typebox';
import { Envelope, InstanceIdParams } from './common.js';

const OptStr = Type.Optional(Type.String());

/** The spec's session status data, fields in order; all but `connected` only when connected and not empty. */
export const SessionStatus = Envelope(
  Type.Object({
    connected: Type.Boolean(),
    phone: OptStr,
    whatsapp_jid: OptStr,
    push_name: OptStr,
    business_name: OptStr,
    business_profile: Type.Optional(
      Type.Object({
        business_hours_timezone: OptStr,
        categories: Type.Optional(Type.Array(Type.Object({ id: Type.String(), name: Type.String() }))),
        profile_options: Type.Optional(Type.Record(Type.String(), Type.String())),
        address: OptStr,
        email: Type.Optional(Type.String({ format: 'email' })),
      }),
    ),
    profile_picture_id: OptStr,
    profile_picture_url: Type.Optional(Type.String({ format: 'uri' })),
    profile_url: Type.Optional(Type.String({ format: 'uri' })),
    verified_name: OptStr,
    about: OptStr,
    website: Type.Optional(Type.String({ format: 'uri' })),
  }),
);

export const QrAnswer = Envelope(
  Type.Object({
    qr: Type.String({ description: 'the pairing string; it changes as the network rotates it' }),
    qr_image: Type.String({ description: 'the QR as a PNG data URL' }),
  }),
);
export const PairCodeAnswer = Envelope(Type.Object({ code: Type.String() }));
export const ConnectedAnswer = Envelope(Type.Object({ connected: Type.Boolean() }));

export const PairCodeParams = Type.Composite([
  InstanceIdParams,
  Type.Object({ phone: Type.String({ pattern: '^[0-9]{8,15}$', description: 'digits with country code' }) }),
]);
