/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import sharp from 'sharp';
import { useGateway } from '../support/use-gateway.js';
import { newPhone, nextPhone, waitFor } from '../support/sandbox.js';
import { pairedInstance, recorded } from '../support/chats.js';

/**
 * The group routes of CONTRACT.md over HTTP on the sandbox, each checked at the far end
 * (GET /sandbox/groups/{jid}) and in what the instances recorded.
 */
describe('groups over HTTP on the sandbox', function () {
  this.timeout(60_000);
  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });
  let me: { id: string; phone: string; jid: string };
  let other: { id: string; phone: string; jid: string };
  let c: { phone: string; jid: string };

  const api = (method: string, path: string, body?: unknown) => t.api(method, path, { token: owner.jwt, ...(body === undefined ? {} : { body }) });
  const far = async (jid: string) => (await api('GET', `/sandbox/groups/${jid}`)).body;
  const create = async (name: string, participants: string[]) => {
    const res = await api('POST', `/instances/${me.id}/group/create`, { name, participants });
    expect(res.status, res.text).to.equal(200);
    return res.body.data;
  };

  before(async () => {
    me = await pairedInstance(t, owner);
    other = await pairedInstance(t, owner);
    c = await newPhone(t.api, owner);
  });

  it('creates a group with the account as owner: the far end holds it, the other member\'s instance sees it, the history names the caller', async () => {
    const group = await create('Launch', [other.phone, c.phone]);
    expect(group.jid).to.match(/^\d+@g\.us$/);
    expect(group).to.include({ name: 'Launch', is_admin: true, owner_pn: me.phone, participant_count: 3 });
    const held = await far(group.jid);
    expect(held.participants).to.deep.include({ phone: me.phone, admin: true, super_admin: true });
    expect(held.participants.map((p: any) => p.phone).sort()).to.deep.equal([me.phone, other.phone, c.phone].sort());
    await recorded(t, other.id, 'GroupsUpserted', (d) => d.groups.some((g: any) => g.jid === group.jid));
    const history = await api('GET', `/instances/${me.id}/history?types=GroupCreated`);
    const created = history.body.events.find((e: any) => e.data.group.jid === group.jid);
    expect(created.actor).to.deep.equal({ kind: 'account', id: owner.accountId });
    const read = await api('GET', `/instances/${me.id}/group/${group.jid}`);
    expect(read.status, read.text).to.equal(200);
    expect(read.body.data.name).to.equal('Launch');
  });

  it('refuses a participant not on the network, a group jid that is not a group, and a group the account is not in: clear 4xx, nothing made', async () => {
    const before = (await api('GET', `/instances/${me.id}/group/list?pageSize=100`)).body.data.groups.length;
    const res = await api('POST', `/instances/${me.id}/group/create`, { name: 'Ghosts', participants: [other.phone, nextPhone()] });
    expect(res.status, res.text).to.equal(400);
    expect(res.body.error.message).to.match(/not on WhatsApp/);
    expect((await api('GET', `/instances/${me.id}/group/list?pageSize=100`)).body.data.groups.length).to.equal(before);
    expect((await api('GET', `/instances/${me.id}/group/${other.jid}`)).status).to.equal(400);
    expect((await api('PATCH', `/instances/${me.id}/group/${other.jid}`, { name: 'x' })).status).to.equal(400);
    expect((await api('GET', `/instances/${me.id}/group/120363999999999999@g.us`)).status).to.equal(404);
    expect((await api('PATCH', `/instances/${me.id}/group/120363999999999999@g.us`, { name: 'x' })).status).to.equal(404);
  });

  it('changes subject, description, settings and timer; the far end and the other member follow, bad values change nothing', async () => {
    const group = await create('Settings', [other.phone]);
    const res = await api('PATCH', `/instances/${me.id}/group/${group.jid}`, { name: 'Renamed', topic: 'about us', is_announce: true, disappearing_timer: 86400 });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.include({ name: 'Renamed', topic: 'about us', is_announce: true, disappearing_timer: 86400, is_ephemeral: true });
    expect(await far(group.jid)).to.include({ name: 'Renamed', topic: 'about us', announce: true, ephemeral_seconds: 86400 });
    const seen = await recorded(t, other.id, 'GroupUpdated', (d) => d.group === group.jid && d.changes.name === 'Renamed');
    expect(seen.by).to.equal(me.jid);
    const bad = await api('PATCH', `/instances/${me.id}/group/${group.jid}`, { name: 'Never', disappearing_timer: 1234 });
    expect(bad.status, bad.text).to.equal(400);
    expect((await far(group.jid)).name).to.equal('Renamed');
  });

  it('refuses admin-only changes by a plain member with 403, changing nothing', async () => {
    const group = await create('Admins only', [other.phone]);
    const res = await api('PATCH', `/instances/${other.id}/group/${group.jid}`, { name: 'Taken over', is_locked: true });
    expect(res.status, res.text).to.equal(403);
    expect(await far(group.jid)).to.include({ name: 'Admins only', locked: false });
    const add = await api('POST', `/instances/${other.id}/group/${group.jid}/participants`, { action: 'add', participants: [c.phone] });
    expect(add.status, add.text).to.equal(403);
    expect((await far(group.jid)).participants).to.have.length(2);
    expect((await api('GET', `/instances/${other.id}/group/${group.jid}/invite`)).status).to.equal(403);
  });

  it('answers each person of a participant change: 207 with 200, 408 and 409 when some fail, 200 when all are done', async () => {
    const group = await create('People', [other.phone]);
    const ghost = nextPhone();
    const res = await api('POST', `/instances/${me.id}/group/${group.jid}/participants`, { action: 'add', participants: [c.phone, ghost, other.phone] });
    expect(res.status, res.text).to.equal(207);
    expect(res.body).to.include({ code: 207, success: false });
    expect(res.body.data.participants).to.deep.equal([
      { jid: c.jid, phone_number: c.phone, status: 200 },
      { jid: `${ghost}@s.whatsapp.net`, phone_number: ghost, status: 408 },
      { jid: other.jid, phone_number: other.phone, status: 409 },
    ]);
    expect((await far(group.jid)).participants.map((p: any) => p.phone)).to.include(c.phone);
    // The other member's instance hears of the add, as a GroupParticipantsAdd webhook would say it.
    await recorded(t, other.id, 'GroupParticipantsAdded', (d) => d.group === group.jid && d.participants.some((p: any) => p.jid === c.jid));
    const promote = await api('POST', `/instances/${me.id}/group/${group.jid}/participants`, { action: 'promote', participants: [other.phone] });
    expect(promote.status, promote.text).to.equal(200);
    expect(promote.body).to.deep.equal({ code: 200, success: true, data: { participants: [{ jid: other.jid, phone_number: other.phone, status: 200 }] } });
    expect((await far(group.jid)).participants).to.deep.include({ phone: other.phone, admin: true, super_admin: false });
    await waitFor(async () => (await api('GET', `/instances/${me.id}/group/${group.jid}`)).body.data.participants.some((p: any) => p.phone_number === other.phone && p.is_admin), 'promoted in the read model');
    const remove = await api('POST', `/instances/${me.id}/group/${group.jid}/participants`, { action: 'remove', participants: [c.phone] });
    expect(remove.status, remove.text).to.equal(200);
    expect((await far(group.jid)).participants.map((p: any) => p.phone)).to.not.include(c.phone);
    // The owner answers to no one else.
    const demoteOwner = await api('POST', `/instances/${other.id}/group/${group.jid}/participants`, { action: 'demote', participants: [me.phone] });
    expect(demoteOwner.status).to.equal(207);
    expect(demoteOwner.body.data.participants[0].status).to.equal(403);
  });

  it('shares, revokes and joins by invite link; a phone joining by it reaches the admin\'s instance', async () => {
    const group = await create('Invites', [c.phone]);
    const link = await api('GET', `/instances/${me.id}/group/${group.jid}/invite`);
    expect(link.status, link.text).to.equal(200);
    const url = link.body.data.invite_url as string;
    expect(url).to.match(/^https:\/\/chat\.whatsapp\.com\/[A-Za-z0-9]{22}$/);
    expect((await far(group.jid)).invite_code).to.equal(url.split('/').pop());
    const info = await api('GET', `/instances/${other.id}/group/invite?invite_url=${encodeURIComponent(url)}`);
    expect(info.status, info.text).to.equal(200);
    expect(info.body.data).to.include({ jid: group.jid, name: 'Invites' });
    expect((await far(group.jid)).participants.map((p: any) => p.phone)).to.not.include(other.phone);
    const joined = await api('POST', `/instances/${other.id}/group/join`, { invite_url: url });
    expect(joined.status, joined.text).to.equal(200);
    expect(joined.body.data).to.deep.equal({ jid: group.jid });
    await recorded(t, me.id, 'GroupParticipantsAdded', (d) => d.group === group.jid && d.participants.some((p: any) => p.jid === other.jid));
    const stranger = await newPhone(t.api, owner);
    const phoneJoin = await api('POST', `/sandbox/phones/${stranger.phone}/join`, { invite_url: url });
    expect(phoneJoin.status, phoneJoin.text).to.equal(200);
    await recorded(t, me.id, 'GroupParticipantsAdded', (d) => d.group === group.jid && d.participants.some((p: any) => p.jid === stranger.jid));
    const revoked = await api('POST', `/instances/${me.id}/group/${group.jid}/invite/revoke`);
    expect(revoked.status, revoked.text).to.equal(200);
    expect(revoked.body.data.invite_url).to.not.equal(url);
    const late = await newPhone(t.api, owner);
    expect((await api('POST', `/sandbox/phones/${late.phone}/join`, { invite_url: url })).status).to.equal(404);
    const list = await api('GET', `/instances/${me.id}/group/list?pageSize=100`);
    expect(list.body.data.groups.find((g: any) => g.jid === group.jid).invite_url).to.equal(revoked.body.data.invite_url);
    expect((await api('POST', `/instances/${me.id}/group/join`, { invite_url: 'https://example.com/x' })).status).to.equal(400);
  });

  it('leaves a group: it leaves the list, the far end and the others see it', async () => {
    const group = await create('Goodbye', [other.phone]);
    const res = await api('POST', `/instances/${other.id}/group/${group.jid}/leave`);
    expect(res.status, res.text).to.equal(200);
    expect((await far(group.jid)).participants.map((p: any) => p.phone)).to.deep.equal([me.phone]);
    expect((await api('GET', `/instances/${other.id}/group/${group.jid}`)).status).to.equal(404);
    await recorded(t, me.id, 'GroupParticipantsRemoved', (d) => d.group === group.jid && d.participants.some((p: any) => p.jid === other.jid));
  });

  it('follows changes made elsewhere: another admin renames the group on its phone', async () => {
    const group = await create('Before', [other.phone]);
    await api('POST', `/instances/${me.id}/group/${group.jid}/participants`, { action: 'promote', participants: [other.phone] });
    const res = await api('PATCH', `/sandbox/groups/${group.jid}`, { by: other.phone, name: 'After', locked: true });
    expect(res.status, res.text).to.equal(200);
    await waitFor(async () => (await api('GET', `/instances/${me.id}/group/${group.jid}`)).body.data.name === 'After', 'renamed in the read model');
    const read = (await api('GET', `/instances/${me.id}/group/${group.jid}`)).body.data;
    expect(read.is_locked).to.equal(true);
    const history = await api('GET', `/instances/${me.id}/history?types=GroupUpdated`);
    const rename = history.body.events.find((e: any) => e.data.group === group.jid && e.data.changes.name === 'After');
    expect(rename.actor.kind).to.equal('network');
    expect(rename.data.by).to.equal(other.jid);
  });

  it('sets a group picture from JPEG or PNG bytes; anything else is 400, too large 413', async () => {
    const group = await create('Pictures', [other.phone]);
    const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#3060c0' } }).png().toBuffer();
    const res = await api('POST', `/instances/${me.id}/group/${group.jid}/picture`, { media: { data: png.toString('base64') } });
    expect(res.status, res.text).to.equal(200);
    const id = res.body.data.profile_picture_id;
    expect((await far(group.jid)).picture_id).to.equal(id);
    const served = await fetch(`${t.gateway.url}/sandbox/pictures/${id}.jpg`);
    expect(served.status).to.equal(200);
    const meta = await sharp(Buffer.from(await served.arrayBuffer())).metadata();
    expect(meta).to.include({ format: 'jpeg', width: 640, height: 640 });
    const notImage = await api('POST', `/instances/${me.id}/group/${group.jid}/picture`, { media: { data: Buffer.from('MZ\x90\x00 not a picture').toString('base64') } });
    expect(notImage.status, notImage.text).to.equal(400);
    const big = await api('POST', `/instances/${me.id}/group/${group.jid}/picture`, { media: { data: Buffer.alloc(6 * 1024 * 1024, 1).toString('base64') } });
    expect(big.status, big.text).to.equal(413);
    expect((await far(group.jid)).picture_id).to.equal(id);
  });
});
