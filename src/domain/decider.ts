/**
 * A decider, as in Emmett: pure functions over a discriminated union of commands and events.
 * No I/O, no clock, no ids: whatever varies comes in the command.
 */
export type DomainEvent<Type extends string = string, Data extends object = object> = {
  readonly type: Type;
  readonly data: Data;
};

/**
 * A decider's own event types, one key per member of its union (`true`, or its schema map):
 * spelled as a record so the compiler checks that none is missing and none is extra.
 */
export type EventTypesOf<Event extends DomainEvent> = { readonly [K in Event['type']]: unknown };

export interface Decider<State, Command, Event extends DomainEvent> {
  /**
   * The events it decides and folds. Its stream may carry other events beside them (facts the
   * gateway records there, such as sign-ins or an agent's replies): those are not its to fold.
   */
  readonly eventTypes: EventTypesOf<Event>;
  initialState(): State;
  evolve(state: State, event: Event): State;
  /** Returns the events that record the decision, none when nothing changes; throws DomainError. */
  decide(command: Command, state: State): Event[];
}

/** Whether an event (already checked against its schema) is one of the decider's own, by its type. */
export function isOwnEvent<Event extends DomainEvent>(decider: { readonly eventTypes: EventTypesOf<Event> }, event: DomainEvent): event is Event {
  return Object.hasOwn(decider.eventTypes, event.type);
}
