/**
 * Builds and reads the protobuf messages of EventStoreDB's gRPC API, using the client package's
 * own generated classes so that the wire format is the real one.
 */
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import statusPb from '@eventstore/db-client/generated/status_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import emptyPb from 'google-protobuf/google/protobuf/empty_pb.js';
import type { Expected, Proposed, StoredEvent } from './memory-log.js';

export const { ReadResp, AppendResp, BatchAppendResp, DeleteResp, TombstoneResp } = streamsPb;
type ReadReqOptions = InstanceType<typeof streamsPb.ReadReq.Options>;
type FilterOptions = InstanceType<typeof streamsPb.ReadReq.Options.FilterOptions>;

/** .NET ticks (100 ns) per millisecond: EventStoreDB's `created` unit. */
const TICKS_PER_MS = 10_000n;

export function streamName(identifier: InstanceType<typeof sharedPb.StreamIdentifier> | undefined): string {
  if (!identifier) throw new Error('missing stream identifier');
  return Buffer.from(identifier.getStreamName_asU8()).toString('utf8');
}

export function streamIdentifier(name: string): InstanceType<typeof sharedPb.StreamIdentifier> {
  return new sharedPb.StreamIdentifier().setStreamName(Buffer.from(name, 'utf8'));
}

export function uuidString(uuid: InstanceType<typeof sharedPb.UUID> | undefined): string {
  if (!uuid) throw new Error('missing event id');
  if (uuid.hasString()) return uuid.getString();
  const structured = uuid.getStructured();
  if (!structured) throw new Error('empty event id');
  const hex = (bits: string) => BigInt.asUintN(64, BigInt(bits)).toString(16).padStart(16, '0');
  const all = hex(structured.getMostSignificantBits()) + hex(structured.getLeastSignificantBits());
  return `${all.slice(0, 8)}-${all.slice(8, 12)}-${all.slice(12, 16)}-${all.slice(16, 20)}-${all.slice(20)}`;
}

/** A proposed message of Append or BatchAppend (both have the same fields). */
interface ProposedMessage {
  getId(): InstanceType<typeof sharedPb.UUID> | undefined;
  getMetadataMap(): { get(key: string): string | undefined };
  getData_asU8(): Uint8Array;
  getCustomMetadata_asU8(): Uint8Array;
}

export function proposed(message: ProposedMessage): Proposed {
  const metadata = message.getMetadataMap();
  const type = metadata.get('type');
  if (!type) throw new Error('proposed message without a type');
  return {
    id: uuidString(message.getId()),
    type,
    contentType: metadata.get('content-type') ?? 'application/octet-stream',
    data: message.getData_asU8(),
    customMetadata: message.getCustomMetadata_asU8(),
  };
}

/** -1 as an unsigned 64-bit number: EventStoreDB's "no position". */
export const NO_POSITION = (2n ** 64n - 1n).toString();

/**
 * An event as a read answers it. Reads of one stream come from EventStoreDB's index, which has
 * no commit position: like the server, they carry NO_POSITION there and the log position as the
 * prepare position.
 */
export function readEvent(event: StoredEvent, from: 'stream' | 'all'): InstanceType<typeof streamsPb.ReadResp> {
  const recorded = new streamsPb.ReadResp.ReadEvent.RecordedEvent()
    .setId(new sharedPb.UUID().setString(event.id))
    .setStreamIdentifier(streamIdentifier(event.streamId))
    .setStreamRevision(event.revision.toString())
    .setPreparePosition(event.position.toString())
    .setCommitPosition(from === 'all' ? event.position.toString() : NO_POSITION)
    .setData(event.data)
    .setCustomMetadata(event.customMetadata);
  const map = recorded.getMetadataMap();
  map.set('type', event.type);
  map.set('content-type', event.contentType);
  map.set('created', (BigInt(event.created) * TICKS_PER_MS).toString());
  const read = new streamsPb.ReadResp.ReadEvent().setEvent(recorded);
  if (from === 'all') read.setCommitPosition(event.position.toString());
  else read.setNoPosition(new sharedPb.Empty());
  return new streamsPb.ReadResp().setEvent(read);
}

export function checkpoint(position: bigint): InstanceType<typeof streamsPb.ReadResp> {
  const mark = new streamsPb.ReadResp.Checkpoint().setCommitPosition(position.toString()).setPreparePosition(position.toString());
  return new streamsPb.ReadResp().setCheckpoint(mark);
}

export function streamNotFound(name: string): InstanceType<typeof streamsPb.ReadResp> {
  return new streamsPb.ReadResp().setStreamNotFound(new streamsPb.ReadResp.StreamNotFound().setStreamIdentifier(streamIdentifier(name)));
}

export function empty(): InstanceType<typeof sharedPb.Empty> {
  return new sharedPb.Empty();
}

