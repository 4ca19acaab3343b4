import { instanceStream } from '../../domain/instance/events.js';
import { evolveInstanceView, INSTANCE_VIEW_EVENT_TYPES, type InstanceView } from '../../domain/instance/instance-view.js';
import { sessionStream } from '../../domain/session/events.js';
import type { EventStore, RecordedEvent } from '../../infra/eventstore/port.js';
import { occurredAt } from '../projection.js';
import { asViewEvent } from './instances-projection.js';

/**
 * The Instance as it was at a past moment: the instance's and its session's events that had
 * happened by then, merged in log order and folded by the same fold the read model uses.
 */
export class InstanceStateAt {
  constructor(private readonly store: EventStore) {}

  /** Null when the instance did not exist yet at `at`. */
  async at(instanceId: string, at: Date): Promise<InstanceView | null> {
    const [own, session] = await Promise.all([
      this.store.readStream(instanceStream(instanceId)),
      this.store.readStream(sessionStream(instanceId)),
    ]);
    const limit = at.getTime();
    const shown = (e: RecordedEvent) => INSTANCE_VIEW_EVENT_TYPES.has(e.type) && Date.parse(occurredAt(e)) <= limit;
    const events = [...own.filter(shown), ...session.filter(shown)].sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    let view: InstanceView | null = null;
    for (const e of events) view = evolveInstanceView(view, asViewEvent(e), occurredAt(e));
    return view;
  }
}
