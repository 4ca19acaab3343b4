/**
 * Who caused a change, stored with every event for audit (CONTRACT.md, History): the account
 * (its JWT), an instance token pair, the messaging network, the gateway itself, or the helpdesk.
 * It lives in the domain because it is part of every event's metadata: the command side writes
 * it, the projections read it back, and neither may depend on the other for it.
 */
export type Actor =
  | { kind: 'account'; id: string }
  | { kind: 'instance_token'; id: string }
  | { kind: 'network'; id: string }
  | { kind: 'system'; id?: string }
  | { kind: 'helpdesk'; id?: string };

export type ActorKind = Actor['kind'];

export const ACTOR_KINDS: readonly ActorKind[] = ['account', 'instance_token', 'network', 'system', 'helpdesk'];
