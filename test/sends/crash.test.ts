/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiFor, newAccount, newInstance } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/process.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';

describe('scheduled and queued sends survive a SIGKILL', function () {
  this.timeout(120_000);
  let dataDir: string;
  const running: GatewayProcess[] = [];
  beforeEach(async () => (dataDir = await mkdtemp(join(tmpdir(), 'gw-sendcrash-'))));
  afterEach(async () => {
    for (const gw of running.splice(0)) {
      if (gw.child.exitCode === null && gw.child.signalCode === null) {
        gw.child.kill('SIGTERM');
        await gw.exited;
      }
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('after the restart each goes out exactly once, at its time', async () => {
    const env = { DATA_DIR: dataDir, MESSAGING_NETWORK: 'sandbox', SEND_RATE_PER_MIN: '60', SEND_JITTER_MS: '0', ALLOW_PRIVATE_TARGETS: 'true' };
    const first = await spawnGateway(env);
    running.push(first);
    let api = apiFor(first.url);
    const owner = await newAccount(api);
    const { id } = await newInstance(api, owner);
    const me = await newPhone(api, owner);
    const them = await newPhone(api, owner);
    await pairByQr(api, owner, id, me.phone);
    const send = (body: Record<string, unknown>) => api('POST', `/instances/${id}/chat/send/text`, { token: owner.jwt, body: { phone: them.phone, ...body } });
    const answers: any[] = [];
    for (const text of ['now', 'queued 1', 'queued 2']) answers.push((await send({ message: text })).body.data);
    expect(answers.map((a) => a.status)).to.deep.equal(['sent', 'queued', 'queued']);
    const at1 = new Date(Date.now() + 12_000).toISOString();
    const at2 = new Date(Date.now() + 15_000).toISOString();
    const scheduled = [(await send({ message: 'scheduled 1', send_at: at1 })).body.data, (await send({ message: 'scheduled 2', send_at: at2 })).body.data];
    expect(scheduled.map((a) => a.status)).to.deep.equal(['scheduled', 'scheduled']);
    // Killed at once: no chance to drain (queued sends go one a second).
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await spawnGateway(env);
    running.push(second);
    api = apiFor(second.url);
    const inbox = async () => ((await api('GET', `/sandbox/phones/${them.phone}/inbox`, { token: owner.jwt })).body?.messages ?? []) as any[];
    await waitFor(async () => (await inbox()).length >= 5, 'all five at the far end', 60_000);
    // A second a send at this pace: anything sent twice would show by now.
    await new Promise((r) => setTimeout(r, 2500));
    const got = await inbox();
    const ids = [...answers, ...scheduled].map((a) => a.message_id);
    for (const mid of ids) expect(got.filter((m) => m.message_id === mid), mid).to.have.length(1);
    expect(got).to.have.length(5);
    const byId = new Map(got.map((m) => [m.message_id, m]));
    expect(Date.parse(byId.get(scheduled[0].message_id).timestamp)).to.be.at.least(Date.parse(at1) - 1000);
    expect(Date.parse(byId.get(scheduled[1].message_id).timestamp)).to.be.at.least(Date.parse(at2) - 1000);
    for (const mid of ids) {
      await waitFor(async () => (await api('GET', `/instances/${id}/messages/${mid}`, { token: owner.jwt })).body?.data?.status === 'sent', `${mid} sent`, 20_000);
    }
  });
});
