/* eslint-disable @typescript-eslint/no-explicit-any -- answers and bodies are read field by field */
import { decodeSyncdPatch, encodeSyncdPatch, getBinaryNodeChild, getBinaryNodeChildren, newLTHashState, proto, unpadRandomMax16, type BinaryNode, type ChatMutation } from '@whiskeysockets/baileys';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import sharp from 'sharp';
import { newAccount, newInstance, type TestAccount, type TestGateway } from '../../support/gateway.js';
import { Peer } from '../../servers/whatsapp/peer.js';
import { ScriptedWhatsApp, type ScriptedConnection } from '../../servers/whatsapp/scripted-whatsapp.js';
import { pairInstance, startPhoneGateway } from './phone-gateway.js';
import { waitFor } from '../../support/sandbox.js';

/**
 * Every account operation of CONTRACT.md's groups/contacts/profile/privacy/labels/status section on
 * the real network's driver: HTTP in, Baileys rc14's own group, profile, privacy, block-list and
 * send functions, the binary nodes they put on the wire (recorded by the scripted server, which
 * answers as WhatsApp does, per-person participant errors included), and the answer out.
 */
describe('account operations on Baileys, checked on the wire', function () {
  this.timeout(60_000);
  let server: ScriptedWhatsApp;
  let gw: TestGateway;
  let owner: TestAccount;
  let conn: ScriptedConnection;
  let instanceId: string;
  let alice: Peer;
  let bob: Peer;
  let carol: Peer;
  let dave: Peer;
  const GROUP = '120363000000000777@g.us';
  const NOBODY = '5511955554444';

  const api = (method: string, path: string, body?: unknown) => gw.api(method, `/instances/${instanceId}${path}`, { token: owner.jwt, ...(body === undefined ? {} : { body }) });
  const children = (n: BinaryNode | undefined) => (Array.isArray(n?.content) ? (n.content as BinaryNode[]) : []);
  const text = (n: BinaryNode | undefined) => Buffer.from((n?.content as Uint8Array | undefined) ?? []).toString('utf-8');
  /** The iqs of one namespace the gateway sent since `from`, with their first child's tag. */
  const sent = (xmlns: string, tag?: string, from = 0) =>
    conn.received.slice(from).filter((n) => n.tag === 'iq' && n.attrs.xmlns === xmlns && (tag === undefined || children(n)[0]?.tag === tag));
  const mark = () => conn.received.length;
  /** The group as the server holds it, in WhatsApp's answer shape (the account super admin). */
  const groupNode = (jid: string, subject: string, members: Peer[], extra: BinaryNode[] = []): BinaryNode => ({
    tag: 'group',
    attrs: { id: jid.split('@')[0]!, subject, creation: '1700000000', creator: server.phone.pn, s_t: '1700000000' },
    content: [
      ...members.map((m) => ({ tag: 'participant', attrs: { jid: m.pn, ...(m === server.phone ? { type: 'superadmin' } : {}) } })),
      ...extra,
    ],
  });
  const result = (content?: BinaryNode[]): BinaryNode => ({ tag: 'iq', attrs: {}, ...(content ? { content } : {}) });
  const error = (code: number, textOf: string): BinaryNode => result([{ tag: 'error', attrs: { code: String(code), text: textOf } }]);

  before(async () => {
    server = await ScriptedWhatsApp.start();
    alice = server.addPeer(new Peer('5511988887777', '200000000000002', 'Alice'));
    bob = server.addPeer(new Peer('5511966665555', '300000000000003', 'Bob'));
    carol = server.addPeer(new Peer('5511944443333', '400000000000004', 'Carol'));
    dave = server.addPeer(new Peer('5511922221111', '500000000000005', 'Dave'));
    server.groups.set(GROUP, { subject: 'Team', members: [server.phone, alice, bob] });
    gw = await startPhoneGateway(server);
    owner = await newAccount(gw.api);
    instanceId = (await newInstance(gw.api, owner)).id;
    conn = await pairInstance(gw, server, owner, instanceId);
  });

  after(async () => {
    await gw.stop();
    await server.stop();
    expect(server.errors.map(String)).to.deep.equal([]);
  });

  describe('groups', () => {
    it('group/create: groupCreate sends the subject and each person by phone jid; the answer is the group the network made', async () => {
      const made = '120363000000000888@g.us';
      server.answer((iq) => {
        const create = getBinaryNodeChild(iq, 'create');
        if (iq.attrs.xmlns !== 'w:g2' || !create) return undefined;
        return result([groupNode(made, create.attrs.subject ?? '', [server.phone, alice, bob])]);
      });
      const res = await api('POST', '/group/create', { name: 'Launch', participants: [alice.phone, bob.phone] });
      expect(res.status, res.text).to.equal(200);
      const [iq] = sent('w:g2', 'create');
      expect(iq!.attrs).to.include({ to: '@g.us', type: 'set' });
      const create = children(iq)[0]!;
      expect(create.attrs.subject).to.equal('Launch');
      expect(getBinaryNodeChildren(create, 'participant').map((p) => p.attrs.jid)).to.deep.equal([alice.pn, bob.pn]);
      expect(res.body.data).to.include({ jid: made, name: 'Launch', is_admin: true, participant_count: 3 });
    });

    it('group/create with a person not on the network asks the network nothing', async () => {
      const from = mark();
      const res = await api('POST', '/group/create', { name: 'Ghosts', participants: [alice.phone, NOBODY] });
      expect(res.status, res.text).to.equal(400);
      expect(sent('w:g2', 'create', from)).to.deep.equal([]);
    });

    it('participants: groupParticipantsUpdate asks for each person; the per-person answers 200/403/408/409 come from the reply nodes', async () => {
      server.answer((iq) => {
        const add = getBinaryNodeChild(iq, 'add');
        if (iq.attrs.xmlns !== 'w:g2' || iq.attrs.to !== GROUP || !add) return undefined;
        const errors: Record<string, string> = { [bob.pn]: '409', [carol.pn]: '403', [dave.pn]: '408' };
        const answered = getBinaryNodeChildren(add, 'participant').map((p) => ({
          tag: 'participant',
          attrs: { jid: p.attrs.jid!, ...(errors[p.attrs.jid!] ? { error: errors[p.attrs.jid!]! } : {}) },
        }));
        return result([{ tag: 'add', attrs: {}, content: answered }]);
      });
      const from = mark();
      const res = await api('POST', `/group/${GROUP}/participants`, { action: 'add', participants: [alice.phone, bob.phone, carol.phone, dave.phone, NOBODY] });
      expect(res.status, res.text).to.equal(207);
      expect(res.body.success).to.equal(false);
      const [iq] = sent('w:g2', 'add', from);
      expect(iq!.attrs).to.include({ to: GROUP, type: 'set' });
      // Nobody is not on the network: not asked, answered 408 by the gateway.
      expect(getBinaryNodeChildren(children(iq)[0], 'participant').map((p) => p.attrs.jid)).to.deep.equal([alice.pn, bob.pn, carol.pn, dave.pn]);
      const statuses = Object.fromEntries(res.body.data.participants.map((p: any) => [p.phone_number, p.status]));
      expect(statuses).to.deep.equal({ [alice.phone]: 200, [bob.phone]: 409, [carol.phone]: 403, [dave.phone]: 408, [NOBODY]: 408 });
      expect(res.body.data.participants.find((p: any) => p.phone_number === alice.phone).jid).to.equal(alice.pn);
    });

    it('participants: remove, promote and demote go out under their own tags; all done is 200', async () => {
      for (const action of ['remove', 'promote', 'demote'] as const) {
        server.answer((iq) => {
          const node = getBinaryNodeChild(iq, action);
          if (iq.attrs.xmlns !== 'w:g2' || !node) return undefined;
          return result([{ tag: action, attrs: {}, content: getBinaryNodeChildren(node, 'participant').map((p) => ({ tag: 'participant', attrs: { jid: p.attrs.jid! } })) }]);
        });
        const from = mark();
        const res = await api('POST', `/group/${GROUP}/participants`, { action, participants: [alice.phone] });
        expect(res.status, `${action}: ${res.text}`).to.equal(200);
        expect(res.body.data.participants).to.deep.equal([{ jid: alice.pn, phone_number: alice.phone, status: 200 }]);
        const [iq] = sent('w:g2', action, from);
        expect(getBinaryNodeChildren(children(iq)[0], 'participant').map((p) => p.attrs.jid)).to.deep.equal([alice.pn]);
      }
    });

    it('PATCH: groupUpdateSubject, groupUpdateDescription, groupSettingUpdate and groupToggleEphemeral, each its own node', async () => {
      const from = mark();
      const res = await api('PATCH', `/group/${GROUP}`, { name: 'Renamed', topic: 'about us', is_announce: true, is_locked: false, disappearing_timer: 604800 });
      expect(res.status, res.text).to.equal(200);
      const sets = sent('w:g2', undefined, from).filter((n) => n.attrs.type === 'set' && n.attrs.to === GROUP);
      const byTag = Object.fromEntries(sets.map((n) => [children(n)[0]!.tag, children(n)[0]!]));
      expect(text(byTag.subject)).to.equal('Renamed');
      expect(text(getBinaryNodeChild(byTag.description, 'body'))).to.equal('about us');
      expect(byTag.description!.attrs.id).to.be.a('string');
      expect(byTag).to.have.property('announcement');
      expect(byTag).to.have.property('unlocked');
      expect(byTag.ephemeral!.attrs.expiration).to.equal('604800');
      // Turning the timer off is its own node.
      const off = mark();
      expect((await api('PATCH', `/group/${GROUP}`, { disappearing_timer: 0 })).status).to.equal(200);
      expect(sent('w:g2', 'not_ephemeral', off)).to.have.length(1);
    });

    it('a refusal the network answers (error 403 in the reply) is a 403 to the client, not a failure of ours', async () => {
      server.answer((iq) => (iq.attrs.xmlns === 'w:g2' && getBinaryNodeChild(iq, 'subject') && text(getBinaryNodeChild(iq, 'subject')) === 'Refused' ? error(403, 'forbidden') : undefined));
      const res = await api('PATCH', `/group/${GROUP}`, { name: 'Refused' });
      expect(res.status, res.text).to.equal(403);
      expect(res.body.error.type).to.equal('forbidden');
    });

    it('invite: groupInviteCode reads it, groupRevokeInvite resets it; groupGetInviteInfo and groupAcceptInvite send the code of the link', async () => {
      let code = 'AbCdEfGhIjKlMnOpQrStUv';
      server.answer((iq) => {
        const invite = getBinaryNodeChild(iq, 'invite');
        if (iq.attrs.xmlns !== 'w:g2' || !invite) return undefined;
        if (iq.attrs.to === GROUP && iq.attrs.type === 'set') code = 'ZyXwVuTsRqPoNmLkJiHgFe';
        if (iq.attrs.to === GROUP) return result([{ tag: 'invite', attrs: { code } }]);
        if (invite.attrs.code !== code) return error(410, 'gone');
        if (iq.attrs.type === 'get') return result([groupNode(GROUP, 'Team', [server.phone, alice, bob])]);
        return result([{ tag: 'group', attrs: { jid: GROUP } }]);
      });
      const from = mark();
      const link = await api('GET', `/group/${GROUP}/invite`);
      expect(link.status, link.text).to.equal(200);
      expect(link.body.data.invite_url).to.equal('https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv');
      expect(sent('w:g2', 'invite', from).map((n) => n.attrs.type)).to.deep.equal(['get']);
      const revoked = await api('POST', `/group/${GROUP}/invite/revoke`);
      expect(revoked.status, revoked.text).to.equal(200);
      expect(revoked.body.data.invite_url).to.equal('https://chat.whatsapp.com/ZyXwVuTsRqPoNmLkJiHgFe');
      expect(sent('w:g2', 'invite', from).map((n) => `${n.attrs.type} ${n.attrs.to}`)).to.deep.equal([`get ${GROUP}`, `set ${GROUP}`]);

      const info = await api('GET', `/group/invite?invite_url=${encodeURIComponent(revoked.body.data.invite_url)}`);
      expect(info.status, info.text).to.equal(200);
      expect(info.body.data).to.include({ jid: GROUP, name: 'Team' });
      const asked = sent('w:g2', 'invite', from).at(-1)!;
      expect(asked.attrs).to.include({ to: '@g.us', type: 'get' });
      expect(children(asked)[0]!.attrs.code).to.equal('ZyXwVuTsRqPoNmLkJiHgFe');
      // The old link is gone: the network's 410 is a 404 here.
      expect((await api('GET', `/group/invite?invite_url=${encodeURIComponent(link.body.data.invite_url)}`)).status).to.equal(404);

      const joined = await api('POST', '/group/join', { invite_url: revoked.body.data.invite_url });
      expect(joined.status, joined.text).to.equal(200);
      expect(joined.body.data).to.deep.equal({ jid: GROUP });
      const accept = sent('w:g2', 'invite', from).find((n) => n.attrs.type === 'set' && n.attrs.to === '@g.us')!;
      expect(children(accept)[0]!.attrs.code).to.equal('ZyXwVuTsRqPoNmLkJiHgFe');
    });

    it('leave: groupLeave names the group', async () => {
      const from = mark();
      const res = await api('POST', `/group/${GROUP}/leave`);
      expect(res.status, res.text).to.equal(200);
      const [iq] = sent('w:g2', 'leave', from);
      expect(iq!.attrs).to.include({ to: '@g.us', type: 'set' });
      expect(getBinaryNodeChild(children(iq)[0], 'group')!.attrs.id).to.equal(GROUP);
    });

    it('picture: updateProfilePicture targets the group with a 640x640 JPEG', async () => {
      const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#3060c0' } }).png().toBuffer();
      const from = mark();
      const res = await api('POST', `/group/${GROUP}/picture`, { media: { data: png.toString('base64') } });
      expect(res.status, res.text).to.equal(200);
      const [iq] = sent('w:profile:picture', 'picture', from);
      expect(iq!.attrs).to.include({ target: GROUP, type: 'set' });
      const img = Buffer.from(children(iq)[0]!.content as Uint8Array);
      expect(await sharp(img).metadata()).to.include({ format: 'jpeg', width: 640, height: 640 });
      expect(res.body.data.profile_picture_id).to.be.a('string');
    });
  });

  describe('profile, block list and privacy', () => {
    it('about: updateProfileStatus sends the text', async () => {
      const from = mark();
      const res = await api('PATCH', '/profile', { about: 'open 9-5' });
      expect(res.status, res.text).to.equal(200);
      const [iq] = sent('status', 'status', from);
      expect(text(children(iq)[0])).to.equal('open 9-5');
    });

    it('picture: updateProfilePicture for the account has no target; DELETE removes it (an empty picture set)', async () => {
      const jpeg = await sharp({ create: { width: 800, height: 800, channels: 3, background: '#c03060' } }).jpeg().toBuffer();
      const from = mark();
      const res = await api('POST', '/profile/picture', { media: { data: jpeg.toString('base64') } });
      expect(res.status, res.text).to.equal(200);
      const [iq] = sent('w:profile:picture', 'picture', from);
      expect(iq!.attrs).to.not.have.property('target');
      expect(await sharp(Buffer.from(children(iq)[0]!.content as Uint8Array)).metadata()).to.include({ format: 'jpeg', width: 640 });
      const removed = await api('DELETE', '/profile/picture');
      expect(removed.status, removed.text).to.equal(200);
      const last = sent('w:profile:picture', undefined, from).at(-1)!;
      expect(last.attrs).to.not.have.property('target');
      expect(children(last)).to.deep.equal([]);
    });

    it('block: updateBlockStatus sends the LID with the phone jid; the block list is read from the network', async () => {
      const from = mark();
      const res = await api('POST', '/contacts/block', { phone: alice.phone, blocked: true });
      expect(res.status, res.text).to.equal(200);
      const [iq] = sent('blocklist', 'item', from);
      expect(iq!.attrs.type).to.equal('set');
      expect(children(iq)[0]!.attrs).to.deep.equal({ action: 'block', jid: alice.lid, pn_jid: alice.pn });
      server.answer((q) => (q.attrs.xmlns === 'blocklist' && q.attrs.type === 'get' ? result([{ tag: 'list', attrs: {}, content: [{ tag: 'item', attrs: { jid: alice.pn } }] }]) : undefined));
      const list = await api('GET', '/contacts/blocklist');
      expect(list.status, list.text).to.equal(200);
      expect(list.body.data).to.deep.equal({ jids: [alice.pn] });
      const unblock = await api('POST', '/contacts/block', { phone: alice.phone, blocked: false });
      expect(unblock.status, unblock.text).to.equal(200);
      expect(children(sent('blocklist', 'item', from).at(-1))[0]!.attrs).to.deep.equal({ action: 'unblock', jid: alice.lid });
      const nobody = mark();
      expect((await api('POST', '/contacts/block', { phone: NOBODY, blocked: true })).status).to.equal(400);
      expect(sent('blocklist', undefined, nobody)).to.deep.equal([]);
    });

    it('privacy: read from the network by its category names, each change its own category node', async () => {
      server.answer((iq) =>
        iq.attrs.xmlns === 'privacy' && iq.attrs.type === 'get'
          ? result([{ tag: 'privacy', attrs: {}, content: [['last', 'contacts'], ['online', 'match_last_seen'], ['profile', 'all'], ['status', 'contacts'], ['groupadd', 'contact_blacklist'], ['readreceipts', 'all']].map(([name, value]) => ({ tag: 'category', attrs: { name: name!, value: value! } })) }])
          : undefined,
      );
      const read = await api('GET', '/privacy');
      expect(read.status, read.text).to.equal(200);
      expect(read.body.data).to.deep.include({ last_seen: 'contacts', online: 'match_last_seen', profile_picture: 'all', about: 'contacts', groups: 'contact_blacklist', read_receipts: 'all' });
      const from = mark();
      const res = await api('PATCH', '/privacy', { last_seen: 'none', read_receipts: 'none', groups: 'contacts' });
      expect(res.status, res.text).to.equal(200);
      const categories = sent('privacy', 'privacy', from).filter((n) => n.attrs.type === 'set').map((n) => getBinaryNodeChild(children(n)[0], 'category')!.attrs);
      expect(categories).to.have.deep.members([{ name: 'last', value: 'none' }, { name: 'readreceipts', value: 'none' }, { name: 'groupadd', value: 'contacts' }]);
      const bad = mark();
      expect((await api('PATCH', '/privacy', { online: 'contacts' })).status).to.equal(400);
      expect(sent('privacy', 'privacy', bad).filter((n) => n.attrs.type === 'set')).to.deep.equal([]);
    });
  });

  describe('status posts', () => {
    it('status/send goes to status@broadcast, encrypted for the recipients only: each decrypts the post', async () => {
      const res = await api('POST', '/status/send', { text: 'we are open', background_color: '#112233', font: 2, recipients: [alice.phone, bob.phone] });
      expect(res.status, res.text).to.equal(200);
      const id = res.body.data.message_id as string;
      const stanza = await conn.next((n) => n.tag === 'message' && n.attrs.id === id, 'the status post');
      expect(stanza.attrs.to).to.equal('status@broadcast');
      const participants = getBinaryNodeChildren(getBinaryNodeChild(stanza, 'participants'), 'to').map((n) => n.attrs.jid!.split(/[:@]/)[0]);
      expect(participants).to.include.members([alice.phone, bob.phone]);
      expect(participants).to.not.include(carol.phone);
      // What Alice's phone reads: the sender key in her copy, then the post under it.
      const device = `${server.phone.phone}:7@s.whatsapp.net`;
      const mine = getBinaryNodeChildren(getBinaryNodeChild(stanza, 'participants'), 'to').find((n) => n.attrs.jid!.startsWith(`${alice.phone}`))!;
      const distribution = (await alice.decrypt(device, getBinaryNodeChild(mine, 'enc')!)).senderKeyDistributionMessage!;
      await alice.repo.processSenderKeyDistributionMessage({ item: distribution, authorJid: device });
      const skmsg = getBinaryNodeChildren(stanza, 'enc').find((n) => n.attrs.type === 'skmsg')!;
      const plain = await alice.repo.decryptGroupMessage({ group: 'status@broadcast', authorJid: device, msg: skmsg.content as Uint8Array });
      const post = proto.Message.decode(unpadRandomMax16(plain)).extendedTextMessage!;
      expect(post.text).to.equal('we are open');
      expect(post.backgroundArgb).to.equal(0xff112233);
      expect(post.font).to.equal(2);
    });

    it('a recipient not on the network sends nothing', async () => {
      const from = mark();
      expect((await api('POST', '/status/send', { text: 'x', recipients: [NOBODY] })).status).to.equal(400);
      expect(conn.received.slice(from).filter((n) => n.tag === 'message')).to.deep.equal([]);
    });
  });

  describe('app-state changes: push name and chat labels', () => {
    // The phone's chat-sync key, shared with the device as the phone does after pairing.
    const keyId = randomBytes(6);
    const keyData = randomBytes(32);
    const keyOf = async () => ({ keyData, fingerprint: { rawId: 1, currentIndex: 0, deviceIndexes: [0] }, timestamp: Date.now() });

    /** The mutations of the patch the gateway sent for a collection (decoded with the shared key, macs checked). */
    const mutationsSent = async (collection: string, from: number): Promise<ChatMutation[]> => {
      const node = sent('w:sync:app:state', 'sync', from)
        .map((n) => getBinaryNodeChild(children(n)[0], 'collection'))
        .find((c) => c?.attrs.name === collection && getBinaryNodeChild(c, 'patch'));
      if (!node) throw new Error(`no ${collection} patch sent`);
      const patch = proto.SyncdPatch.decode(getBinaryNodeChild(node, 'patch')!.content as Uint8Array);
      // The patch goes on from the version the collection was at (its node says which).
      patch.version = { version: Number(node.attrs.version) + 1 };
      const out: ChatMutation[] = [];
      await decodeSyncdPatch(patch, collection as any, newLTHashState(), keyOf as any, (m) => out.push(m), true);
      return out;
    };

    before(async () => {
      // Nothing new on the network: each collection asked for answers at the version asked (a patch set answers empty).
      server.answer((iq) => {
        const sync = getBinaryNodeChild(iq, 'sync');
        if (iq.attrs.xmlns !== 'w:sync:app:state' || !sync) return undefined;
        const asked = getBinaryNodeChildren(sync, 'collection');
        if (asked.some((c) => getBinaryNodeChild(c, 'patch'))) return result();
        return result([{ tag: 'sync', attrs: {}, content: asked.map((c) => ({ tag: 'collection', attrs: { name: c.attrs.name!, version: c.attrs.version ?? '0' } })) }]);
      });
      await server.deliver(conn, server.phone, {
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE,
          appStateSyncKeyShare: { keys: [{ keyId: { keyId }, keyData: await keyOf() }] },
        },
      });
    });

    it('push name: updateProfileName sends a pushNameSetting patch in critical_block', async () => {
      const from = mark();
      const res = await api('PATCH', '/profile', { push_name: 'My Shop' });
      expect(res.status, res.text).to.equal(200);
      const [mutation] = await mutationsSent('critical_block', from);
      expect(mutation!.syncAction.value?.pushNameSetting?.name).to.equal('My Shop');
    });

    it('labels: a label the phone made arrives by app-state sync; labeling a chat sends addChatLabel / removeChatLabel', async () => {
      // The phone made a label: the server tells the device to sync 'regular', and answers with the patch.
      const { patch } = await encodeSyncdPatch(
        { type: 'regular', index: ['label_edit', '7'], syncAction: { labelEditAction: { name: 'VIP', color: 3 } }, apiVersion: 3, operation: proto.SyncdMutation.SyncdOperation.SET },
        keyId.toString('base64'),
        newLTHashState(),
        keyOf as any,
      );
      let served = false;
      server.answer((iq) => {
        const collection = getBinaryNodeChild(getBinaryNodeChild(iq, 'sync'), 'collection');
        if (iq.attrs.xmlns !== 'w:sync:app:state' || iq.attrs.type !== 'set' || collection?.attrs.name !== 'regular' || served || getBinaryNodeChild(collection, 'patch')) return undefined;
        served = true;
        const patches = [{ tag: 'patch', attrs: {}, content: proto.SyncdPatch.encode(patch).finish() }];
        return result([{ tag: 'sync', attrs: {}, content: [{ tag: 'collection', attrs: { name: 'regular', version: '1' }, content: [{ tag: 'patches', attrs: {}, content: patches }] }] }]);
      });
      await conn.send({ tag: 'notification', attrs: { from: server.phone.pn, type: 'server_sync', id: server.tag(), t: String(Math.floor(Date.now() / 1000)) }, content: [{ tag: 'collection', attrs: { name: 'regular', version: '1' } }] });
      await waitFor(async () => (await api('GET', '/labels')).body?.data?.labels?.some((l: any) => l.id === '7' && l.name === 'VIP'), 'the label in the labels list');

      const from = mark();
      const res = await api('POST', '/chat/label', { phone: alice.phone, label_id: '7', labeled: true });
      expect(res.status, res.text).to.equal(200);
      const [mutation] = await mutationsSent('regular', from);
      expect(mutation!.index).to.deep.equal(['label_jid', '7', alice.pn]);
      expect(mutation!.syncAction.value?.labelAssociationAction?.labeled).to.equal(true);
      const off = mark();
      expect((await api('POST', '/chat/label', { phone: alice.phone, label_id: '7', labeled: false })).status).to.equal(200);
      const [removed] = await mutationsSent('regular', off);
      expect(removed!.syncAction.value?.labelAssociationAction?.labeled).to.equal(false);
      expect((await api('POST', '/chat/label', { phone: alice.phone, label_id: '99', labeled: true })).status).to.equal(400);
    });
  });
});
