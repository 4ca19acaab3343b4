import { expect } from 'chai';
import { expectError, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';

describe('query validation', () => {
  let id: string;

  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });
  before(async () => {
    id = (await newInstance(t.api, owner)).id;
  });

  for (const [path, field] of [
    ['chats?page=2.5', 'page'],
    ['chats?page_size=1e2', 'page_size'],
    ['group/list?pageSize=abc', 'pageSize'],
    ['group/list?page=0x10', 'page'],
  ] as const) {
    it(`answers 400 naming ${field} for /${path}`, async () => {
      const res = await t.api('GET', `/instances/${id}/${path}`, { token: owner.jwt });
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).to.include(field);
    });
  }

  it('accepts integers written plainly', async () => {
    const res = await t.api('GET', `/instances/${id}/chats?page=1&page_size=10`, { token: owner.jwt });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ page: 1, page_size: 10 });
  });
});
