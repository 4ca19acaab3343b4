/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiFor, newAccount, newInstance, type Api } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/process.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { Receiver } from './support/receiver.js';

const TOTAL = 1000;
const SENDERS = 8;

describe('webhooks across a crash (SIGKILL)', function () {
  this.timeout(180_000);
  let dataDir: string;
  let rx: Receiver;
  const running: GatewayProcess[] = [];

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-crash-'));
    rx = await new Receiver().start();
  });
  afterEach(async () => {
    for (const gw of running) if (gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
    await rx.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const env = () => ({
    DATA_DIR: dataDir,
    MESSAGING_NETWORK: 'sandbox',
    ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_BASE_MS: '20',
    WEBHOOK_RETRY_MAX_MS: '500',
  });

  it('delivers every acknowledged inbound message at least once after a kill and a restart', async () => {
    // A receiver slower than the senders, so a backlog is queued when the process dies.
    rx.respond = () => ({ status: 200, delayMs: 15 });
    const first = await spawnGateway(env());
    running.push(first);
    let api: Api = apiFor(first.url);
    const owner = await newAccount(api);
    const instance = await newInstance(api, owner, { webhook: rx.url, events_subscribe: ['Message'] });
    const own = await newPhone(api, owner);
    const contact = await newPhone(api, owner);
    await pairByQr(api, owner, instance.id, own.phone);

    const acknowledged = new Set<string>();
    let next = 0;
    let killed = false;
    const send = async (target: Api) => {
      const i = next++;
      const res = await target('POST', `/sandbox/phones/${contact.phone}/messages`, { token: owner.jwt, body: { to: own.phone, text: `message ${i}` } });
      if (res.status !== 201) throw new Error(`send ${i}: ${res.status} ${res.text}`);
      acknowledged.add(res.body.message_id as string);
    };
    // Senders run until the kill; a request cut off by it is simply not acknowledged.
    const senders = Array.from({ length: SENDERS }, async () => {
      while (!killed && next < TOTAL) {
        try {
          await send(api);
        } catch {
          if (!killed) throw new Error('a send failed before the kill');
          next--;
          return;
        }
        if (acknowledged.size >= TOTAL / 2 && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    });
    await Promise.all(senders);
    expect(await first.exited).to.equal(null);
    const beforeKill = acknowledged.size;
    const deliveredBeforeKill = rx.received.length;

    const second = await spawnGateway(env());
    running.push(second);
    api = apiFor(second.url);
    // The rest of the thousand after the restart (the pairing survives it).
    while (acknowledged.size < TOTAL) await send(api);

    const delivered = () => new Set(rx.received.map((r) => r.body.event.Info.ID as string));
    await waitFor(() => [...acknowledged].every((id) => delivered().has(id)), 'every acknowledged message delivered', 120_000);
    const missing = [...acknowledged].filter((id) => !delivered().has(id));
    expect(missing).to.deep.equal([]);

    // A duplicate is the very same delivery: same id, same seq, same bytes.
    const byId = new Map<string, string>();
    for (const r of rx.received) {
      const seen = byId.get(r.body.id);
      if (seen !== undefined) expect(r.raw).to.equal(seen);
      byId.set(r.body.id, r.raw);
    }
    const duplicates = rx.received.length - byId.size;
    console.log(
      `      crash test: ${acknowledged.size} acknowledged (${beforeKill} before the kill), ${deliveredBeforeKill} delivered before it, ` +
        `${rx.received.length} deliveries received after all, ${duplicates} duplicates, 0 lost`,
    );
    const seqs = [...byId.keys()].map((id) => JSON.parse(byId.get(id)!).seq as number).sort((a, b) => a - b);
    expect(seqs[0]).to.equal(1);
    expect(new Set(seqs).size).to.equal(seqs.length);

    second.child.kill('SIGTERM');
    expect(await second.exited).to.equal(0);
  });
});
