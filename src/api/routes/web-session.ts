import { Type } from '@sinclair/typebox';
import { cookieToken, sessionCookie } from '../auth/session-cookie.js';
import type { ApiDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { LoginBody, TokenBody } from '../schemas/account.js';

const TAG = 'Web app';
const SessionAnswer = Type.Object({ expires_in: Type.Integer({ description: 'seconds' }) });
const AppSettings = Type.Object({ network: Type.Union([Type.Literal('baileys'), Type.Literal('sandbox')]) });

/**
 * Sign-in for the web app: the JWT of `POST /auth/login`, set as an http-only cookie so page
 * scripts never hold it. The same sign-in limits apply (it is the same `SignIn`).
 */
export function webSessionRoutes(deps: ApiDeps): AnyRoute[] {
  const secure = deps.config.PUBLIC_URL.startsWith('https:');
  return [
    defineRoute({
      method: 'get',
      path: '/app/settings',
      tag: TAG,
      summary: 'What the web app adapts to: the messaging network in use (the sandbox adds a phone simulator)',
      auth: 'public',
      response: { description: 'settings', schema: AppSettings },
      handler: () => ({ body: { network: deps.config.MESSAGING_NETWORK } }),
    }),
    defineRoute({
      method: 'post',
      path: '/app/session',
      tag: TAG,
      summary: 'Sign in the web app with e-mail and password, or with the client credentials (the app renews its session so after rotating the secret): sets the http-only session cookie',
      auth: 'public',
      body: Type.Union([LoginBody, TokenBody]),
      response: { description: 'signed in; the cookie carries the access token', schema: SessionAnswer },
      errors: [401, 429],
      handler: async ({ body, ip, koa }) => {
        const client = { address: ip, userAgent: koa.get('user-agent'), via: 'web_app' } as const;
        const { access_token, expires_in } =
          'email' in body ? await deps.signIn.login(body.email, body.password, client) : await deps.signIn.token(body.client_token, body.client_secret, client);
        return { body: { expires_in }, headers: { 'Set-Cookie': sessionCookie(access_token, expires_in, secure), 'Cache-Control': 'no-store' } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/app/session',
      tag: TAG,
      summary: 'Sign out the web app: revokes the session\'s access token (sent with the app\'s header) and clears the session cookie',
      auth: 'public',
      response: { description: 'signed out', schema: Type.Object({}) },
      handler: async ({ koa, requestId }) => {
        // Only with the app's header (cookieToken): another site cannot end a session, even a little.
        const token = cookieToken(koa);
        if (token) await deps.signOut?.end(token, requestId);
        return { body: {}, headers: { 'Set-Cookie': sessionCookie('', 0, secure) } };
      },
    }),
  ];
}
