import { Type } from '@sinclair/typebox';
import { Nullable } from './common.js';

export const AccountBilling = Type.Object({
  provider: Type.Union([Type.Literal('none'), Type.Literal('stripe')]),
  payment_method: Nullable(Type.Object({ brand: Type.String(), last4: Type.String() })),
});

export const Received = Type.Object({ received: Type.Literal(true) });
