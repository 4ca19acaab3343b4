/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { newAccount, type Answer } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';

describe('security: answers that carry a secret are never cached', () => {
  const { t, owner } = useGateway();

  it('says Cache-Control: no-store on sign-up, sign-in, token, instance create, every rotation and the webhook read', async () => {
    const answers: [string, Answer][] = [];
    const email = `cache-${Date.now()}@example.com`;
    answers.push(['POST /auth/signup', await t.api('POST', '/auth/signup', { body: { email, password: 'correct horse battery' } })]);
    const signup = answers[0]![1].body;
    answers.push(['POST /auth/login', await t.api('POST', '/auth/login', { body: { email, password: 'correct horse battery' } })]);
    answers.push(['POST /token', await t.api('POST', '/token', { body: { client_token: signup.client_token, client_secret: signup.client_secret } })]);
    const create = await t.api('PUT', '/instances/create', { token: owner.jwt, body: { name: 'cache' } });
    answers.push(['PUT /instances/create', create]);
    const id = create.body.id as string;
    answers.push(['POST webhook', await t.api('POST', `/instances/${id}/webhook`, { token: owner.jwt, body: { webhookURL: 'https://example.com/hook', events: 'All' } })]);
    answers.push(['GET webhook', await t.api('GET', `/instances/${id}/webhook`, { token: owner.jwt })]);
    answers.push(['webhook/secret/rotate', await t.api('POST', `/instances/${id}/webhook/secret/rotate`, { token: owner.jwt })]);
    answers.push(['token/rotate', await t.api('POST', `/instances/${id}/token/rotate`, { token: owner.jwt })]);
    const other = await newAccount(t.api);
    answers.push(['client-secret/rotate', await t.api('POST', '/account/client-secret/rotate', { token: other.jwt })]);
    for (const [what, answer] of answers) {
      expect(answer.status, `${what}: ${answer.text}`).to.be.within(200, 201);
      expect(answer.headers.get('cache-control'), what).to.equal('no-store');
    }
  });
});
