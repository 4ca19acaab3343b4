import { DomainError, type ErrorType } from '../../domain/errors.js';
import { NotConnectedError } from '../../sessions/port.js';

/**
 * Why a send did not go out, as the send queue acts on it (issue 27, finding 11): `final` when
 * retrying cannot change the answer (not on WhatsApp, an address the network does not know, a
 * refusal such as 463), so the send is given up at once; otherwise (a timeout, the connection
 * closing, the network busy) it is retried with back-off, holding only its own chat. `code` is
 * what the ReadReceipt Failed webhook carries in `Error.code`: the network's code when it gave
 * one, else the HTTP status the API answers for the same error had the send been made now.
 */
export interface SendFailure {
  final: boolean;
  code: number;
  reason: string;
}

const DOMAIN: Record<ErrorType, { final: boolean; code: number }> = {
  invalid_input: { final: true, code: 400 },
  unauthorized: { final: true, code: 401 },
  payment_required: { final: true, code: 402 },
  forbidden: { final: true, code: 403 },
  not_found: { final: true, code: 404 },
  method_not_allowed: { final: true, code: 405 },
  conflict: { final: true, code: 409 },
  payload_too_large: { final: true, code: 413 },
  not_connected: { final: false, code: 409 },
  rate_limited: { final: false, code: 429 },
  upstream_failed: { final: false, code: 502 },
  unavailable: { final: false, code: 503 },
};

/** Network codes that say "not now" rather than "never": timeouts, the socket closing, overload. */
const TRANSIENT_CODES = new Set([408, 425, 428, 429]);

export function sendFailure(err: unknown): SendFailure {
  const reason = err instanceof Error ? err.message : String(err);
  if (err instanceof DomainError) return { ...DOMAIN[err.type], reason };
  if (err instanceof NotConnectedError) return { final: false, code: 409, reason };
  const code = networkCodeOf(err);
  if (code === undefined) return { final: false, code: 502, reason };
  return { final: code >= 400 && code < 500 && !TRANSIENT_CODES.has(code), code, reason };
}

/** The status a network driver's error carries (Baileys' Boom errors: `output.statusCode`). */
function networkCodeOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const output = (err as { output?: unknown }).output;
  const code = typeof output === 'object' && output !== null ? (output as { statusCode?: unknown }).statusCode : undefined;
  return typeof code === 'number' && Number.isInteger(code) ? code : undefined;
}
