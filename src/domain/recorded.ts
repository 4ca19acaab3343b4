import { FormatRegistry, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { AccountEventSchemas } from './account/events.js';
import type { DomainEvent } from './decider.js';
import { HelpdeskEventSchemas } from './helpdesk/events.js';
import { BotEventSchemas } from './bots/events.js';
import { InstanceEventSchemas } from './instance/events.js';
import { SessionEventSchemas } from './session/events.js';
import { WebhookDeliveryEventSchemas } from './webhook/delivery-events.js';

/**
 * Every event type the log may hold, with its schema. A concept that adds a schema map adds it
 * here, and its events are then typed wherever the log is read.
 */
export const STORED_EVENT_SCHEMAS = {
  ...AccountEventSchemas,
  ...InstanceEventSchemas,
  ...SessionEventSchemas,
  ...WebhookDeliveryEventSchemas,
  ...HelpdeskEventSchemas,
  ...BotEventSchemas,
} as const;

type Schemas = typeof STORED_EVENT_SCHEMAS;
export type StoredEventType = keyof Schemas;
/** The union of every stored event: `type` narrows `data`. */
export type StoredEvent = { [K in StoredEventType]: { type: K; data: Static<Schemas[K]> } }[StoredEventType];

/** What the store says about an event besides its type and data (the event store port's fields). */
export interface RecordedEnvelope {
  readonly id: string;
  readonly streamId: string;
  readonly revision: bigint;
  readonly position: bigint;
  readonly metadata: { readonly [key: string]: unknown };
  readonly created: Date;
}

/**
 * A stored event as read back, typed: distributes over the union, so a `switch (event.type)`
 * gives each branch its own `data` type.
 */
export type RecordedEvent<E extends DomainEvent = StoredEvent> = E extends DomainEvent
  ? RecordedEnvelope & { readonly type: E['type']; readonly data: E['data'] }
  : never;

/** A recorded event of the named type(s) only. */
export type RecordedOf<T extends StoredEventType> = RecordedEvent<Extract<StoredEvent, { type: T }>>;

/** A stored event before it is known to be one of ours: what the event store port hands out. */
export type UntypedRecordedEvent = RecordedEnvelope & { readonly type: string; readonly data: unknown };

export type Typed = { ok: true; event: RecordedEvent } | { ok: false; reason: string };

// Stored schemas name `date-time`; the API registers the strict rule, this stands in when the
// domain is used without it (tests, tools), so a valid event never fails for want of a format.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => !Number.isNaN(Date.parse(v)));

const checks = new Map<string, TypeCheck<TSchema>>();
/** Readers share event objects (see the port), so each is checked once whoever reads it first. */
const seen = new WeakMap<object, Typed>();

const isStoredEventType = (type: string): type is StoredEventType => Object.hasOwn(STORED_EVENT_SCHEMAS, type);

function checkFor(type: StoredEventType): TypeCheck<TSchema> {
  let check = checks.get(type);
  if (!check) {
    check = TypeCompiler.Compile(STORED_EVENT_SCHEMAS[type] as TSchema);
    checks.set(type, check);
  }
  return check;
}

/**
 * The one place where a raw stored event becomes a typed one: its data is checked against its
 * type's schema, so a reader never folds a malformed or unknown event on trust.
 */
export function typedEvent(raw: UntypedRecordedEvent): Typed {
  const known = seen.get(raw);
  if (known) return known;
  const result = check(raw);
  seen.set(raw, result);
  return result;
}

/**
 * typedEvent without remembering the answer, for a reader that meets each event once and shares
 * it with no one (a rebuild's replay): a weak map entry per event of the log, for nothing, made
 * every young-generation collection of the replay walk them.
 */
export function checkedEvent(raw: UntypedRecordedEvent): Typed {
  return check(raw);
}

function check(raw: UntypedRecordedEvent): Typed {
  if (conforms(raw)) return { ok: true, event: raw };
  if (!isStoredEventType(raw.type)) return { ok: false, reason: `unknown event type ${raw.type}` };
  const first = checkFor(raw.type).Errors(raw.data).First();
  return { ok: false, reason: first ? `${first.path || '/'}: ${first.message}` : 'data does not match its schema' };
}

/**
 * The event's data matches the schema of its own type: the one narrowing the compiler cannot
 * follow (from a type name to its schema's static type), made by checking.
 */
const conforms = (raw: UntypedRecordedEvent): raw is RecordedEvent => isStoredEventType(raw.type) && checkFor(raw.type).Check(raw.data);

/** The event typed, when it is of type `type` and well formed; null otherwise. */
export function typedAs<T extends StoredEventType>(raw: UntypedRecordedEvent, type: T): RecordedOf<T> | null {
  if (raw.type !== type) return null;
  const typed = typedEvent(raw);
  return typed.ok && isOfType(typed.event, type) ? typed.event : null;
}

const isOfType = <T extends StoredEventType>(event: RecordedEvent, type: T): event is RecordedOf<T> => event.type === type;

/** True for the events of one concept's schema map (its decider's and its folds' vocabulary). */
export function isOneOf<M extends { readonly [K in StoredEventType]?: TSchema }>(schemas: M, event: RecordedEvent): event is RecordedOf<keyof M & StoredEventType> {
  return Object.hasOwn(schemas, event.type);
}

/** Typed events of a list, the malformed ones handed to `skip` (to report) and left out. */
export function typedEvents(raws: readonly UntypedRecordedEvent[], skip: (raw: UntypedRecordedEvent, reason: string) => void): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  for (const raw of raws) {
    const typed = typedEvent(raw);
    if (typed.ok) out.push(typed.event);
    else skip(raw, typed.reason);
  }
  return out;
}
