import { BoundedMap } from '../../infra/bounded-map.js';

/**
 * The decisions a stateful reactor made for its most recent events, by event id. The runner
 * re-feeds events from the last checkpoint when a commit fails; the reactor's in-memory fold has
 * already moved past them, so re-deciding would hand out new seqs against later settings.
 * Returning the remembered decision keeps a replay identical to the first pass.
 */
export class DecisionMemo<T> extends BoundedMap<string, T> {}
