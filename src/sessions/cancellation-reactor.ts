import type { Logger } from 'pino';
import type { InstanceEvent } from '../domain/instance/events.js';
import type { AllSubscription, EventStore } from '../infra/eventstore/port.js';

/** The events after which an instance is EXPIRED or CANCELED and runs no session. */
const LAPSING: ReadonlySet<string> = new Set(['InstanceCanceled', 'TrialExpired', 'SubscriptionExpired'] satisfies InstanceEvent['type'][]);

/**
 * Closes the live session of an instance once its cancellation or expiry is in the log, and
 * brings a paired one back once it subscribes again. It reacts
 * to the stored event, not to the HTTP call or the timer, so a lapse recorded by any process stops
 * the session in the process that holds it. Boot already skips lapsed instances, so it starts at
 * the head.
 */
export class CancellationReactor {
  private subscription: AllSubscription | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly stopSession: (instanceId: string) => Promise<void>,
    private readonly logger: Logger,
    /** A subscription started: a paired session that is down comes back (given the event's position). */
    private readonly resumeSession: (instanceId: string, position: bigint) => Promise<void> = () => Promise.resolve(),
  ) {}

  async start(): Promise<void> {
    const subscription = this.store.subscribeToAll({ after: await this.store.headPosition() });
    this.subscription = subscription;
    this.running = (async () => {
      for await (const event of subscription) {
        const instanceId = event.streamId.replace(/^instance-/, '');
        if (LAPSING.has(event.type)) {
          await this.stopSession(instanceId).catch((err: unknown) => this.logger.warn({ err, instanceId }, 'stopping a lapsed session failed'));
        } else if (event.type === 'SubscriptionStarted') {
          await this.resumeSession(instanceId, event.position).catch((err: unknown) => this.logger.warn({ err, instanceId }, 'resuming a subscribed session failed'));
        }
      }
    })();
  }

  async stop(): Promise<void> {
    await this.subscription?.unsubscribe();
    await this.running;
  }
}
