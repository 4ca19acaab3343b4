import { typedEvent } from '../../src/domain/recorded.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { NetworkMessage, SessionEvent } from '../../src/domain/session/events.js';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import type { RecordedEvent } from '../../src/infra/eventstore/port.js';
import { ChatQueries } from '../../src/projections/chats/chat-queries.js';
import { chatsProjection, type ChatDoc } from '../../src/projections/chats/chats-projection.js';

const INSTANCE = 'I1';
const A = '5511900000001@s.whatsapp.net';
const B = '5511900000002@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const COMMUNITY = '120363000000000009@g.us';

const message = (over: Partial<NetworkMessage> & { id: string; chat: string; timestamp_s: number }): NetworkMessage => ({
  sender: over.chat,
  from_me: false,
  is_group: over.chat.endsWith('@g.us'),
  type: 'text',
  text: 'hi',
  ...over,
});

describe('chats projection (the reducer behind GET /chats)', () => {
  let dir: string;
  let docs: EmbeddedDocumentStore;
  let queries: ChatQueries;
  let position = 0n;

  async function apply(...events: SessionEvent[]): Promise<void> {
    for (const e of events) {
      const recorded: RecordedEvent = {
        id: `e${position}`,
        type: e.type,
        streamId: `session-${INSTANCE}`,
        revision: position,
        position: position++,
        data: e.data as unknown as RecordedEvent['data'],
        metadata: {},
        created: new Date(),
      };
      const typed = typedEvent(recorded);
      if (!typed.ok) throw new Error(typed.reason);
      await docs.batch(chatsProjection.apply(typed.event));
    }
  }
  const chat = async (jid: string): Promise<ChatDoc | null> => queries.byJid(INSTANCE, jid);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'chats-projection-'));
    docs = await EmbeddedDocumentStore.open({ path: dir });
    await chatsProjection.setup?.(docs);
    queries = new ChatQueries(docs);
  });
  afterEach(async () => {
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('takes absolute counts from history, and counts live messages up', async () => {
    await apply({
      type: 'HistorySyncReceived',
      data: { sync_type: 'INITIAL_BOOTSTRAP', chats: [{ jid: A, name: 'Alice', unread_count: 3, last_message_s: 100 }], messages: [message({ id: 'm1', chat: A, timestamp_s: 100, push_name: 'Alice' })] },
    });
    expect(await chat(A)).to.include({ messages_unread: 3, name: 'Alice', last_message_id: 'm1', last_message_timestamp_ms: 100_000 });
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm2', chat: A, timestamp_s: 101 }), upsert: 'notify' } });
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm0', chat: A, timestamp_s: 50 }), upsert: 'append' } });
    expect(await chat(A)).to.include({ messages_unread: 4, last_message_id: 'm2', last_message_timestamp_ms: 101_000 });
  });

  it('adds unread_delta, replaces with unread_count, and never goes below zero', async () => {
    await apply({ type: 'ChatsUpserted', data: { chats: [{ jid: A, unread_count: 2 }] } });
    await apply({ type: 'ChatUpdated', data: { jid: A, changes: { unread_delta: 3 } } });
    expect(await chat(A)).to.include({ messages_unread: 5 });
    await apply({ type: 'ChatUpdated', data: { jid: A, changes: { unread_count: 1, unread_delta: 7 } } });
    expect(await chat(A), 'an absolute count wins over a delta in the same change').to.include({ messages_unread: 1 });
    await apply({ type: 'ChatUpdated', data: { jid: A, changes: { unread_count: -4 } } });
    expect(await chat(A)).to.include({ messages_unread: 0 });
  });

  it('reads a chat on ReadSelf and on a message of our own, clearing the unread mark', async () => {
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm1', chat: A, timestamp_s: 10 }), upsert: 'notify' } });
    await apply({ type: 'ChatUpdated', data: { jid: A, changes: { marked_as_unread: true } } });
    await apply({ type: 'ReceiptReceived', data: { message_ids: ['m1'], chat: A, sender: B, state: 'ReadSelf', timestamp_s: 11 } });
    expect(await chat(A)).to.include({ messages_unread: 0, marked_as_unread: false });
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm2', chat: A, timestamp_s: 12 }), upsert: 'notify' } });
    await apply({ type: 'MessageSent', data: { message: message({ id: 'm3', chat: A, timestamp_s: 13, from_me: true, sender: B }), origin: 'device' } });
    expect(await chat(A)).to.include({ messages_unread: 0, last_message_from_me: true, last_message_user_phone: '5511900000002' });
  });

  it('ignores reactions and receipts from others', async () => {
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm1', chat: A, timestamp_s: 10 }), upsert: 'notify' } });
    await apply({
      type: 'MessageReceived',
      data: { message: message({ id: 'r1', chat: A, timestamp_s: 20, type: 'reaction', reaction: { message_id: 'm1', text: '👍' } }), upsert: 'notify' },
    });
    await apply({ type: 'ReceiptReceived', data: { message_ids: ['m1'], chat: A, sender: A, state: 'Read', timestamp_s: 21 } });
    expect(await chat(A)).to.include({ messages_unread: 1, last_message_id: 'm1', last_message_timestamp_ms: 10_000 });
  });

  it('counts a live message older than the newest as unread, and one of our own as read, without moving the last message', async () => {
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm2', chat: A, timestamp_s: 20, push_name: 'Alice' }), upsert: 'notify' } });
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm1', chat: A, timestamp_s: 10, push_name: 'Old' }), upsert: 'notify' } });
    expect(await chat(A)).to.include({ messages_unread: 2, last_message_id: 'm2', last_message_timestamp_ms: 20_000, last_message_user_name: 'Alice' });
    await apply({ type: 'ChatUpdated', data: { jid: A, changes: { marked_as_unread: true } } });
    await apply({ type: 'MessageSent', data: { message: message({ id: 'm0', chat: A, timestamp_s: 5, from_me: true, sender: B }), origin: 'device' } });
    expect(await chat(A)).to.include({ messages_unread: 0, marked_as_unread: false, last_message_id: 'm2', last_message_from_me: false });
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm3', chat: A, timestamp_s: 20 }), upsert: 'notify' } });
    expect(await chat(A), 'a message at the same instant as the newest is the newest').to.include({ messages_unread: 1, last_message_id: 'm3' });
  });

  it('forgets the message key when only a newer time is known', async () => {
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm1', chat: A, timestamp_s: 10 }), upsert: 'notify' } });
    await apply({ type: 'ChatUpdated', data: { jid: A, changes: { last_message_s: 10 } } });
    expect(await chat(A)).to.include({ last_message_id: 'm1' });
    await apply({ type: 'ChatUpdated', data: { jid: A, changes: { last_message_s: 30 } } });
    expect(await chat(A)).to.include({ last_message_id: '', last_message_timestamp_ms: 30_000 });
  });

  it('names group chats and their community, whichever is learned first', async () => {
    const group = (jid: string, name: string, extra: Record<string, unknown> = {}) => ({
      jid,
      name,
      is_locked: false,
      is_announce: false,
      is_ephemeral: false,
      disappearing_timer: 0,
      participants: [],
      ...extra,
    });
    await apply({ type: 'GroupsUpserted', data: { groups: [group(GROUP, 'Team', { is_announce: true, community_jid: COMMUNITY })] } });
    expect(await chat(GROUP)).to.include({ name: 'Team', is_group: true, is_group_announcement: true, community_jid: COMMUNITY, community_name: '' });
    await apply({ type: 'GroupsUpserted', data: { groups: [group(COMMUNITY, 'The Community', { is_community: true })] } });
    expect(await chat(GROUP)).to.include({ community_name: 'The Community' });
    await apply({ type: 'GroupsUpserted', data: { groups: [group(GROUP, 'Team renamed', { community_jid: COMMUNITY })] } });
    expect(await chat(GROUP), 'a later upsert of the group alone keeps the name').to.include({ name: 'Team renamed', community_name: 'The Community' });
    await apply({ type: 'GroupsUpserted', data: { groups: [group(GROUP, 'Team renamed')] } });
    expect(await chat(GROUP)).to.include({ community_jid: '', community_name: '' });
  });

  it('orders pinned first, then newest, and pages without overlap', async () => {
    const jids = Array.from({ length: 7 }, (_, i) => `55119000001${i}@s.whatsapp.net`);
    for (const [i, jid] of jids.entries()) await apply({ type: 'MessageReceived', data: { message: message({ id: `m${i}`, chat: jid, timestamp_s: i < 5 ? 100 + i : 100 }), upsert: 'notify' } });
    await apply({ type: 'ChatUpdated', data: { jid: jids[0]!, changes: { pinned: true } } });
    const pages = [await queries.page(INSTANCE, 1, 3), await queries.page(INSTANCE, 2, 3), await queries.page(INSTANCE, 3, 3)];
    expect(pages[0]!.total).to.equal(7);
    const order = pages.flatMap((p) => p.chats.map((c) => c.jid));
    // Same instant: the jid decides, so a page boundary never repeats or skips a chat.
    expect(order).to.deep.equal([jids[0], jids[4], jids[3], jids[2], jids[1], jids[5], jids[6]]);
  });

  it('deletes, clears and mutes, and a logout empties the list', async () => {
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm1', chat: A, timestamp_s: 10, push_name: 'Alice' }), upsert: 'notify' } });
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm2', chat: B, timestamp_s: 11 }), upsert: 'notify' } });
    await apply({ type: 'ChatUpdated', data: { jid: A, changes: { cleared: true, mute_end_ms: -1 } } });
    expect(await chat(A)).to.include({ messages_unread: 0, last_message_user_name: '', mute_end_time: -1 });
    await apply({ type: 'ChatUpdated', data: { jid: B, changes: { deleted: true } } });
    expect(await chat(B)).to.equal(null);
    await apply({ type: 'SessionLoggedOut', data: { by: 'phone' } });
    expect((await queries.page(INSTANCE, 1, 10)).total).to.equal(0);
  });

  it('keeps a count until the projection moves, then counts again', async () => {
    let version = 1n;
    const cached = new ChatQueries(docs, () => version);
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm1', chat: A, timestamp_s: 10 }), upsert: 'notify' } });
    expect((await cached.page(INSTANCE, 1, 10)).total).to.equal(1);
    await apply({ type: 'MessageReceived', data: { message: message({ id: 'm2', chat: B, timestamp_s: 11 }), upsert: 'notify' } });
    expect((await cached.page(INSTANCE, 1, 10)).total, 'same version: the cached count').to.equal(1);
    version = 2n;
    expect((await cached.page(INSTANCE, 1, 10)).total).to.equal(2);
  });
  describe('a person first seen by LID (the lid fold)', () => {
    const LID = '123456789012345@lid';
    const received = (m: NetworkMessage): SessionEvent => ({ type: 'MessageReceived', data: { message: m, upsert: 'notify' } });
    const learned: SessionEvent = { type: 'LidMappingLearned', data: { pairs: [{ pn: A, lid: LID }] } };
    const byLid = (id: string, s: number) => received(message({ id, chat: LID, sender: LID, push_name: 'Hidden', timestamp_s: s, addressing_mode: 'lid' }));
    const byPhone = (id: string, s: number) =>
      received(message({ id, chat: A, chat_lid: LID, sender: A, sender_pn: A, sender_lid: LID, push_name: 'Hidden', timestamp_s: s }));

    it('Given a LID chat, when the pair is learned, the phone jid shows it with its counts, name and last message, and later messages join it', async () => {
      await apply(byLid('m1', 100), byLid('m2', 101));
      await apply(learned);
      const page = await queries.page(INSTANCE, 1, 10);
      expect(page.total).to.equal(1);
      expect(page.chats[0]).to.include({ jid: A, phone: '5511900000001', name: 'Hidden', messages_unread: 2, last_message_id: 'm2', last_message_timestamp_ms: 101_000 });
      await apply(byPhone('m3', 102));
      const after = await queries.page(INSTANCE, 1, 10);
      expect(after.total).to.equal(1);
      expect(after.chats[0]).to.include({ jid: A, messages_unread: 3, last_message_id: 'm3' });
      expect(await chat(A)).to.include({ messages_unread: 3 });
      // Addressed by the LID again (a receipt of our own read), it is still the same chat.
      await apply({ type: 'ReceiptReceived', data: { chat: LID, sender: LID, message_ids: ['m3'], state: 'ReadSelf', timestamp_s: 103 } });
      expect(await chat(A)).to.include({ messages_unread: 0 });
      expect((await queries.page(INSTANCE, 1, 10)).total).to.equal(1);
    });

    it('folds on the pair a message carries (chat and chat_lid), with no LidMappingLearned', async () => {
      await apply(byLid('m1', 100), byPhone('m2', 101));
      const page = await queries.page(INSTANCE, 1, 10);
      expect(page.chats.map((c) => c.jid)).to.deep.equal([A]);
      expect(page.chats[0]).to.include({ messages_unread: 2, last_message_id: 'm2', name: 'Hidden' });
    });

    it('is idempotent: the pair learned again (a replayed batch, a second report) changes nothing', async () => {
      await apply(byLid('m1', 100), learned, byPhone('m2', 101));
      const once = await queries.page(INSTANCE, 1, 10);
      await apply(learned, learned);
      const again = await queries.page(INSTANCE, 1, 10);
      expect(again).to.deep.equal(once);
      expect(again.total).to.equal(1);
      expect(again.chats[0]).to.include({ jid: A, messages_unread: 2, last_message_id: 'm2' });
    });

    it('a pair of someone with no LID chat creates no chat, and marks an existing phone chat with the LID only', async () => {
      await apply(received(message({ id: 'b1', chat: B, timestamp_s: 100 })));
      await apply({ type: 'LidMappingLearned', data: { pairs: [{ pn: A, lid: LID }, { pn: B, lid: '999999999999999@lid' }] } });
      const page = await queries.page(INSTANCE, 1, 10);
      expect(page.chats.map((c) => c.jid)).to.deep.equal([B]);
      expect(page.chats[0]).to.include({ messages_unread: 1, lid: '999999999999999@lid' });
    });
  });
});
