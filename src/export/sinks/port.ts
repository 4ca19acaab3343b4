import type { SinkKind } from '../documents.js';
import type { SignedHeaders } from '../../webhooks/signing.js';

/** One message as every sink publishes it: the webhook body with its signature headers. */
export interface ExportMessage {
  /** `evt_...`: the message id (AMQP `message-id`, NATS `Nats-Msg-Id`). */
  id: string;
  instanceId: string;
  type: string;
  seq: number;
  body: Buffer;
  headers: SignedHeaders;
}

/** A failure, said so that an operator can act on it (never with a credential in it). */
export interface SinkFailure {
  message: string;
  /** The broker refused this very message and always will (too large): retrying cannot help. */
  permanent: boolean;
}

/** How a batch went: the first `published` messages are confirmed by the broker; the one after them failed. */
export interface PublishOutcome {
  published: number;
  failure?: SinkFailure;
}

/**
 * A broker the export publishes to. A sink keeps its own connection up (reconnecting with
 * backoff) and says when it is ready; `publish` sends a batch in order and resolves once the
 * broker has confirmed (or refused) each message, never throws.
 */
export interface Sink {
  readonly kind: SinkKind;
  /** Starts connecting; resolves at once (a broker that is down is retried in the background). */
  start(): void;
  stop(): Promise<void>;
  /** Called each time the sink (re)connects and can publish. */
  onReady(listener: () => void): void;
  readonly ready: boolean;
  /** Why the sink cannot publish now (null when it can). */
  readonly lastError: string | null;
  publish(messages: readonly ExportMessage[]): Promise<PublishOutcome>;
}

/** Error text without anything that looks like a URL's credentials. */
export function describeError(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^@\s/]*@/gi, '$1***@').slice(0, 500);
}
