/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { downloadBody, newPhone, pairByQr, sessionEvents, waitFor, waitForEvent, type LoggedEvent } from '../support/sandbox.js';

/** What the sandbox network does becomes events in `session-<id>`, in the shapes both drivers share. */
describe('sandbox happenings in the session stream', function () {
  this.timeout(20_000);

  const { t: gw, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox', SESSION_RETENTION_DAYS: '7' });

  async function paired(body: Record<string, unknown> = {}) {
    const instance = await newInstance(gw.api, owner);
    const phone = await newPhone(gw.api, owner, body);
    await pairByQr(gw.api, owner, instance.id, phone.phone);
    return { instance, phone };
  }
  const post = async (path: string, body: unknown, expected = 200) => {
    const res = await gw.api('POST', path, { token: owner.jwt, body });
    expect(res.status, `${path}: ${res.text}`).to.equal(expected);
    return res.body;
  };
  const next = (id: string, type: string, match: (e: LoggedEvent) => boolean = () => true) =>
    waitForEvent(gw.gateway, id, (e) => e.type === type && match(e), type);

  it('keeps session streams for SESSION_RETENTION_DAYS', async () => {
    const { instance } = await paired();
    expect(await gw.gateway.events.getStreamMetadata(`session-${instance.id}`)).to.deep.equal({ maxAgeSeconds: 7 * 86_400 });
  });

  it('syncs at pairing the chats the phone had before, with names and unread counts', async () => {
    const instance = await newInstance(gw.api, owner);
    const phone = await newPhone(gw.api, owner);
    const friend = await newPhone(gw.api, owner, { push_name: 'Friend' });
    const early = await post(`/sandbox/phones/${friend.phone}/messages`, { to: phone.phone, text: 'sent before pairing' }, 201);
    await pairByQr(gw.api, owner, instance.id, phone.phone);
    const history = await next(instance.id, 'HistorySyncReceived');
    expect(history.data).to.include({ sync_type: 'INITIAL_BOOTSTRAP', progress: 100, is_latest: true });
    expect(history.data.chats).to.have.length(1);
    expect(history.data.chats[0]).to.include({ jid: friend.jid, name: 'Friend', unread_count: 1 });
    expect(history.data.messages.map((m: any) => m.id)).to.deep.equal([early.message_id]);
  });

  it('records messages both ways: MessageReceived from others, MessageSent from its own phone', async () => {
    const a = await paired({ push_name: 'Alice' });
    const b = await paired();
    const sent = await post(`/sandbox/phones/${a.phone.phone}/messages`, { to: b.phone.phone, text: 'hello' }, 201);
    const received = await next(b.instance.id, 'MessageReceived');
    expect(received.data.upsert).to.equal('notify');
    expect(received.data.message).to.deep.include({
      id: sent.message_id,
      chat: a.phone.jid,
      sender: a.phone.jid,
      from_me: false,
      is_group: false,
      push_name: 'Alice',
      type: 'text',
      text: 'hello',
    });
    const own = await next(a.instance.id, 'MessageSent');
    expect(own.data.origin).to.equal('device');
    expect(own.data.message).to.deep.include({ id: sent.message_id, chat: b.phone.jid, from_me: true });
  });

  it('encrypts media as the network does: the download route decrypts it into the original bytes', async () => {
    const a = await paired();
    const b = await paired();
    const bytes = Buffer.from('not really a PNG, but bytes all the same');
    await post(
      `/sandbox/phones/${a.phone.phone}/messages`,
      { to: b.phone.phone, media: { kind: 'image', mimetype: 'image/png', data_base64: bytes.toString('base64'), caption: 'look' } },
      201,
    );
    const { data } = await next(b.instance.id, 'MessageReceived');
    const media = data.message.media;
    expect(media).to.include({ kind: 'image', mimetype: 'image/png', caption: 'look', file_length: bytes.length });
    expect(media.url).to.equal(`${gw.gateway.url}${media.direct_path}`);
    const download = await gw.api('POST', `/instances/${b.instance.id}/chat/downloadimage`, { token: owner.jwt, body: downloadBody(media) });
    expect(download.status, download.text).to.equal(200);
    expect(download.body.data.data).to.equal(`data:image/png;base64,${bytes.toString('base64')}`);
  });

  it('turns receipts into ReceiptReceived: Delivered and Read for the sender, ReadSelf for the reader', async () => {
    const a = await paired();
    const b = await paired();
    const { message_id: id } = await post(`/sandbox/phones/${a.phone.phone}/messages`, { to: b.phone.phone, text: 'ack me' }, 201);
    await post(`/sandbox/phones/${b.phone.phone}/receipts`, { message_ids: [id], state: 'Delivered' });
    await post(`/sandbox/phones/${b.phone.phone}/receipts`, { message_ids: [id], state: 'Read' });
    await post(`/sandbox/phones/${b.phone.phone}/read`, { chat: a.phone.jid });
    const states = async (instanceId: string) =>
      (await sessionEvents(gw.gateway, instanceId)).filter((e) => e.type === 'ReceiptReceived').map((e) => [e.data.state, e.data.message_ids]);
    await next(b.instance.id, 'ReceiptReceived', (e) => e.data.state === 'ReadSelf');
    expect(await states(a.instance.id)).to.deep.equal([
      ['Delivered', [id]],
      ['Read', [id]],
    ]);
    expect(await states(b.instance.id)).to.deep.equal([['ReadSelf', [id]]]);
  });

  it('records presence for contacts and chat presence for the recipient', async () => {
    const watcher = await newPhone(gw.api, owner);
    const a = await paired();
    const instance = await newInstance(gw.api, owner);
    const contactOwner = await newPhone(gw.api, owner, { contacts: [watcher.phone] });
    await pairByQr(gw.api, owner, instance.id, contactOwner.phone);
    await post(`/sandbox/phones/${watcher.phone}/presence`, { state: 'available' });
    const presence = await next(instance.id, 'PresenceUpdated');
    expect(presence.data).to.deep.equal({ jid: watcher.jid, state: 'available' });
    // Not a contact, no conversation: no presence.
    expect((await sessionEvents(gw.gateway, a.instance.id)).some((e) => e.type === 'PresenceUpdated')).to.equal(false);

    await post(`/sandbox/phones/${watcher.phone}/chat-presence`, { to: contactOwner.phone, state: 'composing' });
    const typing = await next(instance.id, 'ChatPresenceUpdated');
    expect(typing.data).to.deep.equal({ chat: watcher.jid, sender: watcher.jid, state: 'composing' });
  });

  it('records groups and participant changes for the members', async () => {
    const owner1 = await paired();
    const member = await paired();
    const joiner = await paired();
    const group = await post('/sandbox/groups', { name: 'Team', owner: owner1.phone.phone, participants: [member.phone.phone], topic: 'work' }, 201);
    expect(group.jid).to.match(/^120363\d{12}@g\.us$/);
    const upserted = await next(member.instance.id, 'GroupsUpserted');
    expect(upserted.data.groups[0]).to.include({ jid: group.jid, name: 'Team', topic: 'work', owner_jid: owner1.phone.jid });
    expect(upserted.data.groups[0].participants.map((p: any) => [p.jid, p.is_super_admin])).to.deep.equal([
      [owner1.phone.jid, true],
      [member.phone.jid, false],
    ]);

    await post(`/sandbox/groups/${group.jid}/participants`, { add: [joiner.phone.phone], by: owner1.phone.phone });
    const added = await next(member.instance.id, 'GroupParticipantsAdded');
    expect(added.data).to.deep.include({ group: group.jid, by: owner1.phone.jid });
    expect(added.data.participants.map((p: any) => p.jid)).to.deep.equal([joiner.phone.jid]);
    await next(joiner.instance.id, 'GroupParticipantsAdded');

    await post(`/sandbox/groups/${group.jid}/participants`, { remove: [member.phone.phone], by: owner1.phone.phone });
    const removed = await next(member.instance.id, 'GroupParticipantsRemoved');
    expect(removed.data.participants.map((p: any) => p.jid)).to.deep.equal([member.phone.jid]);

    // A group message reaches the members' instances with the group as the chat.
    const sent = await post(`/sandbox/phones/${joiner.phone.phone}/messages`, { to: group.jid, text: 'hi all' }, 201);
    const got = await next(owner1.instance.id, 'MessageReceived');
    expect(got.data.message).to.deep.include({ id: sent.message_id, chat: group.jid, sender: joiner.phone.jid, is_group: true });
  });

  it('auto-read records the account reading (ReadSelf) so the chat list shows no unread', async () => {
    const instance = await newInstance(gw.api, owner, { auto_read_messages: true });
    const phone = await newPhone(gw.api, owner);
    const friend = await newPhone(gw.api, owner);
    await pairByQr(gw.api, owner, instance.id, phone.phone);
    const { message_id: id } = await post(`/sandbox/phones/${friend.phone}/messages`, { to: phone.phone, text: 'read me' }, 201);
    const self = await next(instance.id, 'ReceiptReceived', (e) => e.data.state === 'ReadSelf');
    expect(self.data).to.include({ chat: friend.jid, sender: phone.jid });
    expect(self.data.message_ids).to.deep.equal([id]);
    await waitFor(async () => {
      const chats = await gw.api('GET', `/instances/${instance.id}/chats`, { token: owner.jwt });
      const chat = chats.body.content?.find((c: any) => c.jid === friend.jid);
      return chat !== undefined && chat.messages_unread === 0;
    }, 'chat read');
  });
});
