/** One signed POST of a delivery's body, as the dispatcher asks for it. */
export interface PostRequest {
  url: string;
  /** The delivery id: the `webhook-id` header, and part of what is signed. */
  id: string;
  /** The `webhook-timestamp` header, and part of what is signed. */
  timestampS: number;
  /** Exactly the bytes sent and signed (the delivery's stored body). */
  body: string;
  /** The instance's signing key: the bytes of its `whsec_` secret. */
  key: Uint8Array;
  /** Sent as X-Request-Id: the request (or happening) that caused the event, for the receiver's logs. */
  requestId?: string;
}

/** What the receiver (or the way to it) made of one POST. */
export type PostAnswer =
  /** The receiver answered; `excerpt` is the start of the answer's body, kept for errors only. */
  | { kind: 'answered'; status: number; excerpt: string; retryAfter?: string }
  /** No answer: the connection, the name lookup or the timeout failed (`code` as Node or axios says it). */
  | { kind: 'failed'; code?: string; message: string }
  /** Stopped by the caller's signal: the attempt does not count. */
  | { kind: 'aborted' };

/**
 * Sends webhook POSTs: the port between the dispatcher, which decides what an answer means, and
 * the HTTP client that makes the request.
 */
export interface WebhookPost {
  send(request: PostRequest, signal: AbortSignal): Promise<PostAnswer>;
  /** Lets go of connections (and threads); call once nothing is in flight. */
  close(): Promise<void>;
}
