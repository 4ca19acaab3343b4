import type { SessionEvent } from '../../domain/session/events.js';
import { PROFILE_FIELDS, type SessionStatusDoc } from './sessions-projection.js';

/**
 * The session status of one live session, folded from the events it reports, by the same rules as
 * the sessions projection. The session manager keeps it beside the open connection, so the status
 * route of a connected instance answers from memory instead of the read model: it is the hottest
 * read of the API, and this process already holds the newest truth about its own sessions.
 * Answers the same document when nothing changed, so callers can memoize on identity.
 */
export function foldLiveStatus(status: SessionStatusDoc, event: SessionEvent): SessionStatusDoc {
  switch (event.type) {
    case 'SessionConnected': {
      const d = event.data;
      const next: SessionStatusDoc = { ...status, paired: true, connected: true, phone: d.phone, jid: d.jid, business: d.business };
      if (d.push_name !== undefined) next.push_name = d.push_name;
      if (d.lid !== undefined) next.lid = d.lid;
      return next;
    }
    case 'SessionDisconnected':
      return status.connected ? { ...status, connected: false } : status;
    case 'ProfileUpdated': {
      const next: SessionStatusDoc = { ...status };
      for (const field of PROFILE_FIELDS) if (event.data[field] !== undefined) next[field] = event.data[field];
      if (event.data.business !== undefined) next.business_profile = event.data.business;
      return next;
    }
    case 'SessionLoggedOut':
      return emptyStatus(status._id);
    default:
      return status;
  }
}

export const emptyStatus = (instanceId: string): SessionStatusDoc => ({ _id: instanceId, paired: false, connected: false });
