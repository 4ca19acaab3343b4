import { expect } from 'chai';
import { BOT_JOBS, botLane, type BotJobDoc } from '../../src/bots/jobs.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/sandbox.js';

describe('bot runner: one head per conversation, however long another backlog is', function () {
  this.timeout(120_000);
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway({ LOG_LEVEL: process.env.TEST_LOG ?? 'silent' });
  });
  after(async () => {
    await t.stop();
  });

  it('finds the head of a conversation behind 1,001 pending jobs of another (backed off) and carries it out', async () => {
    const instance = 'lanes-instance';
    const job = (botId: string, jid: string, pos: number, dueMs: number): BotJobDoc => ({
      _id: `evt-${botId}-${pos}:${botId}`,
      instance_id: instance,
      account_id: '',
      bot_id: botId,
      jid,
      lane: botLane(instance, botId, jid),
      pos,
      state: 'pending',
      attempts: 0,
      due_ms: dueMs,
      last_error: null,
      work: { kind: 'message', message_id: `m${pos}`, text: 'hi', push_name: '', at_ms: 0 },
    });
    // A conversation whose bot server failed: its 1,001 jobs wait an hour behind their head.
    const later = Date.now() + 3_600_000;
    const backlog = Array.from({ length: 1001 }, (_, i) => job('busy', '5511000000001@s.whatsapp.net', i + 1, later));
    const other = job('quiet', '5511000000002@s.whatsapp.net', 5000, 0);
    const jobs = t.gateway.docs.collection<BotJobDoc>(BOT_JOBS);
    await jobs.insertMany([...backlog, other]);
    // The quiet lane's bot does not exist: its job is carried out as "skipped", which proves it was reached.
    await waitFor(async () => (await jobs.findOne({ _id: other._id }))?.state !== 'pending', 'the other conversation’s job carried out', 60_000);
    expect(await jobs.findOne({ _id: other._id })).to.include({ state: 'skipped', last_error: 'the bot was removed' });
    expect(await jobs.count({ lane: backlog[0]?.lane, state: 'pending' })).to.equal(1001);
  });
});
