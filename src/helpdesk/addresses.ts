/**
 * How a WhatsApp person or group is found in the helpdesk: by the jid (`identifier`), by the
 * phone number in E.164, and for Brazilian mobiles by both forms of the number (with and without
 * the ninth digit the network sometimes drops).
 */

const PN = /^(\d+)@s\.whatsapp\.net$/;

export const isGroupJid = (jid: string) => jid.endsWith('@g.us');

/** The digits of a phone-number jid, or null for groups and LIDs. */
export function phoneOf(jid: string): string | null {
  return PN.exec(jid)?.[1] ?? null;
}

/** The E.164 forms a number may be stored under: itself, and the other Brazilian form. */
export function phoneVariants(digits: string): string[] {
  const forms = [digits];
  // 55 + two-digit area + 9 + eight digits, or the same without the 9.
  const br = /^55(\d{2})(9?)(\d{8})$/.exec(digits);
  if (br && /^[6-9]/.test(br[3] as string)) forms.push(br[2] ? `55${br[1]}${br[3]}` : `55${br[1]}9${br[3]}`);
  return forms.map((d) => `+${d}`);
}

/** A jid to send to, from what the helpdesk knows of a contact. */
export function jidOfContact(contact: { identifier: string | null; phone_number: string | null }): string | null {
  if (contact.identifier && /@(s\.whatsapp\.net|g\.us|lid)$/.test(contact.identifier)) return contact.identifier;
  const digits = contact.phone_number?.replace(/\D/g, '');
  return digits ? `${digits}@s.whatsapp.net` : null;
}
