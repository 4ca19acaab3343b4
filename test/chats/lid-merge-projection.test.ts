import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import type { NetworkMessage, SessionEvent } from '../../src/domain/session/events.js';
import { AliasedDocumentStore } from '../../src/infra/docstore/aliased-document-store.js';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import { EmbeddedEventStore } from '../../src/infra/eventstore/embedded/embedded-event-store.js';
import { ChatQueries } from '../../src/projections/chats/chat-queries.js';
import { CHATS, chatsProjection, newChat, type ChatDoc } from '../../src/projections/chats/chats-projection.js';
import { mergeChats } from '../../src/projections/chats/lid-merge.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { silentProgress } from '../../src/rebuild/progress.js';
import { READ_MODELS } from '../../src/rebuild/read-models.js';
import { Rebuilder } from '../../src/rebuild/rebuilder.js';

const INSTANCE = 'I1';
const PN = '5511900000001@s.whatsapp.net';
const LID = '123456789012345@lid';
const OTHER = '5511900000002@s.whatsapp.net';

const message = (over: Partial<NetworkMessage> & { id: string; chat: string; timestamp_s: number }): NetworkMessage => ({
  sender: over.chat,
  from_me: false,
  is_group: false,
  type: 'text',
  text: 'hi',
  ...over,
});
const received = (m: NetworkMessage): SessionEvent => ({ type: 'MessageReceived', data: { message: m, upsert: 'notify' } });
const sent = (m: NetworkMessage): SessionEvent => ({ type: 'MessageSent', data: { message: { ...m, from_me: true }, origin: 'api' } });
const byPhone = (id: string, s: number, push_name?: string) => received(message({ id, chat: PN, timestamp_s: s, ...(push_name ? { push_name } : {}) }));
const byLid = (id: string, s: number, push_name = 'Lid Name') => received(message({ id, chat: LID, sender: LID, push_name, timestamp_s: s, addressing_mode: 'lid' }));
const learned: SessionEvent = { type: 'LidMappingLearned', data: { pairs: [{ pn: PN, lid: LID }] } };
const withPair = (id: string, s: number) => received(message({ id, chat: PN, chat_lid: LID, sender: PN, sender_pn: PN, sender_lid: LID, push_name: 'Newest Name', timestamp_s: s }));

/**
 * Given/When/Then over the real runner and stores: events appended to the log, folded by the
 * projection runner (which commits before an event that reads), read back as the chat list.
 */
