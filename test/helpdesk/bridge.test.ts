/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { ChatwootTestServer } from '../servers/chatwoot/chatwoot-test-server.js';
import { TcpForwarder } from '../support/tcp-forwarder.js';
import { conversationKey, HELPDESK_JOBS, type JobDoc, type JobWork } from '../../src/helpdesk/bridge/jobs.js';

const SANDBOX = { MESSAGING_NETWORK: 'sandbox', LOG_LEVEL: process.env.TEST_LOG ?? 'silent' };

interface World {
  t: TestGateway;
  owner: TestAccount;
  instanceId: string;
  me: { phone: string; jid: string };
  customer: { phone: string; jid: string };
}

/** An account, its instance paired with a phone, and a customer's phone; `beforePairing` sets the past up. */
async function world(t: TestGateway, beforePairing?: (w: World) => Promise<void>): Promise<World> {
  const owner = await newAccount(t.api);
  const { id } = await newInstance(t.api, owner);
  const me = await newPhone(t.api, owner);
  const customer = await newPhone(t.api, owner, { push_name: 'Maria Customer' });
  const w: World = { t, owner, instanceId: id, me, customer };
  await beforePairing?.(w);
  await pairByQr(t.api, owner, id, me.phone);
  return w;
}

async function configure(w: World, chatwoot: ChatwootTestServer, extra: Record<string, unknown> = {}) {
  const res = await w.t.api('POST', `/instances/${w.instanceId}/helpdesk`, {
    token: w.owner.jwt,
    body: { enabled: true, url: chatwoot.url, account_id: String(chatwoot.accountId), name_inbox: `WA ${w.instanceId}`, token: chatwoot.token, auto_create: true, ...extra },
  });
  if (res.status !== 200) throw new Error(`helpdesk save failed: ${res.status} ${res.text}`);
  return res.body;
}

const say = (w: World, from: string, to: string, text: string) =>
  w.t.api('POST', `/sandbox/phones/${from}/messages`, { token: w.owner.jwt, body: { to, text } }).then((r) => {
    if (r.status !== 201) throw new Error(`send failed: ${r.status} ${r.text}`);
    return r.body.message_id as string;
  });

/** The helpdesk conversation a phone's first message opens, once the message is there. */
async function conversationOf(w: World, chatwoot: ChatwootTestServer, phone: string): Promise<number> {
  const first = await say(w, phone, w.me.phone, `hello from ${phone}`);
  await waitFor(() => chatwoot.messages.some((m) => m.source_id === `WAID:${first}`), 'the message in the helpdesk');
  return chatwoot.messages.find((m) => m.source_id === `WAID:${first}`)?.conversation_id as number;
}

const inboxOf = async (w: World, phone: string) =>
  (await w.t.api('GET', `/sandbox/phones/${phone}/inbox`, { token: w.owner.jwt })).body.messages as any[];

