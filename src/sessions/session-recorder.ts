import { auditMetadata, type CommandContext } from '../domain/audit.js';
import { sessionStream, type SessionEvent } from '../domain/session/events.js';
import type { Clock } from '../infra/clock.js';
import type { EventStore } from '../infra/eventstore/port.js';
import type { IdGenerator } from '../infra/ids.js';
import type { SessionLog } from './session-log.js';

/**
 * Appends what a session's driver reports to `session-<id>`. These are facts from the network,
 * not decisions, so they append at any revision. The stream carries a retention so message
 * contents are not kept forever.
 *
 * What the network reports on its own is the network's, one happening per call (its events share
 * a correlation id); what an API call did on the network carries that call's context.
 */
export class SessionRecorder implements SessionLog {
  private readonly retained = new Set<string>();

  constructor(
    private readonly store: EventStore,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    private readonly network: string,
    private readonly retentionDays: number,
  ) {}

  async record(instanceId: string, accountId: string, events: SessionEvent[], context?: CommandContext): Promise<bigint | null> {
    if (events.length === 0) return null;
    const stream = sessionStream(instanceId);
    if (!this.retained.has(stream)) {
      await this.store.setStreamMetadata(stream, { maxAgeSeconds: this.retentionDays * 86_400 });
      this.retained.add(stream);
    }
    const metadata = auditMetadata(
      { ...(context ?? { actor: { kind: 'network', id: this.network }, correlationId: `net-${this.ids.uuid()}` }), instanceId, accountId },
      this.clock.now(),
    );
    const result = await this.store.append(
      stream,
      events.map((e) => ({ id: this.ids.uuid(), type: e.type, data: { ...e.data }, metadata })),
      'any',
    );
    return result.position;
  }
}
