/**
 * A test tool: an EventStoreDB gRPC server on localhost, backed by an in-memory log, so the real
 * `@eventstore/db-client` runs over real sockets. Not a database: nothing is persisted and there
 * is no security. See README.md in this folder for what it implements.
 */
import * as grpc from '@grpc/grpc-js';
import serverFeaturesGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import serverFeaturesPb from '@eventstore/db-client/generated/serverfeatures_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import type streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import { MemoryLog, type AppendOutcome, type Expected, type Proposed, type StoredEvent } from './memory-log.js';
import * as msg from './messages.js';
import { Writer } from './writer.js';

type ReadReq = InstanceType<typeof streamsPb.ReadReq>;
type ReadResp = InstanceType<typeof streamsPb.ReadResp>;
type AppendReq = InstanceType<typeof streamsPb.AppendReq>;
type AppendResp = InstanceType<typeof streamsPb.AppendResp>;
type BatchAppendReq = InstanceType<typeof streamsPb.BatchAppendReq>;
type BatchAppendResp = InstanceType<typeof streamsPb.BatchAppendResp>;

export interface EventStoreTestServerOptions {
  /** Server clock in epoch ms: stamps `created` and drives $maxAge. Default Date.now. */
  now?: () => number;
  /**
   * Whether ServerFeatures advertises BatchAppend (default true, as EventStoreDB 21.10+ does).
   * Without it the client falls back to one Append call per write.
   */
  batchAppend?: boolean;
  /** Port on 127.0.0.1; default a free one. */
  port?: number;
  /** The log to serve, e.g. the one of a server that was closed: a restart that keeps the data. */
  log?: MemoryLog;
  /** What each group commit's flush costs, in ms (default 0: one turn of the event loop). */
  flushMs?: number;
}

export interface EventStoreTestServer {
  /** `esdb://127.0.0.1:PORT?tls=false`, for EVENTSTORE_URL or EventStoreDBClient.connectionString. */
  url: string;
  /** The log itself, for tests that look behind the API. */
  log: MemoryLog;
  /** What arrived how: calls opened, appends carried, commits made (group commit shows here). */
  stats: ServerStats;
  close(): Promise<void>;
}

export interface ServerStats {
  appendCalls: number;
  batchAppendCalls: number;
  /** Appends carried by BatchAppend calls. */
  batchedAppends: number;
  /** Subscriptions to $all opened, and those still open. */
  subscriptionsOpened: number;
  subscriptionsOpen: number;
  /** Flushes of the writer, each committing the group of writes queued behind the previous one. */
  readonly commits: number;
}

const SERVICE = 'event_store.client.streams.Streams';
const VERSION = '24.10.0-test';
/** gRPC code EventStoreDB puts on a failed append inside a BatchAppend answer. */
const FAILED_PRECONDITION = 9;

export async function startEventStoreTestServer(options: EventStoreTestServerOptions = {}): Promise<EventStoreTestServer> {
  const log = options.log ?? new MemoryLog(options.now ?? Date.now);
  const writer = new Writer(options.flushMs ?? 0);
  const stats = {
    appendCalls: 0,
    batchAppendCalls: 0,
    batchedAppends: 0,
    subscriptionsOpened: 0,
    subscriptionsOpen: 0,
    get commits() {
      return writer.commits;
    },
  };
  const server = new grpc.Server();
  server.addService(streamsGrpc.StreamsService, streamsImplementation(log, writer, stats));
  server.addService(serverFeaturesGrpc.ServerFeaturesService, {
    getSupportedMethods: (_call: unknown, callback: grpc.sendUnaryData<InstanceType<typeof serverFeaturesPb.SupportedMethods>>) => {
      const methods = ['Read', 'Append', 'Delete', 'Tombstone', ...(options.batchAppend === false ? [] : ['BatchAppend'])];
      const supported = new serverFeaturesPb.SupportedMethods().setEventStoreServerVersion(VERSION);
      for (const name of methods) supported.addMethods(new serverFeaturesPb.SupportedMethod().setServiceName(SERVICE).setMethodName(name));
      callback(null, supported);
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`127.0.0.1:${options.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)));
  });
  return {
    url: `esdb://127.0.0.1:${port}?tls=false`,
    log,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        // Subscriptions never end by themselves: cut them rather than wait.
        server.tryShutdown(() => resolve());
        setTimeout(() => server.forceShutdown(), 200).unref();
      }),
  };
}

