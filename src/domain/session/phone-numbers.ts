/**
 * The numbers under which one phone may be reachable. Brazil added a ninth digit to mobile numbers
 * (55, a two-digit area, 9, eight digits), yet accounts registered before it, and contacts written
 * without it, still exist: the network knows each account under one of the two forms only, so
 * both are tried, the number as written first.
 */
export function numberVariants(digits: string): string[] {
  const br = /^55(\d{2})(\d+)$/.exec(digits);
  if (!br) return [digits];
  const [, area, local] = br as unknown as [string, string, string];
  // Written with the ninth digit: also try without it.
  if (local.length === 9 && local.startsWith('9')) return [digits, `55${area}${local.slice(1)}`];
  // Written without it: a mobile's eight digits start with 6 to 9 (landlines with 2 to 5).
  if (local.length === 8 && /^[6-9]/.test(local)) return [digits, `55${area}9${local}`];
  return [digits];
}

/** `phone` as clients send it (digits with country code, or a full jid) as the jid the network addresses. */
export function toJid(phoneOrJid: string): string {
  if (phoneOrJid.includes('@')) return phoneOrJid;
  return `${phoneOrJid.replace(/\D/g, '')}@s.whatsapp.net`;
}
