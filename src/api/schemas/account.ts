import { Type } from '@sinclair/typebox';

const Email = Type.String({ format: 'email', maxLength: 254 });
const Password = Type.String({ minLength: 8, maxLength: 256 });

export const SignupBody = Type.Object({ email: Email, password: Password }, { additionalProperties: false });
export const LoginBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);
export const TokenBody = Type.Object(
  { client_token: Type.String({ minLength: 1, maxLength: 256 }), client_secret: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);

export const SignupAnswer = Type.Object({
  account_id: Type.String(),
  email: Type.String(),
  client_token: Type.String(),
  client_secret: Type.String({ description: 'shown only here and on rotation' }),
});

export const AccessToken = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'seconds' }),
});

export const AccountAnswer = Type.Object({
  account_id: Type.String(),
  user_id: Type.Integer(),
  email: Type.String(),
  client_token: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});

export const ClientSecretAnswer = Type.Object({ client_token: Type.String(), client_secret: Type.String() });
