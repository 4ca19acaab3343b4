/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';

const send = (t: TestGateway, owner: TestAccount, id: string, phone: string, message: string) =>
  t.api('POST', `/instances/${id}/chat/send/text`, { token: owner.jwt, body: { phone, message } });

const inbox = async (t: TestGateway, owner: TestAccount, phone: string) =>
  (await t.api('GET', `/sandbox/phones/${phone}/inbox`, { token: owner.jwt })).body.messages as any[];

describe('send pacing over HTTP (sandbox)', function () {
  this.timeout(30_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-pacing-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('sends the first at once, answers the rest queued, and sends them in order at the rate, under the ids answered', async () => {
    const t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox', SEND_RATE_PER_MIN: '120', SEND_JITTER_MS: '0' });
    try {
      const owner = await newAccount(t.api);
      const { id } = await newInstance(t.api, owner);
      const me = await newPhone(t.api, owner);
      const them = await newPhone(t.api, owner);
      await pairByQr(t.api, owner, id, me.phone);
      const answers = [];
      // p1 takes its turn before it is sent and recorded, so its MessageSent comes late by its
      // send (a cold sandbox send waits on the disk); p2's turn is 500 ms after p1's was taken.
      const beforeP1 = Date.now();
      for (const text of ['p1', 'p2', 'p3', 'p4']) answers.push(await send(t, owner, id, them.phone, text));
      expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200]);
      expect(answers[0]!.body.data).to.include({ status: 'sent', jid: `${them.phone}@s.whatsapp.net` });
      for (const a of answers.slice(1)) expect(a.body.data).to.deep.equal({ message_id: a.body.data.message_id, jid: `${them.phone}@s.whatsapp.net`, status: 'queued', timestamp: a.body.data.timestamp });
      await waitFor(async () => (await inbox(t, owner, them.phone)).length === 4, 'all four received', 10_000);
      const got = await inbox(t, owner, them.phone);
      expect(got.map((m) => m.text)).to.deep.equal(['p1', 'p2', 'p3', 'p4']);
      expect(got.map((m) => m.message_id)).to.deep.equal(answers.map((a) => a.body.data.message_id));
      // Spaced at the rate: 120 a minute is one every 500 ms, so the n-th send's turn comes 500 ms
      // per send after p1's (taken after beforeP1), and it is recorded after its turn. Measured from
      // that start, not between records: one send slower than the next under load narrows a gap
      // between records below 500 ms while the turns kept the pace.
      // The phone has a message before the gateway has recorded sending it: wait for the records.
      const recorded = async () => (await t.gateway.events.readStream(`session-${id}`)).filter((e) => e.type === 'MessageSent');
      await waitFor(async () => (await recorded()).length >= 4, 'four sends recorded', 10_000);
      const sent = (await recorded()).map((e) => e.created.getTime());
      expect(sent).to.have.length(4);
      for (let i = 1; i < sent.length; i++) expect(sent[i]! - beforeP1, `send ${i + 1}, from before p1`).to.be.at.least(500 * i);
    } finally {
      await t.stop();
    }
  });

  it('keeps queued sends across a restart, and sends each once', async () => {
    // No fixed port: nothing here needs the same address after the restart, and a port found
    // free then released can be taken meanwhile (with PORT set, the start does not retry).
    const env = { MESSAGING_NETWORK: 'sandbox', SEND_RATE_PER_MIN: '60', SEND_JITTER_MS: '0' };
    let t = await startTestGateway(env, {}, dir);
    const owner = await newAccount(t.api);
    const { id } = await newInstance(t.api, owner);
    const me = await newPhone(t.api, owner);
    const them = await newPhone(t.api, owner);
    await pairByQr(t.api, owner, id, me.phone);
    const answers = [];
    for (const text of ['r1', 'r2', 'r3']) answers.push(await send(t, owner, id, them.phone, text));
    expect(answers.slice(1).every((a) => a.body.data.status === 'queued')).to.equal(true);
    await t.stop();
    t = await startTestGateway(env, {}, dir);
    try {
      await waitFor(async () => (await inbox(t, owner, them.phone)).length === 3, 'all three after the restart', 15_000);
      const recorded = async () => (await t.gateway.events.readStream(`session-${id}`)).filter((e) => e.type === 'MessageSent');
      await waitFor(async () => (await recorded()).length >= 3, 'all three recorded', 10_000);
      // Then a while longer: a send made twice would show by now (at 60 a minute, one a second).
      await new Promise((r) => setTimeout(r, 1500));
      const got = await inbox(t, owner, them.phone);
      expect(got.map((m) => m.text)).to.deep.equal(['r1', 'r2', 'r3']);
      expect(await recorded()).to.have.length(3);
    } finally {
      await t.stop();
    }
  });

  it('queues nothing for a session that is down', async () => {
    const t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox', SEND_RATE_PER_MIN: '1', SEND_JITTER_MS: '0' });
    try {
      const owner = await newAccount(t.api);
      const { id } = await newInstance(t.api, owner);
      const res = await send(t, owner, id, '5511999990000', 'nobody home');
      expect(res.status).to.equal(409);
      expect(res.body.error.type).to.equal('not_connected');
    } finally {
      await t.stop();
    }
  });
});
