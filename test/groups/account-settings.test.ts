/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import sharp from 'sharp';
import { newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { newPhone, nextPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { chatsUntil, pairedInstance, phoneSends, recorded } from '../support/chats.js';

/** Contacts, profile, block list, privacy, labels and status posts over HTTP on the sandbox, checked at the far end. */
describe('contacts, profile, privacy, labels and status posts over HTTP on the sandbox', function () {
  this.timeout(60_000);
  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });
  const api = (method: string, path: string, body?: unknown) => t.api(method, path, { token: owner.jwt, ...(body === undefined ? {} : { body }) });
  const account = async (phone: string) => (await api('GET', `/sandbox/accounts/${phone}`)).body;
  let friend: { phone: string; jid: string };
  let me: { id: string; phone: string; jid: string };

  before(async () => {
    friend = await newPhone(t.api, owner, { push_name: 'Friend', about: 'busy' });
    const mine = await newPhone(t.api, owner, { push_name: 'Me', contacts: [friend.phone], business: { name: 'Shop' } });
    const { id } = await newInstance(t.api, owner);
    await pairByQr(t.api, owner, id, mine.phone);
    me = { id, ...mine };
  });

  it('changes name and about: the session status answers them, the network shows them; too long is 400 and changes nothing', async () => {
    const res = await api('PATCH', `/instances/${me.id}/profile`, { push_name: 'New name', about: 'open 9-5' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.include({ connected: true, push_name: 'New name', about: 'open 9-5' });
    expect(await account(me.phone)).to.include({ push_name: 'New name', about: 'open 9-5' });
    const bad = await api('PATCH', `/instances/${me.id}/profile`, { push_name: 'x'.repeat(26) });
    expect(bad.status).to.equal(400);
    expect((await account(me.phone)).push_name).to.equal('New name');
    const history = await api('GET', `/instances/${me.id}/history?types=ProfileUpdated`);
    expect(history.body.events.at(-1).actor).to.deep.equal({ kind: 'account', id: owner.accountId });
  });

  it('sets and removes the profile picture', async () => {
    const jpeg = await sharp({ create: { width: 800, height: 800, channels: 3, background: '#c03060' } }).jpeg().toBuffer();
    const res = await api('POST', `/instances/${me.id}/profile/picture`, { media: { data: jpeg.toString('base64') } });
    expect(res.status, res.text).to.equal(200);
    const id = res.body.data.profile_picture_id;
    expect((await account(me.phone)).profile_picture_id).to.equal(id);
    const status = (await api('GET', `/instances/${me.id}/session/status`)).body.data;
    expect(status.profile_picture_id).to.equal(id);
    expect(status.profile_picture_url).to.match(new RegExp(`/sandbox/pictures/${id}\\.jpg$`));
    expect((await api('POST', `/instances/${me.id}/profile/picture`, { media: { data: Buffer.from('GIF89a....').toString('base64') } })).status).to.equal(400);
    expect((await api('DELETE', `/instances/${me.id}/profile/picture`)).status).to.equal(200);
    expect((await account(me.phone)).profile_picture_id).to.equal(null);
    expect((await api('GET', `/instances/${me.id}/session/status`)).body.data).to.not.have.property('profile_picture_id');
  });

  it('lists contacts from the history sync and from whoever writes, reads a contact\'s profile, 404 for a number not on the network', async () => {
    const stranger = await newPhone(t.api, owner, { push_name: 'Stranger', addressing: 'lid' });
    await phoneSends(t, owner, stranger.phone, me.phone, { text: 'hi there' });
    let page: any;
    await waitFor(async () => (page = (await api('GET', `/instances/${me.id}/contacts?size=100`)).body.data).content.some((c: any) => c.push_name === 'Stranger'), 'the stranger in contacts');
    expect(page.content).to.deep.include({ jid: friend.jid, phone: friend.phone, lid: page.content.find((c: any) => c.jid === friend.jid).lid, name: 'Friend', push_name: 'Friend', blocked: false });
    const s = page.content.find((c: any) => c.push_name === 'Stranger');
    expect(s).to.include({ jid: stranger.jid, phone: stranger.phone });
    expect(s.lid).to.match(/@lid$/);
    expect(page.content.filter((c: any) => c.phone === stranger.phone), 'one contact for phone and LID').to.have.length(1);
    const found = await api('GET', `/instances/${me.id}/contacts?query=strang`);
    expect(found.body.data.content.map((c: any) => c.jid)).to.deep.equal([stranger.jid]);
    const profile = await api('GET', `/instances/${me.id}/contacts/${friend.jid}`);
    expect(profile.status, profile.text).to.equal(200);
    expect(profile.body.data).to.include({ jid: friend.jid, phone: friend.phone, push_name: 'Friend', about: 'busy' });
    expect((await api('GET', `/instances/${me.id}/contacts/${nextPhone()}`)).status).to.equal(404);
  });

  it('blocks and unblocks: the network holds it, the block list answers it, and the contacts mark it', async () => {
    const res = await api('POST', `/instances/${me.id}/contacts/block`, { phone: friend.phone, blocked: true });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.deep.equal({ blocked: true });
    expect((await account(me.phone)).blocked).to.deep.equal([friend.jid]);
    expect((await api('GET', `/instances/${me.id}/contacts/blocklist`)).body.data).to.deep.equal({ jids: [friend.jid] });
    await waitFor(async () => (await api('GET', `/instances/${me.id}/contacts?query=${friend.phone}`)).body.data.content[0]?.blocked === true, 'marked blocked');
    const history = await api('GET', `/instances/${me.id}/history?types=BlocklistUpdated`);
    expect(history.body.events.at(-1)).to.deep.include({ actor: { kind: 'account', id: owner.accountId } });
    expect((await api('POST', `/instances/${me.id}/contacts/block`, { phone: nextPhone(), blocked: true })).status).to.equal(400);
    expect((await api('POST', `/instances/${me.id}/contacts/block`, { phone: friend.phone, blocked: false })).status).to.equal(200);
    expect((await account(me.phone)).blocked).to.deep.equal([]);
  });

  it('reads and changes privacy; a value outside the network\'s list for its setting is 400 and changes nothing', async () => {
    const read = await api('GET', `/instances/${me.id}/privacy`);
    expect(read.status, read.text).to.equal(200);
    expect(read.body.data).to.include({ last_seen: 'all', online: 'all', read_receipts: 'all' });
    const res = await api('PATCH', `/instances/${me.id}/privacy`, { last_seen: 'contacts', online: 'match_last_seen', read_receipts: 'none' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.include({ last_seen: 'contacts', online: 'match_last_seen', read_receipts: 'none' });
    expect((await account(me.phone)).privacy).to.include({ last_seen: 'contacts', online: 'match_last_seen', read_receipts: 'none' });
    const bad = await api('PATCH', `/instances/${me.id}/privacy`, { about: 'none', online: 'contacts' });
    expect(bad.status, bad.text).to.equal(400);
    expect((await account(me.phone)).privacy).to.include({ about: 'all', online: 'match_last_seen' });
  });

  it('labels a business account\'s chat: the chat list carries it, the network holds it; an unknown label is 400', async () => {
    const labels = await api('GET', `/instances/${me.id}/labels`);
    expect(labels.body.data.labels.map((l: any) => l.name)).to.deep.equal(['New customer', 'New order', 'Pending payment', 'Paid']);
    await phoneSends(t, owner, friend.phone, me.phone, { text: 'order please' });
    const res = await api('POST', `/instances/${me.id}/chat/label`, { phone: friend.phone, label_id: '2', labeled: true });
    expect(res.status, res.text).to.equal(200);
    const page = await chatsUntil(t, owner, me.id, (p) => p.content.some((c: any) => c.jid === friend.jid && c.labels.includes('2')));
    expect(page.content.find((c: any) => c.jid === friend.jid).labels).to.deep.equal(['2']);
    expect((await account(me.phone)).chat_labels).to.deep.equal([{ chat: friend.jid, label_id: '2' }]);
    expect((await api('POST', `/instances/${me.id}/chat/label`, { phone: friend.phone, label_id: '99', labeled: true })).status).to.equal(400);
  });

  it('labels are for business accounts only', async () => {
    const plain = await pairedInstance(t, owner);
    expect((await api('GET', `/instances/${plain.id}/labels`)).body.data).to.deep.equal({ labels: [] });
    expect((await api('POST', `/instances/${plain.id}/chat/label`, { phone: friend.phone, label_id: '1', labeled: true })).status).to.equal(400);
  });

  it('posts a status to its contacts or to recipients; the recipients see it, a recipient not on the network is 400', async () => {
    const res = await api('POST', `/instances/${me.id}/status/send`, { text: 'we are open', background_color: '#112233', font: 2 });
    expect(res.status, res.text).to.equal(200);
    const id = res.body.data.message_id;
    const seen = (await api('GET', `/sandbox/phones/${friend.phone}/statuses`)).body.statuses;
    expect(seen[0]).to.include({ message_id: id, from: me.jid, text: 'we are open', background_color: '#112233', font: 2 });
    const other = await newPhone(t.api, owner);
    const direct = await api('POST', `/instances/${me.id}/status/send`, { text: 'just you', recipients: [other.phone] });
    expect(direct.status, direct.text).to.equal(200);
    expect((await api('GET', `/sandbox/phones/${other.phone}/statuses`)).body.statuses.map((s: any) => s.text)).to.deep.equal(['just you']);
    expect((await api('GET', `/sandbox/phones/${friend.phone}/statuses`)).body.statuses.map((s: any) => s.text)).to.deep.equal(['we are open']);
    expect((await api('POST', `/instances/${me.id}/status/send`, { text: 'x', recipients: [nextPhone()] })).status).to.equal(400);
    expect((await api('POST', `/instances/${me.id}/status/send`, {})).status).to.equal(400);
    await recorded(t, me.id, 'StatusPosted', (d) => d.message_id === direct.body.data.message_id && d.recipients[0] === other.jid);
  });

  it('refuses acting routes with 402 while the instance is canceled; reads still answer', async () => {
    const lapsed = await pairedInstance(t, owner);
    expect((await api('DELETE', `/instances/${lapsed.id}/cancel`)).status).to.equal(200);
    expect((await api('POST', `/instances/${lapsed.id}/group/create`, { name: 'x', participants: [friend.phone] })).status).to.equal(402);
    expect((await api('PATCH', `/instances/${lapsed.id}/profile`, { about: 'x' })).status).to.equal(402);
    expect((await api('POST', `/instances/${lapsed.id}/status/send`, { text: 'x' })).status).to.equal(402);
    expect((await api('GET', `/instances/${lapsed.id}/contacts`)).status).to.equal(200);
  });
});