function streamsImplementation(log: MemoryLog, writer: Writer, stats: ServerStats): streamsGrpc.IStreamsServer {
  return {
    read: (call) => read(log, call, stats),
    append: (call, callback) => {
      stats.appendCalls++;
      append(log, writer, call, callback);
    },
    batchAppend: (call) => {
      stats.batchAppendCalls++;
      batchAppend(log, writer, call, stats);
    },
    delete: (call, callback) => {
      const options = call.request.getOptions();
      if (!options) return callback(invalid('delete without options'));
      const name = msg.streamName(options.getStreamIdentifier());
      const denied = checkExpected(log, name, msg.expectedOf(options));
      if (denied) return callback(denied);
      const outcome = log.softDelete(name);
      if (!outcome.ok) return callback(failure(name, outcome, msg.expectedOf(options)));
      callback(null, new msg.DeleteResp().setPosition(new msg.DeleteResp.Position().setCommitPosition(outcome.position.toString()).setPreparePosition(outcome.position.toString())));
    },
    tombstone: (call, callback) => {
      const options = call.request.getOptions();
      if (!options) return callback(invalid('tombstone without options'));
      const name = msg.streamName(options.getStreamIdentifier());
      const denied = checkExpected(log, name, msg.expectedOf(options));
      if (denied) return callback(denied);
      const outcome = log.tombstone(name);
      if (!outcome.ok) return callback(failure(name, outcome, msg.expectedOf(options)));
      callback(null, new msg.TombstoneResp().setPosition(new msg.TombstoneResp.Position().setCommitPosition(outcome.position.toString()).setPreparePosition(outcome.position.toString())));
    },
  };
}

// --- reads and subscriptions ---

function read(log: MemoryLog, call: grpc.ServerWritableStream<ReadReq, ReadResp>, stats: ServerStats): void {
  const options = call.request.getOptions();
  if (!options) return fail(call, invalid('read without options'));
  try {
    if (options.hasSubscription()) {
      if (!options.hasAll()) return fail(call, status(grpc.status.UNIMPLEMENTED, 'stream subscriptions are not implemented by the test server'));
      stats.subscriptionsOpened++;
      stats.subscriptionsOpen++;
      let open = true;
      const closed = () => {
        if (open) stats.subscriptionsOpen--;
        open = false;
      };
      call.on('cancelled', closed);
      call.on('close', closed);
      call.on('finish', closed);
      return subscribeToAll(log, call, options);
    }
    const count = Number(options.getCount() || '0');
    const forwards = options.getReadDirection() === 0;
    if (options.hasStream()) return readStream(log, call, options, forwards, count);
    return readAll(log, call, options, forwards, count);
  } catch (error) {
    fail(call, invalid(error instanceof Error ? error.message : String(error)));
  }
}

type ReadOptions = InstanceType<typeof streamsPb.ReadReq.Options>;

function readStream(log: MemoryLog, call: grpc.ServerWritableStream<ReadReq, ReadResp>, options: ReadOptions, forwards: boolean, count: number): void {
  const streamOptions = options.getStream();
  const name = msg.streamName(streamOptions?.getStreamIdentifier());
  const visible = log.visible(name);
  if (visible === 'deleted') return fail(call, streamDeletedError(name));
  if (visible === undefined) {
    call.write(msg.streamNotFound(name));
    call.end();
    return;
  }
  let selected: StoredEvent[];
  if (forwards) {
    const from = streamOptions?.hasRevision() ? BigInt(streamOptions.getRevision()) : streamOptions?.hasEnd() ? log.head(name) + 1n : 0n;
    selected = visible.filter((event) => event.revision >= from).slice(0, count);
  } else {
    const from = streamOptions?.hasRevision() ? BigInt(streamOptions.getRevision()) : streamOptions?.hasStart() ? 0n : log.head(name);
    selected = visible.filter((event) => event.revision <= from).reverse().slice(0, count);
  }
  void writeAll(call, selected.map((event) => msg.readEvent(event, 'stream'))).then(() => call.end());
}

function readAll(log: MemoryLog, call: grpc.ServerWritableStream<ReadReq, ReadResp>, options: ReadOptions, forwards: boolean, count: number): void {
  const all = options.getAll();
  const filter = msg.eventFilter(options) ?? (() => true);
  const selected: StoredEvent[] = [];
  if (forwards) {
    // A position is inclusive when reading forwards, as on EventStoreDB.
    let index = all?.hasPosition() ? log.indexAtOrAfter(BigInt(all.getPosition()?.getCommitPosition() ?? '0')) : all?.hasEnd() ? log.all.length : 0;
    for (; index < log.all.length && selected.length < count; index++) {
      const event = log.all[index] as StoredEvent;
      if (filter(event)) selected.push(event);
    }
  } else {
    let index = (all?.hasPosition() ? log.indexAtOrAfter(BigInt(all.getPosition()?.getCommitPosition() ?? '0')) : log.all.length) - 1;
    for (; index >= 0 && selected.length < count; index--) {
      const event = log.all[index] as StoredEvent;
      if (filter(event)) selected.push(event);
    }
  }
  void writeAll(call, selected.map((event) => msg.readEvent(event, 'all'))).then(() => call.end());
}

