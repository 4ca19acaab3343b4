import type { TSchema } from '@sinclair/typebox';
import { STORED_EVENT_SCHEMAS } from '../../domain/recorded.js';

/**
 * Every event type the log may hold, with its schema: what `types` filters are checked against,
 * and what the redaction test walks. The map itself is the domain's (recorded.ts), where the
 * log's events are typed.
 */
export const EVENT_SCHEMAS: Readonly<Record<string, TSchema>> = STORED_EVENT_SCHEMAS;

export const isEventType = (type: string): boolean => Object.hasOwn(EVENT_SCHEMAS, type);
