import type { BillingProvider } from './provider.js';

/** Self-hosted: subscribing charges nothing and every renewal counts as paid. */
export const noneProvider: BillingProvider = {
  kind: 'none',
  renewsItself: true,
  paymentMethod: () => Promise.resolve(null),
  subscribe: ({ now, periodMs }) => Promise.resolve({ expiredAt: new Date(now.getTime() + periodMs) }),
  scheduleCancellation: () => Promise.resolve(),
  resume: () => Promise.resolve(),
  cancelNow: () => Promise.resolve(),
};