/**
 * Catch-up and live in one cursor over the log: whatever was appended before or after the
 * subscription started is sent in log order, each event once, with checkpoints for filters.
 */
function subscribeToAll(log: MemoryLog, call: grpc.ServerWritableStream<ReadReq, ReadResp>, options: ReadOptions): void {
  const all = options.getAll();
  const filter = msg.eventFilter(options);
  const interval = msg.checkpointInterval(options);
  // Subscriptions start after the given position, unlike reads.
  let cursor = all?.hasPosition()
    ? log.indexAtOrAfter(BigInt(all.getPosition()?.getCommitPosition() ?? '0') + 1n)
    : all?.hasEnd()
      ? log.all.length
      : 0;
  let examined = 0;
  let caughtUp = false;
  let pumping = false;
  let ended = false;
  const stop = () => {
    ended = true;
    unlisten();
  };
  const pump = async () => {
    if (pumping || ended) return;
    pumping = true;
    try {
      while (!ended && cursor < log.all.length) {
        const event = log.all[cursor++] as StoredEvent;
        examined++;
        let ready = true;
        if (!filter || filter(event)) ready = call.write(msg.readEvent(event, 'all'));
        if (filter && examined % interval === 0) ready = call.write(msg.checkpoint(event.position)) && ready;
        if (!ready) await drained(call);
      }
      if (!caughtUp && !ended) {
        caughtUp = true;
        call.write(new msg.ReadResp().setCaughtUp(new msg.ReadResp.CaughtUp()));
      }
    } finally {
      pumping = false;
    }
    if (!ended && cursor < log.all.length) void pump();
  };
  const unlisten = log.onAppend(() => void pump());
  call.on('cancelled', stop);
  call.on('close', stop);
  call.on('error', stop);
  call.write(new msg.ReadResp().setConfirmation(new msg.ReadResp.SubscriptionConfirmation().setSubscriptionId(crypto.randomUUID())));
  void pump();
}

async function writeAll(call: grpc.ServerWritableStream<ReadReq, ReadResp>, messages: ReadResp[]): Promise<void> {
  for (const message of messages) {
    if (call.cancelled) return;
    if (!call.write(message)) await drained(call);
  }
}

function drained(call: grpc.ServerWritableStream<ReadReq, ReadResp>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('close', done);
      resolve();
    };
    call.on('drain', done);
    call.on('close', done);
  });
}

// --- appends ---

function append(log: MemoryLog, writer: Writer, call: grpc.ServerReadableStream<AppendReq, AppendResp>, callback: grpc.sendUnaryData<AppendResp>): void {
  let name: string | undefined;
  let expected: Expected = 'any';
  const events: Proposed[] = [];
  let failed = false;
  call.on('data', (request: AppendReq) => {
    if (failed) return;
    try {
      const options = request.getOptions();
      if (options) {
        name = msg.streamName(options.getStreamIdentifier());
        expected = msg.expectedOf(options);
      }
      const message = request.getProposedMessage();
      if (message) events.push(msg.proposed(message));
    } catch (error) {
      failed = true;
      callback(invalid(error instanceof Error ? error.message : String(error)));
    }
  });
  call.on('end', () => {
    if (failed) return;
    if (name === undefined) return callback(invalid('append without options'));
    const stream = name;
    void writer.submit(() => log.append(stream, events, expected)).then((outcome) => {
      if (outcome.ok) {
        const at = answeredPosition(outcome);
        const success = new msg.AppendResp.Success()
          .setCurrentRevision(outcome.revision.toString())
          .setPosition(new msg.AppendResp.Position().setCommitPosition(at).setPreparePosition(at));
        return callback(null, new msg.AppendResp().setSuccess(success));
      }
      if (outcome.reason === 'stream_deleted') return callback(streamDeletedError(stream));
      callback(null, new msg.AppendResp().setWrongExpectedVersion(msg.appendWrongExpectedVersion(expected, outcome.current)));
    });
  });
}

interface PendingBatch {
  name: string;
  expected: Expected;
  events: Proposed[];
}

/**
 * One long-lived call carries many writers' appends, each tagged with a correlation id; each
 * complete one goes to the writer, whose group commit acknowledges them together.
 */
