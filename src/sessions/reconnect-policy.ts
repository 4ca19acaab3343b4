import type { DisconnectReason } from '../domain/session/events.js';

export type ReconnectDecision =
  | { action: 'reconnect'; delayMs: number }
  /** Another device took the session over, or the network refused us: keep the credentials, stay down. */
  | { action: 'stop' }
  /** The phone unlinked us: the credentials are dead, wipe them. */
  | { action: 'wipe' };

export interface BackoffSettings {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { baseMs: 1000, maxMs: 5 * 60_000 };

/**
 * What to do after a disconnect, by reason. `attempt` counts consecutive failures (1 for the
 * first); `random` is in [0, 1) and spreads reconnects of many sessions apart (full jitter).
 */
export function decideReconnect(
  reason: DisconnectReason,
  attempt: number,
  random: number,
  settings: BackoffSettings = DEFAULT_BACKOFF,
): ReconnectDecision {
  switch (reason) {
    case 'restart_required':
      // The network asks for a fresh socket right after pairing: no delay.
      return { action: 'reconnect', delayMs: 0 };
    case 'logged_out':
      return { action: 'wipe' };
    case 'replaced':
    case 'client_outdated':
    case 'forbidden':
    case 'multidevice_mismatch':
      return { action: 'stop' };
    case 'connection_closed':
    case 'connection_lost':
    case 'timed_out':
    case 'unavailable':
    case 'bad_session':
    case 'unknown': {
      const ceiling = Math.min(settings.maxMs, settings.baseMs * 2 ** Math.max(0, attempt - 1));
      return { action: 'reconnect', delayMs: Math.floor(random * ceiling) };
    }
  }
}
