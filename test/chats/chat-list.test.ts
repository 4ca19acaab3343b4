/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { expectError } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { newPhone } from '../support/sandbox.js';
import { SteppingClock, chatList, chatsUntil, fieldsOf, pairedInstance, phoneSends } from '../support/chats.js';

const CHAT_FIELDS = [
  'phone', 'jid', 'name', 'last_message_user_name', 'last_message_user_phone', 'community_name', 'community_jid', 'archived',
  'pinned', 'unread', 'messages_unread', 'marked_as_unread', 'is_marked_spam', 'is_group', 'is_group_announcement',
  'last_message_time', 'last_message_timestamp_ms', 'mute_end_time', 'labels',
];

describe('GET /instances/{id}/chats over the sandbox', () => {
  const clock = new SteppingClock();
  let me: { id: string; phone: string; jid: string };
  let a: { phone: string; jid: string };
  let b: { phone: string; jid: string };
  let c: { phone: string; jid: string };
  let groupJid: string;
  const times: Record<string, number> = {};
  const byJid = (page: any, jid: string) => page.content.find((chat: any) => chat.jid === jid);

  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' }, { clock });
  before(async () => {
    const mine = await newPhone(t.api, owner, { push_name: 'Me Myself' });
    a = await newPhone(t.api, owner, { push_name: 'Alice' });
    b = await newPhone(t.api, owner, { push_name: 'Bob' });
    c = await newPhone(t.api, owner, { push_name: 'Carol' });
    groupJid = (await t.api('POST', '/sandbox/groups', { token: owner.jwt, body: { name: 'Team', owner: a.phone, participants: [mine.phone, b.phone] } })).body.jid;
    // Before pairing: arrives with the history sync, unread there.
    times.a = clock.seconds;
    await phoneSends(t, owner, a.phone, mine.phone, { text: 'before pairing' });
    clock.tick(10);
    me = await pairedInstance(t, owner, mine.phone);
    clock.tick();
    await phoneSends(t, owner, b.phone, me.phone, { text: 'b1' });
    clock.tick();
    times.c = clock.seconds;
    await phoneSends(t, owner, c.phone, me.phone, { text: 'c1' });
    clock.tick();
    times.b = clock.seconds;
    await phoneSends(t, owner, b.phone, me.phone, { text: 'b2' });
    clock.tick();
    times.group = clock.seconds;
    await phoneSends(t, owner, b.phone, groupJid, { text: 'to the team' });
    await chatsUntil(t, owner, me.id, (p) => p.total === 4 && byJid(p, groupJid)?.messages_unread === 1);
  });

  it('answers the bare page with every Chat field of the spec, in order', async () => {
    const page = await chatList(t, owner, me.id);
    expect(Object.keys(page)).to.deep.equal(['page', 'page_size', 'total', 'total_pages', 'content']);
    expect(page).to.include({ page: 1, page_size: 50, total: 4, total_pages: 1 });
    for (const chat of page.content) expect(Object.keys(chat)).to.deep.equal(CHAT_FIELDS);
  });

  it('lists newest first, with unread counts and the last message of several phones', async () => {
    const page = await chatList(t, owner, me.id);
    expect(page.content.map((chat: any) => chat.jid)).to.deep.equal([groupJid, b.jid, c.jid, a.jid]);
    expect(byJid(page, b.jid)).to.deep.include({
      phone: b.phone,
      name: 'Bob',
      last_message_user_name: 'Bob',
      last_message_user_phone: b.phone,
      unread: '2',
      messages_unread: 2,
      marked_as_unread: false,
      is_group: false,
      archived: false,
      pinned: false,
      mute_end_time: 0,
      last_message_timestamp_ms: times.b! * 1000,
      last_message_time: new Date(times.b! * 1000).toISOString(),
    });
    expect(byJid(page, c.jid)).to.deep.include({ name: 'Carol', messages_unread: 1, last_message_timestamp_ms: times.c! * 1000 });
    // The history sync's count is absolute: one unread message from before the pairing.
    expect(byJid(page, a.jid)).to.deep.include({ name: 'Alice', messages_unread: 1, last_message_user_phone: a.phone, last_message_timestamp_ms: times.a! * 1000 });
    expect(byJid(page, groupJid)).to.deep.include({
      phone: groupJid,
      name: 'Team',
      is_group: true,
      is_group_announcement: false,
      messages_unread: 1,
      last_message_user_name: 'Bob',
      last_message_user_phone: b.phone,
      last_message_timestamp_ms: times.group! * 1000,
    });
  });

  it('pages with page and page_size, and says how many pages there are', async () => {
    const first = await chatList(t, owner, me.id, '?page=1&page_size=3');
    const second = await chatList(t, owner, me.id, '?page=2&page_size=3');
    expect(first).to.include({ page: 1, page_size: 3, total: 4, total_pages: 2 });
    expect(second).to.include({ page: 2, page_size: 3, total: 4, total_pages: 2 });
    expect([...first.content, ...second.content].map((chat: any) => chat.jid)).to.deep.equal([groupJid, b.jid, c.jid, a.jid]);
    expect((await chatList(t, owner, me.id, '?page=9')).content).to.deep.equal([]);
  });

  it('moves a chat up and reads it when the account writes in it, and shows who wrote last', async () => {
    clock.tick();
    const sent = await t.api('POST', `/instances/${me.id}/chat/send/text`, { token: owner.jwt, body: { phone: c.phone, message: 'hi Carol' } });
    expect(sent.status, sent.text).to.equal(200);
    const page = await chatsUntil(t, owner, me.id, (p) => p.content[0].jid === c.jid);
    expect(page.content[0]).to.deep.include({ messages_unread: 0, unread: '0', last_message_user_phone: me.phone, last_message_timestamp_ms: clock.seconds * 1000 });
  });

  it('counts live messages up, and reading (API or phone) sets them to zero', async () => {
    const ids = [await phoneSends(t, owner, b.phone, me.phone, { text: 'b3' })];
    await chatsUntil(t, owner, me.id, (p) => byJid(p, b.jid).messages_unread === 3);
    const read = await t.api('POST', `/instances/${me.id}/chat/markread`, { token: owner.jwt, body: { phone: b.phone, message_ids: ids } });
    expect(read.status, read.text).to.equal(200);
    await chatsUntil(t, owner, me.id, (p) => byJid(p, b.jid).messages_unread === 0);
    // The paired account reads Alice's chat on its own phone: ReadSelf.
    const onPhone = await t.api('POST', `/sandbox/phones/${me.phone}/read`, { token: owner.jwt, body: { chat: a.phone } });
    expect(onPhone.status, onPhone.text).to.equal(200);
    await chatsUntil(t, owner, me.id, (p) => byJid(p, a.jid).messages_unread === 0);
  });

  it('does not move a chat for a reaction', async () => {
    const before = byJid(await chatList(t, owner, me.id), a.jid);
    clock.tick(5);
    const target = await phoneSends(t, owner, a.phone, me.phone, { text: 'react to me' });
    const afterText = await chatsUntil(t, owner, me.id, (p) => byJid(p, a.jid).last_message_timestamp_ms > before.last_message_timestamp_ms);
    clock.tick(5);
    const react = await t.api('POST', `/instances/${me.id}/chat/react`, { token: owner.jwt, body: { phone: a.phone, message_id: target, reaction: '👍' } });
    expect(react.status, react.text).to.equal(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(byJid(await chatList(t, owner, me.id), a.jid).last_message_timestamp_ms).to.equal(byJid(afterText, a.jid).last_message_timestamp_ms);
  });

  it('refuses out-of-range or malformed paging with 400 naming the field', async () => {
    for (const [query, field] of [
      ['?page_size=0', 'page_size'],
      ['?page_size=201', 'page_size'],
      ['?page_size=x', 'page_size'],
      ['?page=0', 'page'],
      ['?page=', 'page'],
      ['?pageSize=10', 'pageSize'],
    ] as const) {
      const res = await t.api('GET', `/instances/${me.id}/chats${query}`, { token: owner.jwt });
      expectError(res, 400, 'invalid_input');
      expect(fieldsOf(res), query).to.include(field);
    }
    expect((await chatList(t, owner, me.id, '?page_size=200')).page_size).to.equal(200);
    expect((await chatList(t, owner, me.id, '?page_size=1')).content).to.have.length(1);
  });
});
