import { expect } from 'chai';
import { newAccount, newInstance, type TestAccount } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';

type Credential = 'none' | 'owner_jwt' | 'other_jwt' | 'bad_jwt' | 'owner_pair' | 'foreign_client' | 'wrong_instance_token' | 'instance_token_only' | 'client_token_only';
type Kind = 'jwt' | 'instance' | 'instance_jwt';

interface RouteCase {
  method: string;
  path: (id: string) => string;
  kind: Kind;
  body?: unknown;
}

const ROUTES: RouteCase[] = [
  { method: 'PUT', path: () => '/instances/create', kind: 'jwt', body: { name: 'matrix' } },
  { method: 'POST', path: () => '/instances/list', kind: 'jwt', body: {} },
  { method: 'GET', path: () => '/account', kind: 'jwt' },
  { method: 'GET', path: (id) => `/instances/${id}`, kind: 'instance' },
  { method: 'PATCH', path: (id) => `/instances/${id}`, kind: 'instance', body: { name: 'matrix' } },
  { method: 'POST', path: (id) => `/instances/${id}/webhook`, kind: 'instance', body: { webhookURL: '' } },
  { method: 'GET', path: (id) => `/instances/${id}/webhook`, kind: 'instance' },
  { method: 'POST', path: (id) => `/instances/${id}/webhook/secret/rotate`, kind: 'instance' },
  { method: 'POST', path: (id) => `/instances/${id}/token/rotate`, kind: 'instance_jwt' },
  { method: 'PUT', path: (id) => `/instances/${id}/cancel`, kind: 'instance_jwt' },
  { method: 'DELETE', path: (id) => `/instances/${id}/cancel`, kind: 'instance_jwt' },
];

const CREDENTIALS: Credential[] = ['none', 'owner_jwt', 'other_jwt', 'bad_jwt', 'owner_pair', 'foreign_client', 'wrong_instance_token', 'instance_token_only', 'client_token_only'];

/** The spec's Authentication rules as a table: what each credential gets on each kind of route. */
function expected(kind: Kind, credential: Credential): number {
  switch (credential) {
    case 'none':
    case 'bad_jwt':
    case 'instance_token_only':
    case 'client_token_only':
      return 401;
    case 'owner_jwt':
      return 200;
    case 'other_jwt':
      return kind === 'jwt' ? 200 : 403;
    case 'owner_pair':
      return kind === 'instance' ? 200 : 401;
    case 'foreign_client':
    case 'wrong_instance_token':
      return kind === 'instance' ? 403 : 401;
  }
}

describe('auth middleware: route × credential matrix', () => {
  let other: TestAccount;
  let sibling: { id: string; token: string };

  const { t, owner } = useGateway();
  before(async () => {
    other = await newAccount(t.api);
    sibling = await newInstance(t.api, owner, { name: 'sibling' });
  });

  function headers(credential: Credential, instance: { token: string }): Record<string, string> {
    switch (credential) {
      case 'none':
        return {};
      case 'owner_jwt':
        return { authorization: `Bearer ${owner.jwt}` };
      case 'other_jwt':
        return { authorization: `Bearer ${other.jwt}` };
      case 'bad_jwt':
        return { authorization: `Bearer ${owner.jwt.slice(0, -4)}AAAA` };
      case 'owner_pair':
        return { 'x-instance-token': instance.token, 'x-client-token': owner.clientToken };
      case 'foreign_client':
        return { 'x-instance-token': instance.token, 'x-client-token': other.clientToken };
      case 'wrong_instance_token':
        return { 'x-instance-token': sibling.token, 'x-client-token': owner.clientToken };
      case 'instance_token_only':
        return { 'x-instance-token': instance.token };
      case 'client_token_only':
        return { 'x-client-token': owner.clientToken };
    }
  }

  for (const route of ROUTES) {
    for (const credential of CREDENTIALS) {
      const want = expected(route.kind, credential);
      it(`${route.method} ${route.path('{id}')} with ${credential} → ${want}`, async () => {
        // A fresh instance per case: rotate and cancel consume theirs.
        const instance = await newInstance(t.api, owner);
        const res = await t.api(route.method, route.path(instance.id), { body: route.body, headers: headers(credential, instance) });
        expect(res.status, res.text).to.equal(want);
        if (want !== 200) {
          expect(res.body).to.include({ code: want, success: false });
          expect(res.body.error.type).to.equal({ 401: 'unauthorized', 403: 'forbidden' }[want]);
        }
        if (want === 401) expect(res.headers.get('www-authenticate')).to.equal('Bearer');
      });
    }
  }

  it('answers 404 for an unknown instance to its caller', async () => {
    const res = await t.api('GET', '/instances/3E000000000000000000000000000000', { token: owner.jwt });
    expect(res.status).to.equal(404);
  });

  it('checks credentials before the body: an anonymous bad body gets 401, not 400', async () => {
    const res = await t.api('PUT', '/instances/create', { raw: '{not json' });
    expect(res.status).to.equal(401);
  });
});
