import { invalidInput } from '../../domain/errors.js';
import { numberVariants } from '../../domain/session/phone-numbers.js';
import type { NumberCheck } from '../port.js';
import type { BoundedCache } from './bounded-cache.js';
import { isPhoneJid, jidUser, normalizeJid } from './jid.js';

/** Baileys' `onWhatsApp`: the jids that exist among those asked (undefined when the query failed). */
export type OnWhatsApp = (...jids: string[]) => Promise<{ jid: string; exists: boolean }[] | undefined>;

/**
 * Which numbers are on WhatsApp, asked once per number and kept in the instance's cache: a send
 * to a number that is not on the network would otherwise be acknowledged with a message id and
 * never delivered, and a Brazilian mobile written without its ninth digit would go nowhere.
 */
export class NumberDirectory {
  constructor(
    private readonly lookup: OnWhatsApp,
    private readonly cache: BoundedCache,
  ) {}

  async check(phone: string): Promise<NumberCheck> {
    const digits = phone.replace(/\D/g, '');
    const cached = this.cache.get<NumberCheck>(digits);
    if (cached) return cached;
    const variants = numberVariants(digits);
    const found = (await this.lookup(...variants.map((v) => `${v}@s.whatsapp.net`))) ?? [];
    const existing = found.filter((r) => r.exists && isPhoneJid(r.jid));
    // The number as written wins when both forms answer.
    const match = variants.map((v) => existing.find((r) => jidUser(normalizeJid(r.jid) ?? '') === v)).find((r) => r !== undefined) ?? existing[0];
    const jid = normalizeJid(match?.jid);
    const answer: NumberCheck = jid ? { exists: true, jid } : { exists: false };
    this.cache.set(digits, answer);
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
