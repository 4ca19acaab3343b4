import { expect } from 'chai';
import type { Decider, DomainEvent } from '../../src/domain/decider.js';
import { DomainError, type ErrorType } from '../../src/domain/errors.js';

/** given(events).when(command).then(events) | thenThrows(type) | thenNothingHappened(). */
export function deciderSpec<S, C, E extends DomainEvent>(decider: Decider<S, C, E>) {
  return {
    given(events: E[]) {
      const state = events.reduce(decider.evolve, decider.initialState());
      return {
        when(command: C) {
          const run = () => decider.decide(command, state);
          return {
            then(expected: E[]) {
              expect(run()).to.deep.equal(expected);
            },
            thenNothingHappened() {
              expect(run()).to.deep.equal([]);
            },
            thenThrows(type: ErrorType) {
              let error: unknown;
              try {
                run();
              } catch (err) {
                error = err;
              }
              expect(error, 'expected a DomainError').to.be.instanceOf(DomainError);
              expect((error as DomainError).type).to.equal(type);
            },
          };
        },
      };
    },
  };
}