describe('chats projection: a person with a phone chat and a LID chat becomes one chat when the pair is learned', function () {
  this.timeout(20_000);
  let dir: string;
  let events: EmbeddedEventStore;
  let docs: AliasedDocumentStore;
  let raw: EmbeddedDocumentStore;
  let runner: ProjectionRunner;
  let head = 0n;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lid-merge-'));
    events = await EmbeddedEventStore.open({ path: join(dir, 'events') });
    raw = await EmbeddedDocumentStore.open({ path: join(dir, 'docs') });
    docs = await AliasedDocumentStore.open(raw);
    runner = new ProjectionRunner(events, docs, [chatsProjection], pino({ level: 'silent' }));
    await runner.start();
  });
  afterEach(async () => {
    await runner.stop();
    await events.close();
    await raw.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Appends the events (one append each, or all in one when `together`) and waits until folded. */
  async function given(list: SessionEvent[], together = false): Promise<void> {
    const data = (e: SessionEvent) => ({ id: randomUUID(), type: e.type, data: e.data as unknown as Record<string, never>, metadata: {} });
    if (together) head = (await events.append(`session-${INSTANCE}`, list.map(data), 'any')).position;
    else for (const e of list) head = (await events.append(`session-${INSTANCE}`, [data(e)], 'any')).position;
    expect(await runner.waitFor(head, ['chats'], 10_000)).to.equal(true);
  }
  const when = given;
  const list = async () => (await new ChatQueries(docs).page(INSTANCE, 1, 50)).chats;

  it('Given both chats, when LidMappingLearned arrives, then one chat under the phone jid: counts added, newest message, name and settings', async () => {
    await given([byPhone('p1', 100, 'Phone Name'), byPhone('p2', 101), byLid('l1', 200), { type: 'ChatUpdated', data: { jid: LID, changes: { archived: true } } }]);
    expect((await list()).map((c) => c.jid).sort()).to.deep.equal([LID, PN].sort());
    await when([learned]);
    const chats = await list();
    expect(chats).to.have.length(1);
    expect(chats[0]).to.include({ jid: PN, phone: '5511900000001', lid: LID, messages_unread: 3, name: 'Lid Name', last_message_id: 'l1', last_message_timestamp_ms: 200_000, archived: true });
    expect(chats[0]?._id).to.equal(`${INSTANCE}:${LID}`);
    // Writes by either id find the one chat.
    await when([byPhone('p3', 300), { type: 'ReceiptReceived', data: { chat: LID, sender: LID, message_ids: ['p3'], state: 'ReadSelf', timestamp_s: 301 } }]);
    const after = await list();
    expect(after).to.have.length(1);
    expect(after[0]).to.include({ jid: PN, messages_unread: 0, last_message_id: 'p3' });
  });

  it('Given both chats, when a message carries the pair (no LidMappingLearned), then one chat, that message the newest', async () => {
    await given([sent(message({ id: 'out1', chat: PN, timestamp_s: 100 })), byLid('l1', 150), byLid('l2', 160)]);
    expect((await list()).map((c) => c.jid).sort()).to.deep.equal([LID, PN].sort());
    await when([withPair('m3', 170)]);
    const chats = await list();
    expect(chats).to.have.length(1);
    expect(chats[0]).to.include({ jid: PN, messages_unread: 3, last_message_id: 'm3', name: 'Lid Name' });
  });

  it('Given the phone chat newer, then its message, name and settings win', async () => {
    await given([byLid('l1', 100), byPhone('p1', 500, 'Phone Name'), { type: 'ChatUpdated', data: { jid: PN, changes: { pinned: true } } }]);
    expect(await list()).to.have.length(2);
    await when([learned]);
    const [chat] = await list();
    expect(chat).to.include({ jid: PN, messages_unread: 2, last_message_id: 'p1', name: 'Phone Name', pinned: true });
  });

  it('merges when the chats and the pair arrive in one batch (the runner commits before the event that reads)', async () => {
    await given([byPhone('p1', 100), byLid('l1', 200), learned, byPhone('p2', 300)], true);
    const chats = await list();
    expect(chats).to.have.length(1);
    expect(chats[0]).to.include({ jid: PN, messages_unread: 3, last_message_id: 'p2' });
  });

  it('is idempotent: the pair learned again changes nothing, and other people are untouched', async () => {
    await given([byPhone('p1', 100), byLid('l1', 200), received(message({ id: 'o1', chat: OTHER, timestamp_s: 50 }))]);
    expect(await list()).to.have.length(3);
    await when([learned]);
    const once = await list();
    await when([learned, { type: 'LidMappingLearned', data: { pairs: [{ pn: PN, lid: LID }, { pn: PN, lid: LID }] } }]);
    expect(await list()).to.deep.equal(once);
    expect(once.map((c) => c.jid)).to.deep.equal([PN, OTHER]);
  });

  it('replayed from the log by the rebuild (in memory), gives the same chats as the live fold', async () => {
    await given([byPhone('p1', 100, 'P'), byLid('l1', 200), learned, byLid('l2', 250), withPair('m3', 260), byPhone('p2', 270)]);
    const live = await docs.collection<ChatDoc>(CHATS).find({}, { sort: { _id: 1 } });
    await runner.stop();
    const model = READ_MODELS.find((m) => m.name === 'chats');
    if (!model) throw new Error('no chats read model');
    const { results } = await new Rebuilder(events, docs, silentProgress).rebuild([model]);
    expect(results[0]?.after.sha256).to.equal(results[0]?.before.sha256);
    expect(await docs.collection<ChatDoc>(CHATS).find({}, { sort: { _id: 1 } })).to.deep.equal(live);
    expect(live).to.have.length(1);
    runner = new ProjectionRunner(events, docs, [chatsProjection], pino({ level: 'silent' }));
    await runner.start();
  });
});

describe('mergeChats (the rule)', () => {
  const chat = (over: Partial<ChatDoc>): ChatDoc => ({ ...newChat(INSTANCE, PN), ...over });
  it('adds counts, takes the newer chat\'s message and name, keeps a name when the newer has none', () => {
    const a = chat({ _id: 'a', messages_unread: 2, last_message_timestamp_ms: 10, last_message_id: 'x', name: 'A', marked_as_unread: true, pinned: true });
    const b = chat({ _id: 'b', messages_unread: 5, last_message_timestamp_ms: 20, last_message_id: 'y', name: '', marked_as_unread: false, pinned: false });
    expect(mergeChats(a, b)).to.include({ _id: 'a', messages_unread: 7, last_message_id: 'y', name: 'A', marked_as_unread: true, pinned: false });
    expect(mergeChats(b, a)).to.include({ _id: 'a', messages_unread: 7, last_message_id: 'y', name: 'A' });
  });
});
