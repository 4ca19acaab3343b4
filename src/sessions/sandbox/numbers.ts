import { invalidInput } from '../../domain/errors.js';
import { numberVariants } from '../../domain/session/phone-numbers.js';
import type { NumberCheck } from '../port.js';
import { userJid, type Address } from './addresses.js';
import type { Phones } from './phones.js';
import type { PhoneDoc } from './state.js';

/**
 * The sandbox's number check (SANDBOX.md, "numbers"): a number is on the network when it is a
 * sandbox phone the viewer's account can see, under either form of a Brazilian mobile.
 */
export class Numbers {
  constructor(private readonly phones: Phones) {}

  async check(viewer: PhoneDoc, phone: string): Promise<NumberCheck> {
    const variants = numberVariants(phone.replace(/\D/g, ''));
    const docs = await this.phones.byIds(variants);
    for (const variant of variants) {
      const doc = docs.get(variant);
      // Another account's phone is indistinguishable from a number nobody has.
      if (doc && doc.account_id === viewer.account_id) return { exists: true, jid: userJid(doc._id) };
    }
    return { exists: false };
  }

  /** A phone address as the network knows it; 400 "not on WhatsApp" when no variant exists. */
  async resolve(viewer: PhoneDoc, to: Address): Promise<Address> {
    if (to.kind !== 'phone') return to;
    const check = await this.check(viewer, to.phone);
    if (!check.exists) throw invalidInput('phone', `${to.phone} is not on WhatsApp`);
    const phone = check.jid.slice(0, check.jid.indexOf('@'));
    return { kind: 'phone', phone, jid: check.jid };
  }
}
