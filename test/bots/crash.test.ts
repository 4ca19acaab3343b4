/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiFor, newAccount, newInstance } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/process.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { OpenAiTestServer } from '../servers/bots/openai-test-server.js';

describe('bots survive a SIGKILL between a message and its answer', function () {
  this.timeout(300_000);
  let dataDir: string;
  let openai: OpenAiTestServer;
  const running: GatewayProcess[] = [];
  before(async () => (openai = await new OpenAiTestServer().start()));
  after(() => openai.close());
  beforeEach(async () => (dataDir = await mkdtemp(join(tmpdir(), 'gw-botcrash-'))));
  afterEach(async () => {
    for (const gw of running.splice(0)) {
      if (gw.child.exitCode === null && gw.child.signalCode === null) {
        gw.child.kill('SIGTERM');
        await gw.exited;
      }
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('the answer arrives once: killed while the bot thinks, and killed while the answer is being typed', async () => {
    const env = { DATA_DIR: dataDir, MESSAGING_NETWORK: 'sandbox', ALLOW_PRIVATE_TARGETS: 'true' };
    const restart = async (gw: GatewayProcess) => {
      gw.child.kill('SIGKILL');
      await gw.exited;
      const next = await spawnGateway(env);
      running.push(next);
      return next;
    };
    let gw = await spawnGateway(env);
    running.push(gw);
    let api = apiFor(gw.url);
    const owner = await newAccount(api);
    const { id } = await newInstance(api, owner);
    const me = await newPhone(api, owner);
    const them = await newPhone(api, owner);
    await pairByQr(api, owner, id, me.phone);
    const saved = await api('POST', `/instances/${id}/bots/ai`, { token: owner.jwt, body: { kind: 'openai', url: `${openai.url}/v1`, model: 'm', api_key: openai.apiKey, delay_ms: 0 } });
    expect(saved.status, saved.text).to.equal(200);
    const say = (text: string) => api('POST', `/sandbox/phones/${them.phone}/messages`, { token: owner.jwt, body: { to: me.phone, text } });
    const answers = async () => (((await api('GET', `/sandbox/phones/${them.phone}/inbox`, { token: owner.jwt })).body?.messages ?? []) as any[]).filter((m) => !m.from_me).map((m) => m.text);

    // 1. The bot's server is thinking when the gateway dies.
    openai.hold = true;
    const asked = openai.requests.length;
    expect((await say('first')).status).to.equal(201);
    await waitFor(() => openai.waiting === 1, 'the bot asked', 30_000);
    gw = await restart(gw);
    api = apiFor(gw.url);
    openai.release();
    await waitFor(async () => (await answers()).length === 1, 'the answer after the restart', 60_000);
    // The bot was asked again after the restart (the first call died with the gateway): one answer all the same.
    expect(openai.requests.length - asked).to.be.at.least(1);

    // 2. The answer is recorded and being typed (4 s) when the gateway dies.
    expect((await api('POST', `/instances/${id}/bots/ai`, { token: owner.jwt, body: { kind: 'openai', url: `${openai.url}/v1`, model: 'm', delay_ms: 4000 } })).status).to.equal(200);
    expect((await say('second')).status).to.equal(201);
    await waitFor(async () => (await api('GET', `/instances/${id}/bots/ai/sessions`, { token: owner.jwt })).body?.data?.[0]?.exchanges === 2, 'the answer recorded', 30_000);
    gw = await restart(gw);
    api = apiFor(gw.url);
    await waitFor(async () => (await answers()).length === 2, 'the second answer after the restart', 60_000);
    // Typing takes 4 s a send: a repeat would show within that and a bit.
    await new Promise((r) => setTimeout(r, 6000));
    expect(await answers()).to.deep.equal(['You said: first (1 messages of context)', 'You said: second (3 messages of context)']);
    // Recorded before the kill: the restart queued the same answer, and did not ask the bot again.
    expect(openai.requests.filter((r) => r.messages.at(-1)?.content === 'second')).to.have.length(1);
  });
});
