import { expect } from 'chai';
import { expectError, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';

const openai = { kind: 'openai', url: 'http://127.0.0.1:9/v1', model: 'tiny', api_key: 'sk-test-0123456789abcdef', stop_keyword: 'stop', trigger: { type: 'keyword', value: 'help' } };

describe('bots: configuration over HTTP', function () {
  this.timeout(30_000);
  const { t, owner } = useGateway();

  it('saves a bot, answers it with the key masked, lists it, and removes it', async () => {
    const { id } = await newInstance(t.api, owner);
    const saved = await t.api('POST', `/instances/${id}/bots/helper`, { token: owner.jwt, body: openai });
    expect(saved.status, saved.text).to.equal(200);
    expect(saved.body.data).to.include({ bot_id: 'helper', kind: 'openai', enabled: true, model: 'tiny', api_key_masked: 'sk-t…cdef', stop_keyword: 'stop', scope: 'contacts', expire_minutes: 60, pause_on_human: true });
    expect(saved.text).not.to.include('0123456789abcdef');
    expect(saved.body.data.vision, 'vision is off unless asked').to.equal(false);
    const seeing = await t.api('POST', `/instances/${id}/bots/seeing`, { token: owner.jwt, body: { ...openai, vision: true } });
    expect(seeing.body.data.vision).to.equal(true);
    expect((await t.api('DELETE', `/instances/${id}/bots/seeing`, { token: owner.jwt })).status).to.equal(200);
    // A save without the key keeps it.
    const again = await t.api('POST', `/instances/${id}/bots/helper`, { token: owner.jwt, body: { ...openai, api_key: undefined, delay_ms: 0 } });
    expect(again.body.data).to.include({ api_key_masked: 'sk-t…cdef', delay_ms: 0 });
    const list = await t.api('GET', `/instances/${id}/bots`, { token: owner.jwt });
    expect(list.body.data.map((b: { bot_id: string }) => b.bot_id)).to.deep.equal(['helper']);
    expect((await t.api('GET', `/instances/${id}/bots/helper`, { token: owner.jwt })).body.data.api_key_masked).to.equal('sk-t…cdef');
    // The log holds the key sealed; history shows neither it nor its mask, and shows the stop keyword.
    const history = await t.api('GET', `/instances/${id}/history?types=BotConfigured`, { token: owner.jwt });
    expect(history.status, history.text).to.equal(200);
    expect(history.text).not.to.include('0123456789abcdef');
    expect(history.text).not.to.include('sk-t…cdef');
    expect(history.text).to.include('"stop_keyword":"stop"');
    expect((await t.api('DELETE', `/instances/${id}/bots/helper`, { token: owner.jwt })).status).to.equal(200);
    expectError(await t.api('GET', `/instances/${id}/bots/helper`, { token: owner.jwt }), 404, 'not_found');
  });

  it('refuses bad input with a 400 naming the field, and records nothing', async () => {
    const { id } = await newInstance(t.api, owner);
    const bad: [Record<string, unknown>, string][] = [
      [{ ...openai, url: 'ftp://x.example/v1' }, 'url'],
      [{ ...openai, trigger: { type: 'regex', value: '(a)\\1' } }, 'trigger.value'],
      [{ ...openai, trigger: { type: 'regex', value: '(?<=a)b' } }, 'trigger.value'],
      [{ ...openai, trigger: { type: 'keyword' } }, 'trigger.value'],
      [{ ...openai, model: undefined }, 'model'],
      [{ kind: 'typebot', url: 'http://127.0.0.1:9' }, 'typebot'],
      [{ kind: 'typebot', url: 'http://127.0.0.1:9', typebot: 'f', model: 'm' }, 'model'],
      [{ kind: 'typebot', url: 'http://127.0.0.1:9', typebot: 'f', vision: true }, 'vision'],
      [{ ...openai, vision: 'yes' }, 'vision'],
      [{ ...openai, delay_ms: -1 }, 'delay_ms'],
      [{ ...openai, surprise: 1 }, 'surprise'],
    ];
    for (const [body, field] of bad) {
      const res = await t.api('POST', `/instances/${id}/bots/b1`, { token: owner.jwt, body });
      expect(res.status, `${field}: ${res.text}`).to.equal(400);
      expect(res.text, field).to.include(field);
    }
    expectError(await t.api('POST', `/instances/${id}/bots/bad%20id`, { token: owner.jwt, body: openai }), 400, 'invalid_input');
    expect((await t.api('GET', `/instances/${id}/bots`, { token: owner.jwt })).body.data).to.deep.equal([]);
  });

  it('documents the bot routes in the OpenAPI document', async () => {
    const doc = (await t.api('GET', '/openapi.json')).body;
    for (const path of ['/instances/{id}/bots', '/instances/{id}/bots/{bot_id}', '/instances/{id}/bots/{bot_id}/sessions', '/instances/{id}/bots/{bot_id}/sessions/{jid}/pause', '/instances/{id}/bots/{bot_id}/sessions/{jid}/resume']) {
      expect(doc.paths, path).to.have.property(path);
    }
  });

  it('runs a catastrophic pattern in linear time (RE2): it saves', async () => {
    const { id } = await newInstance(t.api, owner);
    const res = await t.api('POST', `/instances/${id}/bots/b1`, { token: owner.jwt, body: { ...openai, trigger: { type: 'regex', value: '^(a+)+$' } } });
    expect(res.status, res.text).to.equal(200);
  });

  it('answers 402 to changes on a canceled instance, and 401/403 without the owner’s JWT', async () => {
    const { id, token } = await newInstance(t.api, owner);
    expectError(await t.api('POST', `/instances/${id}/bots/b1`, { body: openai }), 401, 'unauthorized');
    const instanceToken = await t.api('GET', `/instances/${id}/bots`, { headers: { 'x-instance-token': token, 'x-client-token': owner.clientToken } });
    expect(instanceToken.status).to.be.oneOf([401, 403]);
    expect((await t.api('POST', `/instances/${id}/bots/b1`, { token: owner.jwt, body: openai })).status).to.equal(200);
    expect((await t.api('DELETE', `/instances/${id}/cancel`, { token: owner.jwt })).status).to.equal(200);
    expectError(await t.api('POST', `/instances/${id}/bots/b1`, { token: owner.jwt, body: openai }), 402, 'payment_required');
    expectError(await t.api('DELETE', `/instances/${id}/bots/b1`, { token: owner.jwt }), 402, 'payment_required');
    expect((await t.api('GET', `/instances/${id}/bots/b1`, { token: owner.jwt })).status).to.equal(200);
  });
});
