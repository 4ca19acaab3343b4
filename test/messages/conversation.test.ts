/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { loadConfig } from '../../src/infra/config/config.js';
import { silentProgress } from '../../src/rebuild/progress.js';
import { runRebuild } from '../../src/rebuild/run.js';
import { pairedInstance, phoneSends, recorded } from '../support/chats.js';
import { newAccount, newInstance, startTestGateway, testBackendsFor, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, waitFor } from '../support/sandbox.js';

/**
 * CONTRACT.md, Messages: a conversation made through the sandbox (text, media, a reply, a
 * reaction, an edit, a deletion, a poll with votes, a failed send) reads back through the routes
 * as it happened, and reads back the same after `npm run rebuild` (same checksum).
 */
describe('conversations: a chat by page, a message by id, search, media by id (sandbox)', function () {
  this.timeout(120_000);
  const env = { MESSAGING_NETWORK: 'sandbox' };
  let dir: string;
  let t: TestGateway;
  let owner: TestAccount;
  let me: { id: string; phone: string; jid: string };
  let peer: { phone: string; jid: string };
  let blocked: { phone: string; jid: string };
  let png: Buffer;
  const ids = {} as Record<'hello' | 'menu' | 'reply' | 'edited' | 'revoked' | 'poll' | 'failed', string>;

  const api = (method: string, path: string, body?: unknown) => t.api(method, `/instances/${me.id}${path}`, { token: owner.jwt, ...(body === undefined ? {} : { body }) });
  const send = async (path: string, body: Record<string, unknown>) => {
    const res = await api('POST', `/chat/${path}`, body);
    expect(res.status, res.text).to.equal(200);
    return res.body.data.message_id as string;
  };
  const message = async (id: string) => (await api('GET', `/messages/${id}`)).body?.data;
  const page = async (jid: string, query = '') => {
    const res = await api('GET', `/chats/${encodeURIComponent(jid)}/messages${query}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.data;
  };
  const search = async (query: string) => {
    const res = await api('GET', `/messages/search?${query}`);
    expect(res.status, res.text).to.equal(200);
    return (res.body.data.messages as any[]).map((m) => m.message_id);
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'conversation-'));
    t = await startTestGateway(env, {}, dir);
    owner = await newAccount(t.api);
    me = await pairedInstance(t, owner);
    peer = await newPhone(t.api, owner, { push_name: 'Ana' });
    blocked = await newPhone(t.api, owner, { restricted: true });
    png = await sharp({ create: { width: 32, height: 24, channels: 3, background: { r: 10, g: 120, b: 200 } } }).png().toBuffer();

    ids.hello = await phoneSends(t, owner, peer.phone, me.phone, { text: 'Bom dia! Um café?' });
    ids.menu = await phoneSends(t, owner, peer.phone, me.phone, { media: { kind: 'image', mimetype: 'image/png', data_base64: png.toString('base64'), caption: 'the menu' } });
    await recorded(t, me.id, 'MessageReceived', (d) => d.message.id === ids.menu);
    ids.reply = await send('send/text', { phone: peer.phone, message: 'Sim, com leite', reply_to: ids.hello, link_preview: false });
    await send('react', { phone: peer.phone, message_id: ids.menu, reaction: '👍' });
    ids.edited = await send('send/text', { phone: peer.phone, message: 'a typo here' });
    await send('edit', { phone: peer.phone, message_id: ids.edited, message: 'fixed now' });
    ids.revoked = await send('send/text', { phone: peer.phone, message: 'never mind this' });
    await send('revoke', { phone: peer.phone, message_id: ids.revoked });
    ids.poll = await send('send/poll', { phone: peer.phone, name: 'Lunch?', options: ['pizza', 'salad'] });
    const vote = await t.api('POST', `/sandbox/phones/${peer.phone}/messages/${ids.poll}/vote`, { token: owner.jwt, body: { options: ['pizza'] } });
    expect(vote.status, vote.text).to.equal(201);
    ids.failed = await send('send/text', { phone: blocked.phone, message: 'are you there?' });
    await recorded(t, me.id, 'ReceiptReceived', (d) => d.state === 'Failed' && d.message_ids.includes(ids.failed));
    await waitFor(async () => (await message(ids.poll))?.poll?.options?.[0]?.votes === 1, 'the vote tallied');
    await waitFor(async () => (await message(ids.revoked))?.revoked === true, 'the deletion');
    await waitFor(async () => (await message(ids.menu))?.reactions?.length === 1, 'the reaction');
  });

  after(async () => {
    await t?.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  /** The chat with the peer as the routes answer it, with what the test can know in advance. */
  function expectConversation(messages: any[]): void {
    expect(messages.map((m) => m.message_id)).to.deep.equal([ids.poll, ids.revoked, ids.edited, ids.reply, ids.menu, ids.hello]);
    const [poll, revoked, edited, reply, menu, hello] = messages;
    expect(hello).to.deep.include({ chat_jid: peer.jid, from_me: false, sender_jid: peer.jid, sender_phone: peer.phone, push_name: 'Ana', kind: 'text', text: 'Bom dia! Um café?', revoked: false, reactions: [] });
    expect(hello).to.not.have.any.keys('status', 'caption', 'media', 'edited_at');
    expect(menu).to.deep.include({ from_me: false, kind: 'image', caption: 'the menu', media: { mimetype: 'image/png', file_length: png.length }, reactions: [{ emoji: '👍', sender_jid: me.jid }] });
    expect(reply).to.deep.include({ from_me: true, sender_jid: me.jid, sender_phone: me.phone, kind: 'text', text: 'Sim, com leite', reply_to: ids.hello });
    expect(reply.status).to.be.oneOf(['sent', 'delivered', 'read']);
    expect(edited).to.deep.include({ kind: 'text', text: 'fixed now', revoked: false });
    expect(Date.parse(edited.edited_at)).to.be.at.least(Date.parse(edited.timestamp));
    expect(revoked).to.deep.include({ kind: 'text', revoked: true });
    expect(revoked).to.not.have.any.keys('text', 'caption', 'media');
    expect(poll).to.deep.include({ kind: 'poll', poll: { name: 'Lunch?', selectable_count: 1, options: [{ name: 'pizza', votes: 1 }, { name: 'salad', votes: 0 }] } });
    for (let i = 1; i < messages.length; i++) expect(Date.parse(messages[i - 1].timestamp)).to.be.at.least(Date.parse(messages[i].timestamp));
  }

  it('reads the chat back newest first, every message as it stands; each alike by id; pages by `before`', async () => {
    const whole = await page(peer.jid);
    expectConversation(whole.messages);
    expect(whole.next_before).to.equal(null);
    for (const m of whole.messages) expect(await message(m.message_id)).to.deep.equal(m);
    expect((await page(peer.phone)).messages, 'digits name the same chat').to.deep.equal(whole.messages);

    const walked: any[] = [];
    let before: string | null = null;
    do {
      const next: any = await page(peer.jid, `?limit=4${before ? `&before=${before}` : ''}`);
      walked.push(...next.messages);
      before = next.next_before;
    } while (before);
    expect(walked).to.deep.equal(whole.messages);
    expect((await page(peer.jid, `?limit=2&before=${ids.reply}`)).messages.map((m: any) => m.message_id)).to.deep.equal([ids.menu, ids.hello]);
  });

  it('shows a send the network refused as failed, with its reason, in its own chat', async () => {
    const { messages } = await page(blocked.jid);
    expect(messages).to.have.length(1);
    expect(messages[0]).to.deep.include({ message_id: ids.failed, text: 'are you there?', status: 'failed' });
    expect(messages[0].error.code).to.equal(463);
  });

  it('searches text and captions by whole words (case and accents aside), by chat and time; edits and deletions count', async () => {
    expect(await search('q=CAFE')).to.deep.equal([ids.hello]);
    expect(await search('q=menu')).to.deep.equal([ids.menu]);
    expect(await search('q=fixed')).to.deep.equal([ids.edited]);
    expect(await search('q=typo')).to.deep.equal([]);
    expect(await search('q=never')).to.deep.equal([]);
    expect(await search('q=com+leite')).to.deep.equal([ids.reply]);
    expect(await search('q=leite+pizza')).to.deep.equal([]);
    expect(await search('q=are+you')).to.deep.equal([ids.failed]);
    expect(await search(`q=are&chat=${peer.phone}`)).to.deep.equal([]);
    expect(await search(`q=cafe&chat=${encodeURIComponent(peer.jid)}`)).to.deep.equal([ids.hello]);
    const hello = await message(ids.hello);
    const at = Date.parse(hello.timestamp);
    expect(await search(`q=cafe&from=${new Date(at).toISOString()}`)).to.deep.equal([ids.hello]);
    expect(await search(`q=cafe&to=${new Date(at).toISOString()}`)).to.deep.equal([]);
    expect(await search(`q=cafe&from=${new Date(at - 60_000).toISOString()}&to=${new Date(at + 1000).toISOString()}`)).to.deep.equal([ids.hello]);
  });

  it('downloads a message\'s media by its message_id alone', async () => {
    const res = await api('POST', '/chat/downloadimage', { message_id: ids.menu });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.mimetype).to.equal('image/png');
    expect(Buffer.from(res.body.data.data.split(',')[1], 'base64').equals(png)).to.equal(true);
    expect((await api('POST', '/chat/downloadvideo', { message_id: ids.menu })).status).to.equal(400);
    expect((await api('POST', '/chat/downloadimage', { message_id: ids.hello })).status).to.equal(400);
    expect((await api('POST', '/chat/downloadimage', { message_id: 'NOSUCHMESSAGE' })).status).to.equal(404);
    const mixed = await api('POST', '/chat/downloadimage', { message_id: ids.menu, mimetype: 'image/png' });
    expect(mixed.status, mixed.text).to.equal(400);
    expect(mixed.body.error.details.map((d: any) => d.field)).to.deep.equal(['mimetype']);
  });

  it('answers bad input with a clear 4xx: limits, a `before` of another chat, empty or huge q, dates out of order, another tenant', async () => {
    const bad = async (path: string, status = 400) => {
      const res = await api('GET', path);
      expect(res.status, `${path}: ${res.text}`).to.equal(status);
      expect(res.body.success).to.equal(false);
    };
    await bad(`/chats/${peer.jid}/messages?limit=0`);
    await bad(`/chats/${peer.jid}/messages?limit=101`);
    await bad(`/chats/${peer.jid}/messages?limit=ten`);
    await bad(`/chats/${peer.jid}/messages?before=${ids.failed}`);
    await bad(`/chats/${peer.jid}/messages?before=NOSUCHMESSAGE`);
    await bad(`/chats/not-a-jid/messages`);
    await bad(`/chats/5511999990000@s.whatsapp.net/messages`, 404);
    await bad('/messages/search?q=');
    await bad('/messages/search');
    await bad(`/messages/search?q=${'a'.repeat(1000)}`);
    await bad('/messages/search?q=%21%21%21');
    await bad('/messages/search?q=cafe&from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z');
    await bad('/messages/search?q=cafe&from=yesterday');
    await bad('/messages/NOSUCHMESSAGE', 404);

    // Another tenant: their instance does not see this one's messages, nor this one them.
    const other = await newAccount(t.api);
    const theirs = await newInstance(t.api, other);
    expect((await t.api('GET', `/instances/${theirs.id}/messages/${ids.hello}`, { token: other.jwt })).status).to.equal(404);
    expect((await t.api('GET', `/instances/${theirs.id}/chats/${peer.jid}/messages`, { token: other.jwt })).status).to.equal(404);
    expect((await t.api('GET', `/instances/${me.id}/messages/${ids.hello}`, { token: other.jwt })).status).to.be.oneOf([403, 404]);
    expect((await t.api('GET', `/instances/${me.id}/chats/${peer.jid}/messages`, { token: other.jwt })).status).to.be.oneOf([403, 404]);
  });

  it('reads back the same after `npm run rebuild`, whose checksum is unchanged', async () => {
    const before = (await page(peer.jid)).messages;
    const failed = await message(ids.failed);
    await waitFor(async () => (await t.api('GET', '/ready')).status === 200, 'projections caught up');
    await t.stop();
    const run = await runRebuild(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', ...env, ...(await testBackendsFor(dir)) }), ['messages'], silentProgress, () => undefined);
    const [result] = run.results;
    expect(result?.name).to.equal('messages');
    expect(result?.after).to.deep.equal(result?.before);
    expect(result?.after.documents).to.equal(7);
    t = await startTestGateway(env, {}, dir);
    expect((await page(peer.jid)).messages).to.deep.equal(before);
    expect(await message(ids.failed)).to.deep.equal(failed);
  });
});
