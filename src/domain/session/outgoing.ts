import type { Static } from '@sinclair/typebox';
import type { OutgoingContent as OutgoingContentSchema } from './events.js';

/** What an instance sends (schema in events.ts, beside the events that keep it). */
export type OutgoingContent = Static<typeof OutgoingContentSchema>;
export type OutgoingKind = OutgoingContent['kind'];

/**
 * Changes to messages already on the network, which a driver puts there as the network's protocol
 * messages. Never queued or scheduled: they act on what exists now.
 */
export type MessageChange =
  /** Edit for everyone: the new text (or caption) of one of our messages. */
  | { kind: 'edit'; message_id: string; text: string }
  /** Delete for everyone: ours, or (group admins) another member's. */
  | { kind: 'revoke'; message_id: string; from_me: boolean; participant?: string };
