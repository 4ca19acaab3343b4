import type { SessionEvent } from '../../domain/session/events.js';
import type { NetworkConnection } from '../port.js';

/**
 * What a policy may use of the session whose happening it reacts to. It is bound to the socket
 * that reported the happening: once that socket is replaced or ended, `connection()` answers
 * null, so a policy never acts through a session it no longer describes.
 */
export interface LiveSession {
  readonly instanceId: string;
  /** The reporting socket's connection while it is still this session's; null after. */
  connection(): NetworkConnection | null;
  /** Whether the reporting socket is still this session's and open. */
  isOpen(): boolean;
  /** The account's own jid, as the session last reported it. */
  selfJid(): string | undefined;
  /** Records in order with everything else the session records. */
  record(events: SessionEvent[]): Promise<unknown>;
}

/** The instance settings the policies read, as the instances read model has them. */
export interface PolicySettings {
  byId(instanceId: string): Promise<{ auto_read_messages: boolean; reject_calls: boolean } | null>;
}
