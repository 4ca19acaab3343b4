import type { Context } from 'koa';

/** The web app's session: the same JWT the API issues, carried by an http-only cookie. */
export const SESSION_COOKIE = 'gw_session';

/**
 * The web app sends this header on every call. A page of another origin cannot add a custom
 * header to a cross-origin request without a CORS preflight, which the gateway never grants,
 * so a cookie-carried write without it is a forgery (SameSite=Strict is the first defence).
 */
const CSRF_HEADER = 'x-gateway-app';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The session cookie's JWT, when the request may use it: reads always, writes only with the
 * app's header. A write without it is treated as carrying no credentials (401).
 */
export function cookieToken(ctx: Partial<Pick<Context, 'cookies' | 'method'>> & Pick<Context, 'get'>): string | null {
  // A request with no cookie jar (a WebSocket upgrade read from its headers) carries no session.
  if (!ctx.cookies || !ctx.method) return null;
  const token = ctx.cookies.get(SESSION_COOKIE);
  if (!token) return null;
  // Exactly the app's value: a header sent at all is the defence, and one value leaves no doubt.
  if (!READS.has(ctx.method) && ctx.get(CSRF_HEADER) !== '1') return null;
  return token;
}

export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${token}`,
    'Path=/',
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}