function batchAppend(log: MemoryLog, writer: Writer, call: grpc.ServerDuplexStream<BatchAppendReq, BatchAppendResp>, stats: ServerStats): void {
  const pending = new Map<string, PendingBatch>();
  let answering = 0;
  let ended = false;
  const commit = async (correlation: string, batch: PendingBatch) => {
    const outcome = await writer.submit(() => log.append(batch.name, batch.events, batch.expected));
    const answer = new msg.BatchAppendResp().setCorrelationId(msg.uuid(correlation)).setStreamIdentifier(msg.streamIdentifier(batch.name));
    setExpected(answer, batch.expected);
    if (outcome.ok) {
      const success = new msg.BatchAppendResp.Success().setCurrentRevision(outcome.revision.toString()).setPosition(msg.allStreamPosition(answeredPosition(outcome)));
      answer.setSuccess(success);
    } else if (outcome.reason === 'stream_deleted') {
      answer.setError(msg.status(FAILED_PRECONDITION, `stream ${batch.name} is deleted`, msg.streamDeletedDetail(batch.name)));
    } else {
      answer.setError(msg.status(FAILED_PRECONDITION, `wrong expected version for ${batch.name}`, msg.wrongExpectedVersionDetail(batch.expected, outcome.current)));
    }
    if (!call.cancelled) call.write(answer);
  };
  call.on('data', (request: BatchAppendReq) => {
    try {
      const correlation = msg.uuidString(request.getCorrelationId());
      let batch = pending.get(correlation);
      const options = request.getOptions();
      if (!batch) {
        if (!options) throw new Error('the first request of an append carries its options');
        batch = { name: msg.streamName(options.getStreamIdentifier()), expected: msg.batchExpectedOf(options), events: [] };
        pending.set(correlation, batch);
      }
      for (const message of request.getProposedMessagesList()) batch.events.push(msg.proposed(message));
      if (!request.getIsFinal()) return;
      pending.delete(correlation);
      stats.batchedAppends++;
      answering++;
      void commit(correlation, batch).finally(() => {
        answering--;
        if (ended && answering === 0) call.end();
      });
    } catch (error) {
      fail(call, invalid(error instanceof Error ? error.message : String(error)));
    }
  });
  call.on('end', () => {
    ended = true;
    if (answering === 0) call.end();
  });
}

function setExpected(answer: BatchAppendResp, expected: Expected): void {
  if (expected === 'any') answer.setAny(msg.googleEmpty());
  else if (expected === 'stream_exists') answer.setStreamExists(msg.googleEmpty());
  else if (expected < 0n) answer.setNoStream(msg.googleEmpty());
  else answer.setStreamPosition(expected.toString());
}

/**
 * An append that wrote nothing (an idempotent retry, an empty append) is answered without a
 * position (-1 as unsigned, as EventStoreDB's writer reports it), so clients cannot take the
 * answer's position for granted.
 */
function answeredPosition(outcome: Extract<AppendOutcome, { ok: true }>): string {
  return outcome.nothingWritten ? msg.NO_POSITION : outcome.position.toString();
}

// --- errors, as EventStoreDB reports them in trailers the client reads ---

function checkExpected(log: MemoryLog, name: string, expected: Expected): grpc.ServiceError | undefined {
  const current = log.head(name);
  const ok = expected === 'any' || (expected === 'stream_exists' ? current >= 0n : expected === current);
  if (ok) return undefined;
  const metadata = new grpc.Metadata();
  metadata.set('exception', 'wrong-expected-version');
  metadata.set('stream-name', name);
  metadata.set('expected-version', typeof expected === 'bigint' ? expected.toString() : '-2');
  if (current >= 0n) metadata.set('actual-version', current.toString());
  return status(grpc.status.FAILED_PRECONDITION, `wrong expected version for ${name}`, metadata);
}

function failure(name: string, outcome: Exclude<AppendOutcome, { ok: true }>, expected: Expected): grpc.ServiceError {
  if (outcome.reason === 'stream_deleted') return streamDeletedError(name);
  const metadata = new grpc.Metadata();
  metadata.set('exception', 'wrong-expected-version');
  metadata.set('stream-name', name);
  metadata.set('expected-version', typeof expected === 'bigint' ? expected.toString() : '-2');
  if (outcome.current >= 0n) metadata.set('actual-version', outcome.current.toString());
  return status(grpc.status.FAILED_PRECONDITION, `wrong expected version for ${name}`, metadata);
}

function streamDeletedError(name: string): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  metadata.set('exception', 'stream-deleted');
  metadata.set('stream-name', name);
  return status(grpc.status.FAILED_PRECONDITION, `stream ${name} is deleted`, metadata);
}

function invalid(message: string): grpc.ServiceError {
  return status(grpc.status.INVALID_ARGUMENT, message);
}

function status(code: grpc.status, details: string, metadata = new grpc.Metadata()): grpc.ServiceError {
  return Object.assign(new Error(details), { code, details, metadata });
}

/** grpc-js ends a server stream with the error's status (and trailers) when it is emitted. */
function fail(call: NodeJS.EventEmitter, error: grpc.ServiceError): void {
  call.emit('error', error);
}
