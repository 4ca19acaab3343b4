import { jsonEvent, type AllStreamResolvedEvent, type EventData as ClientEventData, type ResolvedEvent } from '@eventstore/db-client';
import type { EventData, JsonObject, RecordedEvent } from '../port.js';

/**
 * EventStoreDB's own events ($metadata, $stats-..., $scavenges...) have types and stream names
 * starting with `$`. They are not ours: reads skip them and subscriptions filter them out.
 */
export function isSystemEvent(type: string, streamId: string): boolean {
  return type.startsWith('$') || streamId.startsWith('$');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The events of one append as the client sends them, refused as the embedded store refuses them
 * (and for a non-UUID id, which EventStoreDB cannot store) before anything is sent.
 */
export function toClientEvents(streamId: string, events: EventData[]): ClientEventData[] {
  if (typeof streamId !== 'string' || streamId === '') throw new Error('streamId must be a non-empty string');
  if (!Array.isArray(events)) throw new Error('events must be an array');
  const seen = new Set<string>();
  return events.map((event) => {
    if (typeof event.id !== 'string' || !UUID.test(event.id)) throw new Error('event id must be a UUID');
    if (typeof event.type !== 'string' || event.type === '') throw new Error(`event ${event.id}: type must be a non-empty string`);
    if (seen.has(event.id)) throw new Error(`event id ${event.id} appears twice in one append`);
    seen.add(event.id);
    if (!isJsonObject(event.data) || !isJsonObject(event.metadata)) throw new Error(`event ${event.id}: data and metadata must be objects`);
    return jsonEvent({ id: event.id, type: event.type, data: event.data as ClientJson, metadata: event.metadata });
  });
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type ClientJson = Parameters<typeof jsonEvent>[0]['data'];

/**
 * A read or subscribed event in the port's shape; undefined for what is not one of ours (system
 * events, links without their event). Positions: the commit position is the port's position.
 */
export function toRecorded(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined {
  const event = resolved.event;
  if (!event || isSystemEvent(event.type, event.streamId)) return undefined;
  const position = logPosition(event.position) ?? logPosition({ commit: resolved.commitPosition });
  if (position === undefined) throw new Error(`event ${event.id} in ${event.streamId} came without a position`);
  return {
    id: event.id,
    type: event.type,
    streamId: event.streamId,
    revision: event.revision,
    position,
    data: jsonObject(event.data),
    metadata: jsonObject(event.metadata),
    created: event.created,
  };
}

/** Our events are JSON objects; anything else (written by another tool) reads as empty. */
function jsonObject(value: unknown): JsonObject {
  return isJsonObject(value) && !(value instanceof Uint8Array) ? value : {};
}

/** -1 as an unsigned 64-bit number: how the server says "no position". */
const NO_POSITION = 2n ** 64n - 1n;

/**
 * The commit position, or undefined when the server did not give one. Reads of a single stream
 * come from the index, which has no commit position (the server sends NO_POSITION); each append
 * commits on its own, so there the event's prepare position is the same number.
 */
export function logPosition(position: { commit?: bigint; prepare?: bigint } | undefined): bigint | undefined {
  if (position?.commit !== undefined && position.commit !== NO_POSITION) return position.commit;
  if (position?.prepare !== undefined && position.prepare !== NO_POSITION) return position.prepare;
  return undefined;
}

/** EventStoreDB positions are pairs; every append commits at once, so the prepare equals the commit. */
export function allPosition(commit: bigint): { commit: bigint; prepare: bigint } {
  return { commit, prepare: commit };
}
