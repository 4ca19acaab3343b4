import type { Actor } from './actor.js';

/**
 * What caused a change, written with every event it appends (CONTRACT.md, History). The command
 * handler and the session recorder both append with it, so it lives below both.
 */
export interface CommandContext {
  actor: Actor;
  /** The HTTP request id, or the network happening, that started the chain of changes. */
  correlationId: string;
  /** The event or command that caused this one; the correlation id when it came in directly. */
  causationId?: string;
  accountId?: string;
  instanceId?: string;
  /** When the command decided; default: the clock at append time. */
  occurredAt?: Date;
}

/** An event's metadata as every append path writes it. */
export type AuditMetadata = {
  occurredAt: string;
  actor: Actor;
  correlationId: string;
  causationId: string;
  accountId?: string;
  instanceId?: string;
};

/** The metadata every append path writes: when, who, and the correlation and causation ids. */
export function auditMetadata(context: CommandContext, occurredAt: Date): AuditMetadata {
  const metadata: AuditMetadata = {
    occurredAt: occurredAt.toISOString(),
    actor: context.actor,
    correlationId: context.correlationId,
    causationId: context.causationId ?? context.correlationId,
  };
  if (context.accountId) metadata.accountId = context.accountId;
  if (context.instanceId) metadata.instanceId = context.instanceId;
  return metadata;
}
