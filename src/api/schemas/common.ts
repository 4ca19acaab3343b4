import { Type, type TSchema } from '@sinclair/typebox';
import { FormatRegistry } from '@sinclair/typebox';

// TypeBox checks no string formats until they are registered; these are the ones routes use.
FormatRegistry.Set('date-time', (v) => !Number.isNaN(Date.parse(v)) && /^\d{4}-\d{2}-\d{2}T/.test(v));
// No white space and no control or format characters (NUL, zero-width): an address is printable.
FormatRegistry.Set('email', (v) => /^[^\s@\p{Cc}\p{Cf}]+@[^\s@\p{Cc}\p{Cf}]+\.[^\s@\p{Cc}\p{Cf}]+$/u.test(v) && v.length <= 254);
FormatRegistry.Set('uri', (v) => {
  try {
    const url = new URL(v);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
});

export const Envelope = <T extends TSchema>(data: T, example?: Record<string, unknown>) =>
  Type.Object({ code: Type.Integer({ example: 200 }), success: Type.Boolean(), data }, example ? { examples: [{ code: 200, success: true, data: example }] } : {});

export const ErrorBody = Type.Object(
  {
    code: Type.Integer({ description: 'HTTP status' }),
    success: Type.Literal(false),
    error: Type.Object({
      type: Type.String(),
      message: Type.String(),
      details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    }),
  },
  { $id: 'Error' },
);

export const InstanceIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