/** The expected revision of an Append, Delete or Tombstone request's options. */
export function expectedOf(options: {
  hasRevision(): boolean;
  getRevision(): string;
  hasNoStream(): boolean;
  hasStreamExists?(): boolean;
}): Expected {
  if (options.hasRevision()) return BigInt(options.getRevision());
  if (options.hasNoStream()) return -1n;
  if (options.hasStreamExists?.()) return 'stream_exists';
  return 'any';
}

export function batchExpectedOf(options: InstanceType<typeof streamsPb.BatchAppendReq.Options>): Expected {
  if (options.hasStreamPosition()) return BigInt(options.getStreamPosition());
  if (options.hasNoStream()) return -1n;
  if (options.hasStreamExists()) return 'stream_exists';
  return 'any';
}

/** shared.WrongExpectedVersion: the error detail BatchAppend carries, which the client unpacks. */
export function wrongExpectedVersionDetail(expected: Expected, current: bigint): InstanceType<typeof anyPb.Any> {
  const detail = new sharedPb.WrongExpectedVersion();
  if (current < 0n) detail.setCurrentNoStream(new emptyPb.Empty());
  else detail.setCurrentStreamRevision(current.toString());
  if (expected === 'any') detail.setExpectedAny(new emptyPb.Empty());
  else if (expected === 'stream_exists') detail.setExpectedStreamExists(new emptyPb.Empty());
  else if (expected < 0n) detail.setExpectedNoStream(new emptyPb.Empty());
  else detail.setExpectedStreamPosition(expected.toString());
  const packed = new anyPb.Any();
  packed.pack(detail.serializeBinary(), 'event_store.client.WrongExpectedVersion');
  return packed;
}

export function streamDeletedDetail(name: string): InstanceType<typeof anyPb.Any> {
  const packed = new anyPb.Any();
  packed.pack(new sharedPb.StreamDeleted().setStreamIdentifier(streamIdentifier(name)).serializeBinary(), 'event_store.client.StreamDeleted');
  return packed;
}

export function status(code: number, message: string, details: InstanceType<typeof anyPb.Any>): InstanceType<typeof statusPb.Status> {
  return new statusPb.Status().setCode(code).setMessage(message).setDetails(details);
}

/** Append's own (older) wrong expected version message, both field generations filled. */
export function appendWrongExpectedVersion(expected: Expected, current: bigint): InstanceType<typeof streamsPb.AppendResp.WrongExpectedVersion> {
  const wrong = new streamsPb.AppendResp.WrongExpectedVersion();
  if (current < 0n) wrong.setCurrentNoStream(new sharedPb.Empty()).setNoStream2060(new sharedPb.Empty());
  else wrong.setCurrentRevision(current.toString()).setCurrentRevision2060(Number(current));
  if (expected === 'any') wrong.setExpectedAny(new sharedPb.Empty()).setAny2060(new sharedPb.Empty());
  else if (expected === 'stream_exists') wrong.setExpectedStreamExists(new sharedPb.Empty()).setStreamExists2060(new sharedPb.Empty());
  else if (expected < 0n) wrong.setExpectedNoStream(new sharedPb.Empty());
  else wrong.setExpectedRevision(expected.toString()).setExpectedRevision2060(Number(expected));
  return wrong;
}

/** An event filter of a read or subscription, as the server applies it. */
export function eventFilter(options: ReadReqOptions): ((event: StoredEvent) => boolean) | undefined {
  const filter: FilterOptions | undefined = options.hasFilter() ? options.getFilter() : undefined;
  if (!filter) return undefined;
  const onStream = filter.hasStreamIdentifier();
  const expression = onStream ? filter.getStreamIdentifier() : filter.getEventType();
  if (!expression) return undefined;
  const regex = expression.getRegex() ? new RegExp(expression.getRegex()) : undefined;
  const prefixes = expression.getPrefixList();
  return (event) => {
    const subject = onStream ? event.streamId : event.type;
    if (regex && !regex.test(subject)) return false;
    if (prefixes.length > 0 && !prefixes.some((prefix) => subject.startsWith(prefix))) return false;
    return true;
  };
}

/** Events examined between two checkpoints of a filtered subscription. */
export function checkpointInterval(options: ReadReqOptions): number {
  const filter = options.getFilter();
  if (!filter) return Infinity;
  const window = filter.hasMax() ? filter.getMax() : 32;
  return Math.max(1, window * Math.max(1, filter.getCheckpointintervalmultiplier()));
}

export function uuid(value: string): InstanceType<typeof sharedPb.UUID> {
  return new sharedPb.UUID().setString(value);
}

export function allStreamPosition(position: string): InstanceType<typeof sharedPb.AllStreamPosition> {
  return new sharedPb.AllStreamPosition().setCommitPosition(position).setPreparePosition(position);
}

/** BatchAppend uses google.protobuf.Empty where the older calls use the client's own Empty. */
export function googleEmpty(): InstanceType<typeof emptyPb.Empty> {
  return new emptyPb.Empty();
}
