import type { Logger } from 'pino';
import type { CommandContext } from '../../domain/audit.js';
import type { SessionEvent } from '../../domain/session/events.js';
import { SessionRecorder } from '../session-recorder.js';

/** Whether this node may still append a session's events (SessionOwnership.mayWrite). */
export interface WriteFence {
  mayWrite(instanceId: string): boolean;
}

/**
 * The fence on session appends for many nodes: a node that held an instance's lease and lost it
 * (or could not renew it in time) drops what it would still append, with a warning, instead of
 * writing next to the new owner. The check is local (the node's own renewal deadline, which ends
 * a third of the ttl before the lease can lapse), so only an append stalled longer than that
 * margin between the check and the store could still land.
 */
export class FencedSessionRecorder extends SessionRecorder {
  private fence: WriteFence | null = null;
  private logger: Logger | null = null;

  guardWith(fence: WriteFence, logger: Logger): void {
    this.fence = fence;
    this.logger = logger;
  }

  override async record(instanceId: string, accountId: string, events: SessionEvent[], context?: CommandContext): Promise<bigint | null> {
    if (this.fence && !this.fence.mayWrite(instanceId)) {
      this.logger?.warn({ instanceId, types: events.map((e) => e.type) }, 'session events dropped: this node no longer owns the session');
      return null;
    }
    return super.record(instanceId, accountId, events, context);
  }
}
