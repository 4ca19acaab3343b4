import type { SessionStatusDoc } from '../../projections/sessions/sessions-projection.js';

type Status = Record<string, unknown>;

const present = (v: unknown) =>
  v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0) && !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0);

/** Keeps keys in the given order, dropping the empty ones, as the spec asks. */
function ordered(entries: [string, unknown][]): Status {
  const out: Status = {};
  for (const [k, v] of entries) if (present(v)) out[k] = v;
  return out;
}

/** The spec's session status data: `connected` always; everything else only when connected and not empty. */
export function presentSessionStatus(doc: SessionStatusDoc | null, connected: boolean): Status {
  // The spec: disconnected, `data` holds only `connected`. Why a session is down is told by the
  // Disconnected webhook (Reason, Message) and the instance's history.
  if (!doc || !connected) return { connected: false };
  const b = doc.business_profile;
  const business = b
    ? ordered([
        ['business_hours_timezone', b.business_hours_timezone],
        ['categories', b.categories?.map((c) => ({ id: c.id, name: c.name }))],
        ['profile_options', b.profile_options],
        ['address', b.address],
        ['email', b.email],
      ])
    : undefined;
  return {
    connected: true,
    ...ordered([
      ['phone', doc.phone],
      ['whatsapp_jid', doc.jid],
      ['push_name', doc.push_name],
      ['business_name', doc.business_name],
      ['business_profile', business],
      ['profile_picture_id', doc.picture_id],
      ['profile_picture_url', doc.picture_url],
      ['profile_url', doc.phone ? `https://wa.me/${doc.phone}` : undefined],
      ['verified_name', doc.verified_name],
      ['about', doc.about],
      ['website', b?.website],
    ]),
  };
}
