import type { SessionEvent, SessionEventData } from './events.js';

/**
 * What is known of an instance's session from its stream: the one fold of it. The sessions read
 * model stores it, the session manager keeps it beside a live connection (the status route answers
 * from memory), and the Instance view takes its session fields from the same changes.
 */
export interface SessionStatus {
  /** Credentials exist: the manager reconnects it at boot. */
  paired: boolean;
  connected: boolean;
  phone?: string;
  jid?: string;
  lid?: string;
  push_name?: string;
  business?: boolean;
  about?: string;
  picture_id?: string;
  picture_url?: string;
  verified_name?: string;
  business_name?: string;
  business_profile?: SessionEventData<'ProfileUpdated'>['business'];
  connected_at?: string;
  last_disconnect?: { reason: string; at: string; message?: string };
}

/** The session events the status folds; the others change nothing of it. */
export const SESSION_STATUS_EVENT_TYPES = ['SessionConnected', 'SessionDisconnected', 'SessionLoggedOut', 'ProfileUpdated'] as const;

type Field = keyof SessionStatus;

/** What a logout forgets: everything that described the paired account. */
const ACCOUNT_FIELDS = [
  'phone', 'jid', 'lid', 'push_name', 'business', 'about', 'picture_id', 'picture_url', 'verified_name', 'business_name', 'business_profile', 'connected_at',
] as const satisfies readonly Field[];

type ForgottenField = (typeof ACCOUNT_FIELDS)[number];

/** The profile fields a ProfileUpdated carries and the status keeps under the same names. */
const PROFILE_FIELDS = ['push_name', 'about', 'picture_id', 'picture_url', 'verified_name', 'business_name'] as const satisfies readonly Field[];

/**
 * What one event does to the status: fields set and fields removed. Each change depends on the
 * event (and when it occurred) alone, so a read model can write it as a patch without reading
 * the document, and a fold in memory gets the same status.
 */
export interface SessionStatusChange {
  set: Partial<SessionStatus>;
  unset: readonly ForgottenField[];
}

export function sessionStatusChange(event: SessionEvent, occurredAt: string): SessionStatusChange | null {
  switch (event.type) {
    case 'SessionConnected': {
      const d = event.data;
      const set: Partial<SessionStatus> = { paired: true, connected: true, phone: d.phone, jid: d.jid, business: d.business, connected_at: occurredAt };
      if (d.push_name !== undefined) set.push_name = d.push_name;
      if (d.lid !== undefined) set.lid = d.lid;
      return { set, unset: [] };
    }
    case 'SessionDisconnected': {
      const d = event.data;
      return { set: { connected: false, last_disconnect: { reason: d.reason, at: occurredAt, ...(d.message === undefined ? {} : { message: d.message }) } }, unset: [] };
    }
    case 'SessionLoggedOut':
      return { set: { paired: false, connected: false }, unset: ACCOUNT_FIELDS };
    case 'ProfileUpdated': {
      const d = event.data;
      const set: Partial<SessionStatus> = {};
      for (const field of PROFILE_FIELDS) if (d[field] !== undefined) set[field] = d[field];
      if (d.business !== undefined) set.business_profile = d.business;
      return { set, unset: [] };
    }
    default:
      return null;
  }
}

export const initialSessionStatus = (): SessionStatus => ({ paired: false, connected: false });

/**
 * The fold. Generic so a document keeps its own fields (its `_id`); answers the same object when
 * the event changes nothing, so callers can memoize on identity.
 */
export function evolveSessionStatus<S extends SessionStatus>(status: S, event: SessionEvent, occurredAt: string): S {
  const change = sessionStatusChange(event, occurredAt);
  if (change === null) return status;
  const next: S = { ...status, ...change.set };
  for (const field of change.unset) delete next[field];
  return next;
}