describe('helpdesk bridge over HTTP (sandbox and the Chatwoot test server)', function () {
  this.timeout(30_000);
  let t: TestGateway;
  let chatwoot: ChatwootTestServer;
  before(async () => {
    chatwoot = await new ChatwootTestServer().start();
    t = await startTestGateway(SANDBOX);
  });
  after(async () => {
    await t.stop();
    await chatwoot.close();
  });

  it('carries a conversation both ways, once each: WhatsApp messages into one conversation, an agent’s signed answer back to the phone', async () => {
    const w = await world(t);
    const config = await configure(w, chatwoot, { sign_msg: true, sign_delimiter: '\n' });
    const first = await say(w, w.customer.phone, w.me.phone, 'hello, I need help');
    const second = await say(w, w.customer.phone, w.me.phone, 'my order is late');
    await waitFor(() => chatwoot.messages.filter((m) => m.source_id === `WAID:${second}`).length === 1, 'both messages in the helpdesk');
    const contact = chatwoot.contacts.find((c) => c.identifier === w.customer.jid);
    expect(contact).to.include({ name: 'Maria Customer', phone_number: `+${w.customer.phone}` });
    const conversations = chatwoot.conversations.filter((c) => c.contact_id === contact?.id && c.inbox_id === config.inbox_id);
    expect(conversations).to.have.length(1);
    const bridged = chatwoot.conversationMessages((conversations[0] as any).id);
    expect(bridged.map((m) => [m.content, m.message_type, m.source_id])).to.deep.equal([
      ['hello, I need help', 'incoming', `WAID:${first}`],
      ['my order is late', 'incoming', `WAID:${second}`],
    ]);

    const { callback } = await chatwoot.agentReply((conversations[0] as any).id, { content: 'We are on it', agent: 'Ana' });
    expect(callback.status).to.equal(200);
    await waitFor(async () => (await inboxOf(w, w.customer.phone)).some((m) => m.text?.includes('We are on it')), 'the answer on the phone');
    await new Promise((r) => setTimeout(r, 500));
    const received = (await inboxOf(w, w.customer.phone)).filter((m) => m.text?.includes('We are on it'));
    expect(received).to.have.length(1);
    expect(received[0].text).to.equal('*Ana*\nWe are on it');
    // The phone's answer is not bridged back as a second message of the agent's.
    expect(chatwoot.conversationMessages((conversations[0] as any).id)).to.have.length(3);
  });

  it('carries media with its caption, a reply as a threaded answer, and a reaction, each once', async () => {
    const w = await world(t);
    await configure(w, chatwoot);
    const bytes = Buffer.from('a picture of the damaged parcel, honestly');
    const photo = await w.t.api('POST', `/sandbox/phones/${w.customer.phone}/messages`, {
      token: w.owner.jwt,
      body: { to: w.me.phone, media: { kind: 'image', mimetype: 'image/png', data_base64: bytes.toString('base64'), caption: 'look', file_name: 'parcel.png' } },
    });
    expect(photo.status, photo.text).to.equal(201);
    const photoId = photo.body.message_id as string;
    const reply = await w.t.api('POST', `/sandbox/phones/${w.customer.phone}/messages`, { token: w.owner.jwt, body: { to: w.me.phone, text: 'see above', reply_to: photoId } });
    expect(reply.status, reply.text).to.equal(201);
    const reacted = await w.t.api('POST', `/instances/${w.instanceId}/chat/react`, { token: w.owner.jwt, body: { phone: w.customer.phone, message_id: photoId, reaction: '👍' } });
    expect(reacted.status, reacted.text).to.equal(200);
    const reactionId = reacted.body.data.message_id as string;
    await waitFor(() => chatwoot.messages.some((m) => m.source_id === `WAID:${reactionId}`), 'all three in the helpdesk');
    const [media, answer, reaction] = [photoId, reply.body.message_id, reactionId].map((id) => chatwoot.messages.find((m) => m.source_id === `WAID:${id}`) as any);
    expect(media.content).to.equal('look');
    expect(media.attachments).to.have.length(1);
    expect(media.attachments[0]).to.include({ file_type: 'image', file_name: 'parcel.png', content_type: 'image/png' });
    expect(Buffer.compare(media.attachments[0].bytes, bytes)).to.equal(0);
    expect(answer.content_attributes).to.deep.equal({ in_reply_to: media.id });
    expect(reaction).to.include({ content: '👍', message_type: 'outgoing' });
    expect(reaction.content_attributes).to.deep.equal({ in_reply_to: media.id });
    for (const id of [photoId, reply.body.message_id, reactionId]) expect(chatwoot.messages.filter((m) => m.source_id === `WAID:${id}`)).to.have.length(1);
  });

  it('bridges an edit as an answer to the edited message, and a deletion by deleting the bridged message', async () => {
    const w = await world(t);
    await configure(w, chatwoot);
    const typo = await say(w, w.customer.phone, w.me.phone, 'helo');
    const regret = await say(w, w.customer.phone, w.me.phone, 'something I regret');
    await waitFor(() => chatwoot.messages.some((m) => m.source_id === `WAID:${regret}`), 'both bridged');
    const edited = await w.t.api('POST', `/sandbox/phones/${w.customer.phone}/messages/${typo}/edit`, { token: w.owner.jwt, body: { text: 'hello' } });
    expect(edited.status, edited.text).to.be.oneOf([200, 201]);
    const deleted = await w.t.api('DELETE', `/sandbox/phones/${w.customer.phone}/messages/${regret}`, { token: w.owner.jwt });
    expect(deleted.status, deleted.text).to.be.oneOf([200, 204]);
    const original = chatwoot.messages.find((m) => m.source_id === `WAID:${typo}`) as any;
    await waitFor(() => chatwoot.messages.some((m) => m.content === '✏️ hello'), 'the edit in the helpdesk');
    await waitFor(() => (chatwoot.messages.find((m) => m.source_id === `WAID:${regret}`) as any).deleted === true, 'the deletion in the helpdesk');
    const edit = chatwoot.messages.find((m) => m.content === '✏️ hello') as any;
    expect(edit.content_attributes).to.deep.equal({ in_reply_to: original.id });
    expect(original.content).to.equal('helo');
  });

  it("sends an agent's attachment to the phone as media of its kind, decryptable byte for byte, once", async () => {
    const w = await world(t);
    await configure(w, chatwoot);
    await say(w, w.customer.phone, w.me.phone, 'send me the invoice');
    await waitFor(() => chatwoot.conversations.some((c) => chatwoot.contacts.find((x) => x.id === c.contact_id)?.identifier === w.customer.jid), 'the conversation');
    const conversation = chatwoot.conversations.find((c) => chatwoot.contacts.find((x) => x.id === c.contact_id)?.identifier === w.customer.jid) as any;
    const bytes = Buffer.from('%PDF-1.4 an invoice of sorts');
    await chatwoot.agentReply(conversation.id, { content: 'here it is', attachments: [{ file_name: 'invoice.pdf', content_type: 'application/pdf', bytes }] });
    // Recorded once sent: wait for the record, which comes after the phone has the message.
    const sentMessages = async () => (await w.t.gateway.events.readStream(`session-${w.instanceId}`)).filter((e) => e.type === 'MessageSent').map((e) => (e.data as any).message);
    await waitFor(async () => (await sentMessages()).some((m: any) => m.type === 'media'), 'the file sent and recorded');
    const sent = await sentMessages();
    const media = sent.find((m: any) => m.type === 'media');
    expect(media.media).to.include({ kind: 'document', mimetype: 'application/pdf', file_name: 'invoice.pdf' });
    const download = await w.t.api('POST', `/instances/${w.instanceId}/chat/downloaddocument`, {
      token: w.owner.jwt,
      body: { url: media.media.url, media_key: media.media.media_key, mimetype: media.media.mimetype, file_sha256: media.media.file_sha256, file_length: media.media.file_length, direct_path: media.media.direct_path, file_enc_sha256: media.media.file_enc_sha256 },
    });
    expect(download.status, download.text).to.equal(200);
    expect(Buffer.from(download.body.data.data.split(',')[1], 'base64').equals(bytes)).to.equal(true);
    await new Promise((r) => setTimeout(r, 500));
    expect(sent.filter((m: any) => m.type === 'media')).to.have.length(1);
    expect(sent.filter((m: any) => m.text === 'here it is')).to.have.length(1);
  });

  it("sends an agent's audio attachment as a voice note (OGG/Opus, duration, waveform)", async () => {
    const w = await world(t);
    await configure(w, chatwoot);
    await say(w, w.customer.phone, w.me.phone, 'can you explain by voice?');
    await waitFor(() => chatwoot.conversations.some((c) => chatwoot.contacts.find((x) => x.id === c.contact_id)?.identifier === w.customer.jid), 'the conversation');
    const conversation = chatwoot.conversations.find((c) => chatwoot.contacts.find((x) => x.id === c.contact_id)?.identifier === w.customer.jid) as any;
    const dir = mkdtempSync(join(tmpdir(), 'gw-voice-'));
    execFileSync('ffmpeg', ['-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=frequency=300:duration=1', '-y', join(dir, 'a.mp3')]);
    const bytes = readFileSync(join(dir, 'a.mp3'));
    await chatwoot.agentReply(conversation.id, { content: '', attachments: [{ file_name: 'explained.mp3', content_type: 'audio/mpeg', bytes }] });
    const inbox = async () => (await w.t.api('GET', `/sandbox/phones/${w.customer.phone}/inbox`, { token: w.owner.jwt })).body.messages as any[];
    await waitFor(async () => (await inbox()).some((m) => m.type === 'audio'), 'the voice note at the phone');
    const note = (await inbox()).find((m) => m.type === 'audio');
    expect(note.media).to.include({ mimetype: 'audio/ogg; codecs=opus', voice: true, waveform: true, seconds: 1 });
  });

  it('refuses callbacks without the secret path or with a bad or stale signature, and sends nothing', async () => {
    const w = await world(t);
    const config = await configure(w, chatwoot);
    await say(w, w.customer.phone, w.me.phone, 'hi');
    await waitFor(() => chatwoot.conversations.some((c) => c.inbox_id === config.inbox_id), 'a conversation');
    const conversation = chatwoot.conversations.find((c) => c.inbox_id === config.inbox_id) as any;
    const inbox = chatwoot.inboxes.find((i) => i.id === config.inbox_id) as any;
    const body = JSON.stringify({ ...chatwoot.webhookBody(conversation, { id: 999_001, conversation_id: conversation.id, content: 'forged', message_type: 'outgoing', private: false, source_id: null, content_attributes: {}, attachments: [], sender: { id: 1, name: 'X', type: 'user' }, created_at: 0, deleted: false }) });
    const now = String(Math.floor(Date.now() / 1000));
    const wrongPath = config.webhook_url.replace(/[^/]+$/, 'not-the-secret-path');
    expect((await chatwoot.postToWebhook(wrongPath, body, { 'x-chatwoot-timestamp': now, 'x-chatwoot-signature': ChatwootTestServer.sign(inbox.secret, now, body) })).status).to.equal(404);
    expect((await chatwoot.postToWebhook(config.webhook_url, body)).status).to.equal(401);
    expect((await chatwoot.postToWebhook(config.webhook_url, body, { 'x-chatwoot-timestamp': now, 'x-chatwoot-signature': ChatwootTestServer.sign('wrong', now, body) })).status).to.equal(401);
    const stale = String(Math.floor(Date.now() / 1000) - 3600);
    expect((await chatwoot.postToWebhook(config.webhook_url, body, { 'x-chatwoot-timestamp': stale, 'x-chatwoot-signature': ChatwootTestServer.sign(inbox.secret, stale, body) })).status).to.equal(401);
    await new Promise((r) => setTimeout(r, 500));
    expect((await inboxOf(w, w.customer.phone)).some((m) => m.text === 'forged')).to.equal(false);
    // Signed rightly it goes through: the refusals above were for the signature alone.
    expect((await chatwoot.postToWebhook(config.webhook_url, body, { 'x-chatwoot-timestamp': now, 'x-chatwoot-signature': ChatwootTestServer.sign(inbox.secret, now, body) })).status).to.equal(200);
    await waitFor(async () => (await inboxOf(w, w.customer.phone)).some((m) => m.text === 'forged'), 'the signed one delivered');
  });

  it('ignores private notes, and bridges a group as one conversation whose messages name their senders', async () => {
    const w = await world(t);
    const config = await configure(w, chatwoot);
    const group = await t.api('POST', '/sandbox/groups', { token: w.owner.jwt, body: { name: 'Team', owner: w.customer.phone, participants: [w.me.phone] } });
    expect(group.status).to.equal(201);
    const id = await say(w, w.customer.phone, group.body.jid, 'group hello');
    await waitFor(() => chatwoot.messages.some((m) => m.source_id === `WAID:${id}`), 'the group message');
    const message = chatwoot.messages.find((m) => m.source_id === `WAID:${id}`) as any;
    expect(message.content).to.equal('**Maria Customer**: group hello');
    const conversation = chatwoot.conversations.find((c) => c.id === message.conversation_id) as any;
    expect(chatwoot.contacts.find((c) => c.id === conversation.contact_id)?.identifier).to.equal(group.body.jid);
    await chatwoot.agentReply(conversation.id, { content: 'internal note', private: true });
    await new Promise((r) => setTimeout(r, 500));
    expect((await inboxOf(w, w.customer.phone)).some((m) => m.text?.includes('internal note'))).to.equal(false);
    void config;
  });

  it('never bridges ignored jids', async () => {
    const w = await world(t);
    await configure(w, chatwoot, { ignore_jids: [w.customer.jid] });
    const ignored = await say(w, w.customer.phone, w.me.phone, 'not for the helpdesk');
    const other = await newPhone(t.api, w.owner);
    const bridged = await say(w, other.phone, w.me.phone, 'for the helpdesk');
    await waitFor(() => chatwoot.messages.some((m) => m.source_id === `WAID:${bridged}`), 'the other message');
    expect(chatwoot.messages.some((m) => m.source_id === `WAID:${ignored}`)).to.equal(false);
  });

  it('imports the synced contacts and messages once through the REST API, with progress on the configuration, also when configured after pairing', async () => {
    let history: string[] = [];
    let quiet = { phone: '', jid: '' };
    const w = await world(t, async (past) => {
      quiet = await newPhone(t.api, past.owner, { push_name: 'Quiet One' });
      history = [await say(past, past.customer.phone, past.me.phone, 'before pairing 1'), await say(past, past.customer.phone, past.me.phone, 'before pairing 2')];
      await say(past, past.me.phone, quiet.phone, 'I wrote first');
    });
    const { owner, instanceId: id } = w;
    const customers = [w.customer, quiet];
    const config = await configure(w, chatwoot, { import_contacts: true, import_messages: true, days_limit_import_messages: 1 });
    await waitFor(async () => (await t.api('GET', `/instances/${id}/helpdesk`, { token: owner.jwt })).body.import_progress?.state === 'done', 'the import done', 15_000);
    const progress = (await t.api('GET', `/instances/${id}/helpdesk`, { token: owner.jwt })).body.import_progress;
    expect(progress).to.deep.equal({ state: 'done', contacts_imported: 2, messages_imported: 3, messages_total: 3 });
    for (const c of customers) expect(chatwoot.contacts.filter((x) => x.identifier === c.jid)).to.have.length(1);
    for (const m of history) expect(chatwoot.messages.filter((x) => x.source_id === `WAID:${m}`)).to.have.length(1);
    const outgoing = chatwoot.messages.find((x) => x.content === 'I wrote first');
    expect(outgoing?.message_type).to.equal('outgoing');
    // Saving again does not import again.
    await configure(w, chatwoot, { import_contacts: true, import_messages: true, days_limit_import_messages: 1, name_inbox: config.name_inbox });
    await new Promise((r) => setTimeout(r, 700));
    for (const m of history) expect(chatwoot.messages.filter((x) => x.source_id === `WAID:${m}`)).to.have.length(1);
  });
});

