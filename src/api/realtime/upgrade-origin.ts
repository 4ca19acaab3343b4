import type { IncomingMessage } from 'node:http';

/**
 * Whether an upgrade request comes from a page of the gateway itself. A browser sends the
 * session cookie with a WebSocket upgrade from any page (WebSockets have no same-origin rule and
 * no preflight, and the app's CSRF header cannot be set on them), so the cookie may only
 * authenticate an upgrade whose `Origin` is the gateway's: the public URL's origin, or the host
 * the request was sent to (a rebinding page names its own host there, and the browser sends it
 * no cookie of ours). No `Origin` (not a browser) never counts: such clients send a token.
 */
export function fromOwnOrigin(req: IncomingMessage, publicUrl: string | undefined): boolean {
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || origin === '' || origin === 'null') return false;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  if (publicUrl !== undefined && safeOrigin(publicUrl) === parsed.origin) return true;
  // The host the request was sent to, with the scheme it came in on: the same host over another
  // scheme is another origin (a plain-http page must not open the https gateway's stream).
  const host = req.headers.host;
  const scheme = (req.socket as { encrypted?: boolean }).encrypted === true ? 'https:' : 'http:';
  return typeof host === 'string' && host !== '' && parsed.protocol === scheme && parsed.host === host.toLowerCase();
}

function safeOrigin(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}
