import { DomainError, type ErrorDetail, type ErrorType } from '../domain/errors.js';

const STATUS: Record<ErrorType | 'internal', number> = {
  invalid_input: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  not_connected: 409,
  payload_too_large: 413,
  rate_limited: 429,
  upstream_failed: 502,
  unavailable: 503,
  internal: 500,
};

export interface HttpError {
  status: number;
  body: { code: number; success: false; error: { type: string; message: string; details?: ErrorDetail[] } };
  headers: Record<string, string>;
}

/** A path that exists, asked with a method it does not take; `allow` lists the ones it does. */
export class MethodNotAllowed extends DomainError {
  constructor(readonly allow: readonly string[]) {
    super('method_not_allowed', `this path takes ${allow.join(', ')}`);
  }
}

/** The one place where errors become HTTP answers. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof MethodNotAllowed) {
    const answer = build(err.type, err.message);
    answer.headers.allow = err.allow.join(', ');
    return answer;
  }
  if (err instanceof DomainError) return build(err.type, err.message, err.details, err.retryAfterSeconds);
  const status = (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
  // Body-parser errors carry their status: a malformed or oversized body is the client's.
  if (status === 413) return build('payload_too_large', 'request body is too large');
  if (status === 415) return build('invalid_input', 'body: send application/json', [{ field: 'body', message: 'send application/json' }]);
  if (status === 400) return build('invalid_input', 'body: malformed JSON', [{ field: 'body', message: 'malformed JSON' }]);
  return build('internal', 'internal error');
}

function build(type: ErrorType | 'internal', message: string, details?: ErrorDetail[], retryAfter?: number): HttpError {
  const status = STATUS[type];
  const error: HttpError['body']['error'] = { type, message };
  if (details && details.length > 0) error.details = details;
  const headers: Record<string, string> = {};
  if (retryAfter !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfter)));
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  return { status, body: { code: status, success: false, error }, headers };
}
