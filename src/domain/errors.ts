/** The error kinds of CONTRACT.md; the API maps them to HTTP in one place. */
export type ErrorType =
  | 'invalid_input'
  | 'unauthorized'
  | 'payment_required'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'not_connected'
  | 'payload_too_large'
  | 'rate_limited'
  | 'upstream_failed'
  /** A node this one depends on does not answer (another gateway node, while its share moves). */
  | 'unavailable';

export interface ErrorDetail {
  field: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly type: ErrorType,
    message: string,
    readonly details?: ErrorDetail[],
    /** Seconds a client should wait before retrying (rate_limited, unavailable). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalidInput = (field: string, message: string) =>
  new DomainError('invalid_input', `${field}: ${message}`, [{ field, message }]);
export const notFound = (message: string) => new DomainError('not_found', message);
export const conflict = (message: string) => new DomainError('conflict', message);
export const forbidden = (message: string) => new DomainError('forbidden', message);
export const unauthorized = (message: string) => new DomainError('unauthorized', message);
