import type { CommandContext } from '../domain/audit.js';
import type { SessionEvent } from '../domain/session/events.js';

/**
 * Where the session manager appends what its sessions report and what it did to them (the port;
 * SessionRecorder is its adapter over the event store). Answers the commit position of the last
 * event, null when there was nothing to append.
 */
export interface SessionLog {
  record(instanceId: string, accountId: string, events: SessionEvent[], context?: CommandContext): Promise<bigint | null>;
}
