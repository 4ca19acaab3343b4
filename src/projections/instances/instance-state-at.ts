import { instanceStream } from '../../domain/instance/events.js';
import type { Logger } from 'pino';
import { evolveInstanceView, type InstanceView } from '../../domain/instance/instance-view.js';
import { sessionStream } from '../../domain/session/events.js';
import { typedEvents, type UntypedRecordedEvent } from '../../domain/recorded.js';
import type { EventStore } from '../../infra/eventstore/port.js';
import { occurredAt } from '../projection.js';
import { isViewEvent } from './instances-projection.js';

/**
 * The Instance as it was at a past moment: the instance's and its session's events that had
 * happened by then, merged in log order and folded by the same fold the read model uses.
 */
export class InstanceStateAt {
  constructor(
    private readonly store: EventStore,
    private readonly logger: Logger,
  ) {}

  private readonly malformed = (event: UntypedRecordedEvent, reason: string): void =>
    this.logger.error({ eventId: event.id, type: event.type, streamId: event.streamId, reason }, 'malformed stored event left out of a past state');

  /** Null when the instance did not exist yet at `at`. */
  async at(instanceId: string, at: Date): Promise<InstanceView | null> {
    const [own, session] = await Promise.all([
      this.store.readStream(instanceStream(instanceId)),
      this.store.readStream(sessionStream(instanceId)),
    ]);
    const limit = at.getTime();
    const events = typedEvents([...own, ...session], this.malformed)
      .filter(isViewEvent)
      .filter((e) => Date.parse(occurredAt(e)) <= limit)
      .sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    let view: InstanceView | null = null;
    for (const e of events) view = evolveInstanceView(view, e, occurredAt(e));
    return view;
  }
}
