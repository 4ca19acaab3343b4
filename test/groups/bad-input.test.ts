/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { useGateway } from '../support/use-gateway.js';
import { newPhone, nextPhone } from '../support/sandbox.js';
import { pairedInstance } from '../support/chats.js';

/**
 * The "Bad input" list and its neighbours, as a client would send them: each a clear 4xx
 * with the error envelope, and nothing changed at the far end.
 */
describe('groups, contacts, profile, privacy, labels and status posts: bad input', function () {
  this.timeout(90_000);
  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });
  const api = (method: string, path: string, body?: unknown) => t.api(method, path, { token: owner.jwt, ...(body === undefined ? {} : { body }) });
  let me: { id: string; phone: string; jid: string };
  let friend: { phone: string; jid: string };
  let group: string;
  let initial: { group: any; account: any };

  const farState = async () => ({ group: (await api('GET', `/sandbox/groups/${group}`)).body, account: (await api('GET', `/sandbox/accounts/${me.phone}`)).body });

  before(async () => {
    friend = await newPhone(t.api, owner, { push_name: 'Friend' });
    me = await pairedInstance(t, owner);
    const made = await api('POST', `/instances/${me.id}/group/create`, { name: 'Team', participants: [friend.phone] });
    expect(made.status, made.text).to.equal(200);
    group = made.body.data.jid;
    initial = await farState();
  });

  it('each is refused with a clear 4xx and the error envelope, and nothing changed at the far end', async () => {
    const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64').toString('base64');
    // Noise does not compress: about 6.7 MB of PNG, over the network's 5 MiB.
    const huge = (await sharp(randomBytes(1500 * 1500 * 3), { raw: { width: 1500, height: 1500, channels: 3 } }).png().toBuffer()).toString('base64');
    const i = `/instances/${me.id}`;
    const g = `${i}/group/${group}`;
    const cases: [string, string, unknown, number][] = [
      // A group jid that is not a group.
      ['GET', `${i}/group/${friend.jid}`, undefined, 400],
      ['GET', `${i}/group/not-a-jid`, undefined, 400],
      ['GET', `${i}/group/@g.us`, undefined, 400],
      ['PATCH', `${i}/group/${friend.jid}`, { name: 'x' }, 400],
      ['POST', `${i}/group/${friend.jid}/participants`, { action: 'add', participants: [friend.phone] }, 400],
      ['POST', `${i}/group/${friend.jid}/leave`, undefined, 400],
      ['GET', `${i}/group/${friend.jid}/invite`, undefined, 400],
      ['POST', `${i}/group/120363999999999999@g.us/leave`, undefined, 404],
      // Settings outside what the network takes.
      ['PATCH', g, {}, 400],
      ['PATCH', g, { name: '' }, 400],
      ['PATCH', g, { name: 'x'.repeat(101) }, 400],
      ['PATCH', g, { topic: 'x'.repeat(2049) }, 400],
      ['PATCH', g, { disappearing_timer: 5 }, 400],
      ['PATCH', g, { is_announce: 'yes' }, 400],
      ['PATCH', g, { name: 'ok', colour: 'red' }, 400],
      // Participants.
      ['POST', `${g}/participants`, { action: 'kick', participants: [friend.phone] }, 400],
      ['POST', `${g}/participants`, { action: 'add', participants: [] }, 400],
      ['POST', `${g}/participants`, { action: 'add', participants: ['abc'] }, 400],
      ['POST', `${g}/participants`, { action: 'add', participants: [group] }, 400],
      ['POST', `${g}/participants`, { action: 'add' }, 400],
      ['POST', `${g}/participants`, { action: 'add', participants: [5511999999999] }, 400],
      ['POST', `${g}/participants`, { action: 'add', participants: Array.from({ length: 1024 }, () => friend.phone) }, 400],
      ['POST', `${g}/participants`, [{ action: 'add' }], 400],
      ['PATCH', g, { name: 123 }, 400],
      ['PATCH', g, { disappearing_timer: null }, 400],
      ['PATCH', `${i}/privacy`, { last_seen: null }, 400],
      ['POST', `${i}/status/send`, { text: 'x'.repeat(70_000) }, 400],
      ['POST', `${i}/group/create`, { name: '', participants: [friend.phone] }, 400],
      ['POST', `${i}/group/create`, { name: 'x', participants: 'everyone' }, 400],
      ['POST', `${i}/group/create`, { name: 'x', participants: [nextPhone()] }, 400],
      ['POST', `${i}/group/create`, { name: 'x', participants: [group] }, 400],
      // Invites.
      ['GET', `${i}/group/invite`, undefined, 400],
      ['GET', `${i}/group/invite?invite_url=${encodeURIComponent('https://chat.whatsapp.com/')}`, undefined, 400],
      ['GET', `${i}/group/invite?invite_url=${encodeURIComponent('https://evil.example/AbCdEfGhIjKlMnOpQrStUv')}`, undefined, 400],
      ['GET', `${i}/group/invite?invite_url=${encodeURIComponent('https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv')}`, undefined, 404],
      ['POST', `${i}/group/join`, { invite_url: 'https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv' }, 404],
      ['POST', `${i}/group/join`, {}, 400],
      // Pictures: not an image, an image of another kind, too large, not base64, none.
      ['POST', `${g}/picture`, { media: { data: Buffer.from('hello').toString('base64') } }, 400],
      ['POST', `${g}/picture`, { media: { data: gif } }, 400],
      ['POST', `${g}/picture`, { media: { data: huge } }, 413],
      ['POST', `${g}/picture`, { media: { data: '%%%not base64%%%' } }, 400],
      ['POST', `${g}/picture`, {}, 400],
      ['POST', `${i}/profile/picture`, { media: { data: gif } }, 400],
      ['POST', `${i}/profile/picture`, { media: { data: huge } }, 413],
      // Contacts and blocking.
      ['GET', `${i}/contacts?page=-1`, undefined, 400],
      ['GET', `${i}/contacts?size=100000`, undefined, 400],
      ['GET', `${i}/contacts/not-a-jid`, undefined, 400],
      ['GET', `${i}/contacts/${group}`, undefined, 400],
      ['GET', `${i}/contacts/${nextPhone()}`, undefined, 404],
      ['POST', `${i}/contacts/block`, { phone: 'abc', blocked: true }, 400],
      ['POST', `${i}/contacts/block`, { phone: friend.phone, blocked: 'yes' }, 400],
      ['POST', `${i}/contacts/block`, { phone: group, blocked: true }, 400],
      ['POST', `${i}/contacts/block`, { phone: nextPhone(), blocked: true }, 400],
      ['POST', `${i}/contacts/block`, { phone: me.phone, blocked: true }, 400],
      // Profile.
      ['PATCH', `${i}/profile`, {}, 400],
      ['PATCH', `${i}/profile`, { push_name: '' }, 400],
      ['PATCH', `${i}/profile`, { push_name: 'x'.repeat(26) }, 400],
      ['PATCH', `${i}/profile`, { about: 'x'.repeat(140) }, 400],
      ['PATCH', `${i}/profile`, { nickname: 'x' }, 400],
      // Privacy values outside the network's list for each setting.
      ['PATCH', `${i}/privacy`, { last_seen: 'everyone' }, 400],
      ['PATCH', `${i}/privacy`, { online: 'contacts' }, 400],
      ['PATCH', `${i}/privacy`, { read_receipts: 'contacts' }, 400],
      ['PATCH', `${i}/privacy`, { groups: 'none' }, 400],
      ['PATCH', `${i}/privacy`, { calls: 'none' }, 400],
      ['PATCH', `${i}/privacy`, {}, 400],
      // Labels (a plain account has none) and status posts.
      ['POST', `${i}/chat/label`, { phone: friend.phone, label_id: '1', labeled: true }, 400],
      ['POST', `${i}/chat/label`, { phone: friend.phone, label_id: '', labeled: true }, 400],
      ['POST', `${i}/chat/label`, { phone: friend.phone, label_id: '1' }, 400],
      ['POST', `${i}/status/send`, {}, 400],
      ['POST', `${i}/status/send`, { text: 'x', background_color: 'red' }, 400],
      ['POST', `${i}/status/send`, { text: 'x', font: 99 }, 400],
      ['POST', `${i}/status/send`, { text: 'x', recipients: [] }, 400],
      ['POST', `${i}/status/send`, { text: 'x', recipients: ['abc'] }, 400],
      ['POST', `${i}/status/send`, { text: 'x', recipients: [group] }, 400],
      ['POST', `${i}/status/send`, { media: { data: Buffer.from('hello').toString('base64') } }, 400],
    ];
    const wrong: string[] = [];
    for (const [method, path, body, want] of cases) {
      const res = await api(method, path, body);
      const clear = res.body?.success === false && typeof res.body?.error?.message === 'string' && res.body.code === res.status;
      if (res.status !== want || !clear) wrong.push(`${method} ${path.replace(i, '')} ${JSON.stringify(body)?.slice(0, 80)}: ${res.status} ${res.text.slice(0, 160)}`);
    }
    expect(wrong).to.deep.equal([]);
    // A malformed body is refused before anything reads it.
    const raw = await fetch(`${t.gateway.url}${g}`, { method: 'PATCH', headers: { authorization: `Bearer ${owner.jwt}`, 'content-type': 'application/json' }, body: '{"name": ' });
    expect(raw.status).to.equal(400);
    expect(await farState()).to.deep.equal(initial);
  });
});
