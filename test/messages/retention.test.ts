import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { sessionStream, type NetworkMessage } from '../../src/domain/session/events.js';
import { openBackends, type Backends } from '../../src/infra/backends.js';
import { loadConfig } from '../../src/infra/config/config.js';
import { MessageQueries } from '../../src/projections/messages/message-queries.js';
import { messagesProjection } from '../../src/projections/messages/messages-projection.js';
import { MessageRetention } from '../../src/projections/messages/retention-sweep.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { testBackendsFor } from '../support/gateway.js';
import { waitFor } from '../support/sandbox.js';

const DAY = 86_400_000;

describe('messages read model: retention drops contents, keeps the rest', function () {
  this.timeout(60_000);
  let dir: string;
  let backends: Backends;
  let runner: ProjectionRunner;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'messages-retention-'));
    backends = await openBackends(loadConfig({ DATA_DIR: dir, ...(await testBackendsFor(dir)) }));
    runner = new ProjectionRunner(backends.events, backends.docs, [messagesProjection], pino({ level: 'silent' }));
    await runner.start();
  });
  afterEach(async () => {
    await runner.stop();
    await backends.close();
    await rm(dir, { recursive: true, force: true });
  });

  const alice = '5511988887777@s.whatsapp.net';
  const message = (id: string, timestampS: number, extra: Partial<NetworkMessage>): NetworkMessage => ({
    id, chat: alice, sender: alice, from_me: false, is_group: false, timestamp_s: timestampS, type: 'text', ...extra,
  });

  it('after SESSION_RETENTION_DAYS a message has no text, caption, media or search words; sender, time, reactions and kind stay', async () => {
    const now = Date.UTC(2030, 5, 1);
    const old = Math.floor((now - 31 * DAY) / 1000);
    const recent = Math.floor((now - DAY) / 1000);
    const media = { kind: 'image' as const, url: 'https://mmg.whatsapp.net/x', media_key: 'a2V5', file_sha256: 'c2hh', file_length: 3, mimetype: 'image/png', caption: 'old photo' };
    const events = [
      message('OLD1', old, { text: 'old words' }),
      message('OLD2', old + 1, { type: 'media', media }),
      message('NEW1', recent, { text: 'new words' }),
      message('R1', recent + 1, { type: 'reaction', reaction: { message_id: 'OLD1', text: '❤️' } }),
    ].map((m) => ({ id: randomUUID(), type: 'MessageReceived', data: { upsert: 'notify', message: m }, metadata: { occurredAt: new Date(now).toISOString(), instanceId: 'I1' } }));
    await backends.events.append(sessionStream('I1'), events, 'any');
    const head = await backends.events.headPosition();
    await waitFor(() => runner.hasReached(head), 'projected');
    const queries = new MessageQueries(backends.docs);
    expect((await queries.search('I1', { q: 'words', limit: 10 })).messages.map((m) => m.message_id)).to.deep.equal(['NEW1', 'OLD1']);

    const sweep = new MessageRetention({ docs: backends.docs, clock: { now: () => new Date(now) }, logger: pino({ level: 'silent' }), retentionDays: 30, intervalMs: 60_000, batch: 1 });
    expect(await sweep.sweep()).to.equal(2);
    expect(await sweep.sweep()).to.equal(0);
    const [old1, old2, new1] = await Promise.all(['OLD1', 'OLD2', 'NEW1'].map((id) => queries.byId('I1', id)));
    expect(old1).to.deep.include({ kind: 'text', sender_jid: alice, reactions: [{ emoji: '❤️', sender_jid: alice }], revoked: false });
    expect(old1).to.not.have.any.keys('text', 'caption', 'media');
    expect(old2).to.deep.include({ kind: 'image' });
    expect(old2).to.not.have.any.keys('text', 'caption', 'media');
    expect(new1).to.deep.include({ text: 'new words' });
    expect((await queries.search('I1', { q: 'words', limit: 10 })).messages.map((m) => m.message_id)).to.deep.equal(['NEW1']);
    expect((await queries.page('I1', alice, 10)).messages.map((m) => m.message_id)).to.deep.equal(['NEW1', 'OLD2', 'OLD1']);
  });
});
