import type { AllSubscription, AppendResult, EventData, EventStore, ExpectedRevision, ReadAllOptions, ReadStreamOptions, RecordedEvent, StreamMetadata, SubscribeOptions } from '../eventstore/port.js';
import type { Metrics } from './metrics.js';
import type { StageWork } from './work-meter.js';

/** The event store port with its appends timed and counted; everything else passes through. */
export class MeteredEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly metrics: Metrics,
  ) {
    this.appendWork = metrics.work.stage('append');
  }

  private readonly appendWork: StageWork;

  async append(streamId: string, events: EventData[], expected: ExpectedRevision): Promise<AppendResult> {
    const end = this.metrics.appends.startTimer();
    const started = performance.now();
    try {
      // The store's synchronous part of an append (encoding, checks, queueing for the group commit).
      const appending = this.inner.append(streamId, events, expected);
      this.appendWork.since(started);
      const result = await appending;
      end({ outcome: 'ok' });
      this.metrics.appendedEvents.inc(events.length);
      return result;
    } catch (err) {
      end({ outcome: (err as Error).name === 'WrongExpectedRevisionError' ? 'conflict' : 'error' });
      throw err;
    }
  }

  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamId, options);
  }

  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  subscribeToAll(options?: SubscribeOptions): AllSubscription {
    return this.inner.subscribeToAll(options);
  }

  setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void> {
    return this.inner.setStreamMetadata(streamId, metadata);
  }

  getStreamMetadata(streamId: string): Promise<StreamMetadata> {
    return this.inner.getStreamMetadata(streamId);
  }

  headPosition(): Promise<bigint> {
    return this.inner.headPosition();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
