/**
 * A decider, as in Emmett: pure functions over a discriminated union of commands and events.
 * No I/O, no clock, no ids: whatever varies comes in the command.
 */
export type DomainEvent<Type extends string = string, Data extends object = object> = {
  readonly type: Type;
  readonly data: Data;
};

export interface Decider<State, Command, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  /** Returns the events that record the decision, none when nothing changes; throws DomainError. */
  decide(command: Command, state: State): Event[];
}
