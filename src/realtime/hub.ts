import type { AllSubscription, EventStore, RecordedEvent } from '../infra/eventstore/port.js';
import type { Logger } from '../infra/logging/logger.js';
import type { StageWork } from '../infra/metrics/work-meter.js';

type Listener = (event: RecordedEvent) => void;

const SESSION = 'session-';

/**
 * One subscription to the log, fanned out to whoever listens to an instance's session events
 * (the realtime streams). It starts at the head: listeners that need the past read it from the
 * log themselves, which is also where a stream that fell behind catches up from.
 */
export class RealtimeHub {
  private readonly listeners = new Map<string, Set<Listener>>();
  private subscription: AllSubscription | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly logger: Logger,
    /** Where its fan-out's CPU is counted (/metrics). */
    private readonly work?: StageWork,
  ) {}

  async start(): Promise<void> {
    const subscription = this.store.subscribeToAll({ after: await this.store.headPosition() });
    this.subscription = subscription;
    this.running = (async () => {
      for (;;) {
        const batch = await subscription.nextBatch(500);
        if (batch.length === 0) return;
        const started = performance.now();
        for (const event of batch) {
          if (!event.streamId.startsWith(SESSION)) continue;
          const listeners = this.listeners.get(event.streamId.slice(SESSION.length));
          if (!listeners) continue;
          for (const listen of listeners) {
            try {
              listen(event);
            } catch (err) {
              this.logger.error({ err }, 'a realtime listener failed');
            }
          }
        }
        this.work?.since(started);
      }
    })();
  }

  listen(instanceId: string, listener: Listener): () => void {
    let set = this.listeners.get(instanceId);
    if (!set) this.listeners.set(instanceId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(instanceId);
    };
  }

  async stop(): Promise<void> {
    await this.subscription?.unsubscribe();
    await this.running;
  }
}
