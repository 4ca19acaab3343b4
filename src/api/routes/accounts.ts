import { notFound } from '../../domain/errors.js';
import type { ApiDeps } from '../deps.js';
import { defineRoute } from '../route.js';
import {
  AccessToken,
  AccountAnswer,
  ClientSecretAnswer,
  LoginBody,
  SignupAnswer,
  SignupBody,
  TokenBody,
} from '../schemas/account.js';

const TAG = 'Accounts';

export function accountRoutes(deps: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/auth/signup',
      tag: TAG,
      summary: 'Create an account; the client secret is shown only in this answer',
      auth: 'public',
      body: SignupBody,
      response: { status: 201, description: 'account created', schema: SignupAnswer },
      errors: [403, 409],
      handler: async ({ body, requestId }) => ({
        status: 201,
        body: await deps.accounts.signup(body.email, body.password, requestId),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/auth/login',
      tag: TAG,
      summary: 'Sign in with e-mail and password',
      auth: 'public',
      body: LoginBody,
      response: { description: 'access token', schema: AccessToken },
      errors: [401, 429],
      handler: async ({ body, ip, koa }) => ({ body: await deps.signIn.login(body.email, body.password, { address: ip, userAgent: koa.get('user-agent'), via: 'api' }) }),
    }),
    defineRoute({
      method: 'post',
      path: '/token',
      tag: TAG,
      summary: 'Exchange client credentials for a JWT',
      auth: 'public',
      body: TokenBody,
      response: { description: 'access token', schema: AccessToken },
      errors: [401, 429],
      handler: async ({ body, ip, koa }) => ({ body: await deps.signIn.token(body.client_token, body.client_secret, { address: ip, userAgent: koa.get('user-agent'), via: 'api' }) }),
    }),
    defineRoute({
      method: 'get',
      path: '/account',
      tag: TAG,
      summary: 'The signed-in account',
      auth: 'jwt',
      response: { description: 'account', schema: AccountAnswer },
      errors: [404],
      handler: async ({ principal }) => {
        const account = await deps.accountQueries.byId(principal.accountId);
        if (!account) throw notFound('account not found');
        return {
          body: {
            account_id: account._id,
            user_id: account.user_id,
            email: account.email,
            client_token: account.client_token,
            created_at: account.created_at,
          },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/account/client-secret/rotate',
      tag: TAG,
      summary: 'Issue a new client secret; the old one stops working at once',
      auth: 'jwt',
      response: { description: 'new client secret', schema: ClientSecretAnswer },
      errors: [404, 409],
      handler: async ({ principal, requestId }) => {
        const account = await deps.accountQueries.byId(principal.accountId);
        if (!account) throw notFound('account not found');
        const secret = await deps.accounts.rotateClientSecret(account._id, requestId);
        return { body: { client_token: account.client_token, client_secret: secret } };
      },
    }),
  ];
}
