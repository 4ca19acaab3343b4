/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { expectError, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { newPhone } from '../support/sandbox.js';
import { SteppingClock, chatList, chatsUntil, eventData, fieldsOf, pairedInstance, phoneSends } from '../support/chats.js';

describe('chat actions: archive, pin, mute, markunread, delete, clear', () => {
  const clock = new SteppingClock();
  let me: { id: string; phone: string; jid: string };
  let a: { phone: string; jid: string };
  let b: { phone: string; jid: string };

  const act = (path: string, body: unknown, id = me.id) => t.api('POST', `/instances/${id}/chat/${path}`, { token: owner.jwt, body });
  const chat = async (jid: string) => (await chatList(t, owner, me.id)).content.find((c: any) => c.jid === jid);
  const ok = async (path: string, body: unknown) => {
    const res = await act(path, body);
    expect(res.status, `${path} ${res.text}`).to.equal(200);
    expect(res.body).to.deep.equal({ code: 200, success: true, data: {} });
  };

  // The clock jumps past a mute's end: the JWT must outlive it.
  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox', JWT_TTL_SECONDS: String(30 * 86_400) }, { clock });
  before(async () => {
    me = await pairedInstance(t, owner);
    a = await newPhone(t.api, owner, { push_name: 'Alice' });
    b = await newPhone(t.api, owner, { push_name: 'Bob' });
    await phoneSends(t, owner, a.phone, me.phone, { text: 'a1' });
    clock.tick();
    await phoneSends(t, owner, a.phone, me.phone, { text: 'a2' });
    clock.tick();
    await phoneSends(t, owner, b.phone, me.phone, { text: 'b1' });
    await chatsUntil(t, owner, me.id, (p) => p.total === 2 && p.content[0].jid === b.jid && p.content[1].messages_unread === 2);
  });

  it('archives and unarchives; the answer waits for the chat list', async () => {
    await ok('archive', { phone: a.phone, archived: true });
    expect(await chat(a.jid)).to.include({ archived: true });
    await ok('archive', { phone: a.jid, archived: false });
    expect(await chat(a.jid)).to.include({ archived: false });
    const recorded = await eventData(t, me.id, 'ChatUpdated');
    expect(recorded.slice(-2)).to.deep.equal([
      { jid: a.jid, changes: { archived: true } },
      { jid: a.jid, changes: { archived: false } },
    ]);
  });

  it('pins: a pinned chat lists first though older, until unpinned', async () => {
    await ok('pin', { phone: a.phone, pinned: true });
    let page = await chatList(t, owner, me.id);
    expect(page.content.map((c: any) => [c.jid, c.pinned])).to.deep.equal([[a.jid, true], [b.jid, false]]);
    await ok('pin', { phone: a.phone, pinned: false });
    page = await chatList(t, owner, me.id);
    expect(page.content.map((c: any) => c.jid)).to.deep.equal([b.jid, a.jid]);
  });

  it('mutes until a time, for always, and unmutes; a past time is refused', async () => {
    const until = clock.seconds + 3600;
    await ok('mute', { phone: b.phone, until });
    expect(await chat(b.jid)).to.include({ mute_end_time: until });
    // The network's mute end is absolute and in milliseconds.
    expect((await eventData(t, me.id, 'ChatUpdated')).at(-1)).to.deep.equal({ jid: b.jid, changes: { mute_end_ms: until * 1000 } });
    clock.tick(3601);
    expect(await chat(b.jid), 'an expired mute shows as not muted').to.include({ mute_end_time: 0 });
    await ok('mute', { phone: b.phone, until: -1 });
    expect(await chat(b.jid)).to.include({ mute_end_time: -1 });
    await ok('mute', { phone: b.phone, until: 0 });
    expect(await chat(b.jid)).to.include({ mute_end_time: 0 });
    const past = await act('mute', { phone: b.phone, until: clock.seconds - 10 });
    expectError(past, 400, 'invalid_input');
    expect(fieldsOf(past)).to.deep.equal(['until']);
  });

  it('marks unread, and read again (which also clears the count)', async () => {
    expect(await chat(a.jid)).to.include({ messages_unread: 2, marked_as_unread: false });
    await ok('markunread', { phone: a.phone, unread: true });
    expect(await chat(a.jid)).to.include({ marked_as_unread: true, messages_unread: 2 });
    await ok('markunread', { phone: a.phone, unread: false });
    expect(await chat(a.jid)).to.include({ marked_as_unread: false, messages_unread: 0, unread: '0' });
  });

  it('clears a chat: it stays, without unread messages or last sender', async () => {
    clock.tick();
    await phoneSends(t, owner, b.phone, me.phone, { text: 'b2' });
    await chatsUntil(t, owner, me.id, (p) => p.content.find((c: any) => c.jid === b.jid)?.messages_unread === 2);
    await ok('clear', { phone: b.phone });
    expect(await chat(b.jid)).to.include({ messages_unread: 0, last_message_user_name: '', last_message_user_phone: '' });
  });

  it('deletes one message for me (the chat stays), or the whole chat', async () => {
    const id = await phoneSends(t, owner, a.phone, me.phone, { text: 'delete me' });
    await chatsUntil(t, owner, me.id, (p) => p.content.find((c: any) => c.jid === a.jid)?.messages_unread === 1);
    const before = (await eventData(t, me.id, 'ChatUpdated')).length;
    await ok('delete', { phone: a.phone, message_id: id });
    expect(await chat(a.jid)).to.not.equal(undefined);
    expect((await eventData(t, me.id, 'ChatUpdated')).length, 'one message leaves the chat list as it was').to.equal(before);
    await ok('delete', { phone: a.phone });
    expect(await chat(a.jid)).to.equal(undefined);
    expect((await chatList(t, owner, me.id)).total).to.equal(1);
    // A new message brings the chat back.
    await phoneSends(t, owner, a.phone, me.phone, { text: 'back' });
    await chatsUntil(t, owner, me.id, (p) => p.total === 2);
  });

  it('answers 409 not_connected when the instance is not connected', async () => {
    const { id } = await newInstance(t.api, owner);
    for (const [path, body] of [
      ['archive', { phone: a.phone, archived: true }],
      ['pin', { phone: a.phone, pinned: true }],
      ['mute', { phone: a.phone, until: -1 }],
      ['markunread', { phone: a.phone, unread: true }],
      ['delete', { phone: a.phone }],
      ['clear', { phone: a.phone }],
    ] as const) {
      expectError(await act(path, body, id), 409, 'not_connected');
    }
  });

  it('refuses bad input on every route with 400 naming the field', async () => {
    const cases: [string, unknown, string][] = [
      ['archive', { phone: a.phone }, 'archived'],
      ['archive', { phone: a.phone, archived: 'yes' }, 'archived'],
      ['archive', { archived: true }, 'phone'],
      ['archive', { phone: 'x', archived: true }, 'phone'],
      ['pin', { phone: a.phone }, 'pinned'],
      ['pin', { phone: a.phone, pinned: 1 }, 'pinned'],
      ['mute', { phone: a.phone }, 'until'],
      ['mute', { phone: a.phone, until: 'tomorrow' }, 'until'],
      ['mute', { phone: a.phone, until: -2 }, 'until'],
      ['mute', { phone: a.phone, until: 1.5 }, 'until'],
      ['markunread', { phone: a.phone }, 'unread'],
      ['markunread', { unread: true }, 'phone'],
      ['delete', {}, 'phone'],
      ['delete', { phone: a.phone, message_id: '' }, 'message_id'],
      ['delete', { phone: a.phone, message_id: 'has space' }, 'message_id'],
      ['delete', { phone: a.phone, from_me: 'no' }, 'from_me'],
      ['clear', { phone: a.phone, everything: true }, 'everything'],
      ['clear', { phone: 12345678 }, 'phone'],
    ];
    for (const [path, body, field] of cases) {
      const res = await act(path, body);
      expectError(res, 400, 'invalid_input');
      expect(fieldsOf(res), `${path} ${JSON.stringify(body)}`).to.include(field);
    }
  });

  it('lists the routes in the OpenAPI document', async () => {
    const doc = (await t.api('GET', '/openapi.json')).body;
    for (const path of ['archive', 'pin', 'mute', 'markunread', 'delete', 'clear', 'downloadimage', 'downloadvideo', 'downloadaudio', 'downloaddocument']) {
      expect(doc.paths, path).to.have.property(`/instances/{id}/chat/${path}`);
    }
  });
});
