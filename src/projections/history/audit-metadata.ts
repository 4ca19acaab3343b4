import { ACTOR_KINDS, type Actor, type ActorKind } from '../../domain/actor.js';
import type { JsonObject } from '../../infra/eventstore/port.js';

export interface AuditFields {
  actor: Actor;
  correlation_id: string | null;
  causation_id: string | null;
}

/**
 * Reads who and why from an event's metadata. Events stored before the audit fields existed, or
 * with an actor this version does not know, read as the system's; the first actor kind for a
 * token pair was called `instance`.
 */
export function readAudit(metadata: JsonObject): AuditFields {
  return {
    actor: readActor(metadata.actor),
    correlation_id: typeof metadata.correlationId === 'string' ? metadata.correlationId : null,
    causation_id: typeof metadata.causationId === 'string' ? metadata.causationId : null,
  };
}

function readActor(raw: unknown): Actor {
  if (raw === null || typeof raw !== 'object') return { kind: 'system' };
  const { kind, id } = raw as { kind?: unknown; id?: unknown };
  const known = kind === 'instance' ? 'instance_token' : kind;
  if (!ACTOR_KINDS.includes(known as ActorKind)) return { kind: 'system' };
  if (typeof id === 'string') return { kind: known as ActorKind, id } as Actor;
  // account, instance_token and network name who they are; without an id they say nothing.
  return known === 'system' || known === 'helpdesk' ? { kind: known } : { kind: 'system' };
}
