import { invalidInput } from '../../domain/errors.js';
import { numberVariants } from '../../domain/session/phone-numbers.js';
import type { NumberCheck } from '../port.js';
import type { BoundedCache } from './bounded-cache.js';
import { isPhoneJid, jidUser, normalizeJid } from './jid.js';

/** Baileys' `onWhatsApp`: the jids that exist among those asked (undefined when the query failed). */
export type OnWhatsApp = (...jids: string[]) => Promise<{ jid: string; exists: boolean }[] | undefined>;

/** A number found not on WhatsApp is asked again after this: it may register any time. */
export const NOT_ON_WHATSAPP_TTL_MS = 5 * 60_000;

/**
 * Which numbers are on WhatsApp, asked once per number and kept in the instance's cache: a send
 * to a number that is not on the network would otherwise be acknowledged with a message id and
 * never delivered, and a Brazilian mobile written without its ninth digit would go nowhere. A
 * number on WhatsApp is remembered for the cache's lifetime, one that is not for minutes, and a
 * lookup the network did not answer (Baileys answers undefined when its query times out) not at
 * all: that is an upstream failure, never "not on WhatsApp".
 */
export class NumberDirectory {
  constructor(
    private readonly lookup: OnWhatsApp,
    private readonly cache: BoundedCache,
    private readonly notFoundTtlMs = NOT_ON_WHATSAPP_TTL_MS,
  ) {}

  async check(phone: string): Promise<NumberCheck> {
    const digits = phone.replace(/\D/g, '');
    const cached = this.cache.get<NumberCheck>(digits);
    if (cached) return cached;
    const variants = numberVariants(digits);
    const found = await this.lookup(...variants.map((v) => `${v}@s.whatsapp.net`));
    if (!found) throw new Error(`WhatsApp did not answer whether ${digits} is on WhatsApp; retry`);
    const existing = found.filter((r) => r.exists && isPhoneJid(r.jid));
    // The number as written wins when both forms answer.
    const match = variants.map((v) => existing.find((r) => jidUser(normalizeJid(r.jid) ?? '') === v)).find((r) => r !== undefined) ?? existing[0];
    const jid = normalizeJid(match?.jid);
    const answer: NumberCheck = jid ? { exists: true, jid } : { exists: false };
    this.cache.set(digits, answer, answer.exists ? undefined : this.notFoundTtlMs);
    return answer;
  }

  /**
   * The jid a send goes to: a phone-number address resolved on the network (400 "not on
   * WhatsApp" when no variant exists); groups, LIDs and other jids as given.
   */
  async address(to: string): Promise<string> {
    if (to.includes('@') && !isPhoneJid(to)) return to;
    const user = to.includes('@') ? (jidUser(normalizeJid(to) ?? to) ?? '') : to;
    const check = await this.check(user);
    if (!check.exists) throw invalidInput('phone', `${user} is not on WhatsApp`);
    return check.jid;
  }
}
