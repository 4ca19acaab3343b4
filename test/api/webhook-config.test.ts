import { expect } from 'chai';
import { expectError, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';

describe('webhook configuration over HTTP', () => {
  const { t, owner } = useGateway({ ALLOW_PRIVATE_TARGETS: 'false' });

  const set = (id: string, body: unknown) => t.api('POST', `/instances/${id}/webhook`, { token: owner.jwt, body });

  it('saves URL and events and answers the envelope', async () => {
    const { id } = await newInstance(t.api, owner);
    const res = await set(id, { webhookURL: 'https://hooks.example.com/in', events: 'Message,Connected,Disconnected' });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      code: 200,
      success: true,
      data: { webhook: 'https://hooks.example.com/in', events: 'Message,Connected,Disconnected' },
    });
    const instance = await t.api('GET', `/instances/${id}`, { token: owner.jwt });
    expect(instance.body).to.include({ webhook: 'https://hooks.example.com/in', events_subscribe: 'Message,Connected,Disconnected' });
  });

  it('keeps the events when they are omitted, and clears with an empty URL', async () => {
    const { id } = await newInstance(t.api, owner);
    await set(id, { webhookURL: 'https://hooks.example.com/a', events: 'All' });
    const moved = await set(id, { webhookURL: 'https://hooks.example.com/b' });
    expect(moved.body.data).to.deep.equal({ webhook: 'https://hooks.example.com/b', events: 'All' });
    const cleared = await set(id, { webhookURL: '' });
    expect(cleared.body.data).to.deep.equal({ webhook: '', events: '' });
  });

  it('refuses names outside the Events table, spaces, and a missing URL with 400', async () => {
    const { id } = await newInstance(t.api, owner);
    for (const [body, field] of [
      [{ webhookURL: 'https://hooks.example.com/x', events: 'Receipt' }, 'events'],
      [{ webhookURL: 'https://hooks.example.com/x', events: 'MessageDelivered' }, 'events'],
      [{ webhookURL: 'https://hooks.example.com/x', events: 'MessageRead' }, 'events'],
      [{ webhookURL: 'https://hooks.example.com/x', events: 'message' }, 'events'],
      [{ webhookURL: 'https://hooks.example.com/x', events: 'Message, Connected' }, 'events'],
      [{ webhookURL: 'https://hooks.example.com/x', events: 'Message,' }, 'events'],
      [{ events: 'Message' }, 'webhookURL'],
      [{ webhookURL: 42 }, 'webhookURL'],
    ] as const) {
      const res = await set(id, body);
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details.map((d: { field: string }) => d.field), JSON.stringify(body)).to.include(field);
    }
    expect((await t.api('GET', `/instances/${id}`, { token: owner.jwt })).body.webhook).to.equal('');
  });

  it('refuses unsafe targets unless ALLOW_PRIVATE_TARGETS is on', async () => {
    const { id } = await newInstance(t.api, owner);
    for (const url of [
      'http://hooks.example.com/x',
      'https://127.0.0.1/x',
      'https://localhost/x',
      'https://10.0.0.8/x',
      'https://192.168.1.1/x',
      'https://169.254.169.254/latest',
      'https://[::1]/x',
      'https://[fd00::1]/x',
      'https://metadata.google.internal/x',
      'https://user:pw@hooks.example.com/x',
    ]) {
      const res = await set(id, { webhookURL: url });
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details[0].field).to.equal('webhookURL');
    }
    expectError(await t.api('PUT', '/instances/create', { token: owner.jwt, body: { name: 'unsafe', webhook: 'https://10.1.1.1/' } }), 400, 'invalid_input');
  });

  it('shows the signing secret and rotates it', async () => {
    const { id } = await newInstance(t.api, owner);
    const first = await t.api('GET', `/instances/${id}/webhook`, { token: owner.jwt });
    expect(first.status).to.equal(200);
    expect(Object.keys(first.body.data)).to.deep.equal(['webhook', 'events', 'secret']);
    expect(first.body.data.secret).to.match(/^whsec_[A-Za-z0-9+/=_-]{32,}$/);
    const rotated = await t.api('POST', `/instances/${id}/webhook/secret/rotate`, { token: owner.jwt });
    expect(rotated.status).to.equal(200);
    expect(rotated.body.data.secret).to.not.equal(first.body.data.secret);
    const again = await t.api('GET', `/instances/${id}/webhook`, { token: owner.jwt });
    expect(again.body.data.secret).to.equal(rotated.body.data.secret);
  });
});