describe('helpdesk bridge: an answer that cannot go out holds no other conversation', function () {
  this.timeout(40_000);
  let t: TestGateway;
  let chatwoot: ChatwootTestServer;
  before(async () => {
    chatwoot = await new ChatwootTestServer().start();
    t = await startTestGateway(SANDBOX);
  });
  after(async () => {
    await t.stop();
    await chatwoot.close();
  });

  it('reports an answer to a number not on WhatsApp as a private note at once, and a failing answer holds only its own conversation', async () => {
    const w = await world(t);
    const config = await configure(w, chatwoot);
    const other = await newPhone(t.api, w.owner, { push_name: 'Bruno Customer' });
    const stuck = await conversationOf(w, chatwoot, w.customer.phone);
    const served = await conversationOf(w, chatwoot, other.phone);
    // An agent starts a conversation with a number typed by hand, which is not on WhatsApp.
    const nowhere = chatwoot.startConversation(config.inbox_id, { name: 'Typo', phone_number: '+5511900000001' });
    expect((await chatwoot.agentReply(nowhere.id, { content: 'to a number not on WhatsApp' })).callback.status).to.equal(200);
    // The helpdesk's file store fails for the next answer's attachment, for a long while (retried).
    chatwoot.fail(/^GET \/rails\/active_storage\/blobs\//, 503, 1_000_000);
    const file = { file_name: 'invoice.pdf', content_type: 'application/pdf', bytes: Buffer.from('%PDF-1.4 not really') };
    expect((await chatwoot.agentReply(stuck, { content: '', attachments: [file] })).callback.status).to.equal(200);
    for (const text of ['first answer', 'second answer', 'third answer']) {
      expect((await chatwoot.agentReply(served, { content: text })).callback.status).to.equal(200);
    }
    await waitFor(() => chatwoot.conversationMessages(nowhere.id).some((m) => m.private), 'the private note on the conversation');
    const note = chatwoot.conversationMessages(nowhere.id).find((m) => m.private);
    expect(note?.content).to.match(/^Not delivered to WhatsApp: .*not on WhatsApp/);
    await waitFor(async () => (await inboxOf(w, other.phone)).filter((m) => m.text?.endsWith(' answer')).length === 3, "the other conversation's answers on its phone");
    expect((await inboxOf(w, other.phone)).filter((m) => m.text?.endsWith(' answer')).map((m) => m.text)).to.deep.equal(['first answer', 'second answer', 'third answer']);
    // The failing answer still waits for its retry: not given up, not reported.
    expect(chatwoot.conversationMessages(stuck).some((m) => m.private)).to.equal(false);
  });

  it("finds another conversation's answer behind 1,001 pending jobs of a backed-off one and delivers it", async () => {
    const w = await world(t);
    await configure(w, chatwoot);
    const other = await newPhone(t.api, w.owner, { push_name: 'Carla Customer' });
    const stuck = await conversationOf(w, chatwoot, w.customer.phone);
    const served = await conversationOf(w, chatwoot, other.phone);
    // 1,001 answers to one conversation that failed and wait an hour for their retry, earlier in
    // the log (negative positions) than anything the gateway records next: the same lane (the
    // instance's answers) as the next one.
    const later = Date.now() + 3_600_000;
    const backlog: JobDoc[] = Array.from({ length: 1001 }, (_, i) => {
      const work: JobWork = {
        kind: 'to_whatsapp',
        event_id: `backlog-${w.instanceId}-${i}`,
        reply: { helpdesk_message_id: 900_000 + i, conversation_id: stuck, contact_source_id: 'src', content: `held ${i}`, agent: 'Ana', attachments: [], contact: { identifier: w.customer.jid, phone_number: null } },
      };
      return { _id: work.event_id, instance_id: w.instanceId, pos: i - 2000, conversation_key: conversationKey({ instance_id: w.instanceId, work }), state: 'pending', attempts: 1, due_ms: later, last_error: 'failing', work };
    });
    const jobs = t.gateway.docs.collection<JobDoc>(HELPDESK_JOBS);
    await jobs.insertMany(backlog);
    expect((await chatwoot.agentReply(served, { content: 'answer past the backlog' })).callback.status).to.equal(200);
    await waitFor(async () => (await inboxOf(w, other.phone)).some((m) => m.text === 'answer past the backlog'), "the other conversation's answer on its phone", 20_000);
    expect(await jobs.count({ instance_id: w.instanceId, state: 'pending', 'work.reply.conversation_id': stuck })).to.equal(1001);
    expect((await inboxOf(w, w.customer.phone)).some((m) => m.text?.startsWith('held '))).to.equal(false);
  });
});

describe('helpdesk bridge across failures and a restart', function () {
  this.timeout(40_000);
  let chatwoot: ChatwootTestServer;
  let dir: string;
  const forwarder = new TcpForwarder();
  before(async () => {
    chatwoot = await new ChatwootTestServer().start();
    dir = await mkdtemp(join(tmpdir(), 'gw-helpdesk-'));
  });
  after(async () => {
    await forwarder.close();
    await chatwoot.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('duplicates nothing and loses nothing when answers are lost and the gateway restarts in the middle', async () => {
    // The helpdesk keeps calling the address it was given: the gateway comes back behind the same
    // one (a forwarder holding its port all along; each start picks a free port of its own).
    const env = { ...SANDBOX, PUBLIC_URL: await forwarder.start() };
    const restart = async () => {
      const started = await startTestGateway(env, {}, dir);
      forwarder.retarget(started.gateway.url);
      return started;
    };
    let t = await restart();
    const w = await world(t);
    await configure(w, chatwoot);
    // The helpdesk takes the first message but its answer is lost, then it is down for a while.
    chatwoot.fail(/^POST .*\/conversations\/\d+\/messages$/, 500, 1, true);
    chatwoot.fail(/^POST .*\/conversations\/\d+\/messages$/, 503, 2);
    const ids: string[] = [];
    for (const text of ['one', 'two', 'three']) ids.push(await say(w, w.customer.phone, w.me.phone, text));
    await waitFor(() => chatwoot.messages.some((m) => m.source_id === `WAID:${ids[0]}`), 'the first message taken');
    await t.stop();
    t = await restart();
    w.t = t;
    await waitFor(() => ids.every((id) => chatwoot.messages.some((m) => m.source_id === `WAID:${id}`)), 'every message in the helpdesk', 20_000);
    const conversation = chatwoot.messages.find((m) => m.source_id === `WAID:${ids[0]}`)?.conversation_id as number;
    expect(chatwoot.conversationMessages(conversation).map((m) => m.content)).to.deep.equal(['one', 'two', 'three']);
    expect(chatwoot.conversations.filter((c) => c.contact_id === chatwoot.conversations.find((x) => x.id === conversation)?.contact_id)).to.have.length(1);

    // An agent's answer whose send is interrupted by a restart goes out once.
    expect((await chatwoot.agentReply(conversation, { content: 'answer after restart' })).callback.status).to.equal(200);
    await t.stop();
    t = await restart();
    w.t = t;
    await waitFor(async () => (await inboxOf(w, w.customer.phone)).some((m) => m.text === 'answer after restart'), 'the answer delivered', 20_000);
    await new Promise((r) => setTimeout(r, 800));
    expect((await inboxOf(w, w.customer.phone)).filter((m) => m.text === 'answer after restart')).to.have.length(1);
    await t.stop();
  });
});
