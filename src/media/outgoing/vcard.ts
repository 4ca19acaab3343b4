/** A vCard 3.0 of one contact, as WhatsApp phones write them (`waid` makes the number tappable). */
export function vcardOf(contact: { name: string; phones: string[]; email?: string; organization?: string }): string {
  const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/([,;])/g, '\\$1');
  const lines = ['BEGIN:VCARD', 'VERSION:3.0', `FN:${esc(contact.name)}`];
  if (contact.organization) lines.push(`ORG:${esc(contact.organization)};`);
  for (const phone of contact.phones) lines.push(`TEL;type=CELL;type=VOICE;waid=${phone}:+${phone}`);
  if (contact.email) lines.push(`EMAIL:${esc(contact.email)}`);
  lines.push('END:VCARD');
  return lines.join('\n');
}
