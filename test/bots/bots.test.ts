/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import sharp from 'sharp';
import type { Clock } from '../../src/infra/clock.js';
import { VISION_MAX_BYTES } from '../../src/bots/vision-image.js';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { OpenAiTestServer } from '../servers/bots/openai-test-server.js';
import { TypebotTestServer } from '../servers/bots/typebot-test-server.js';

/** Real time, moved ahead when a test says so (expiry). */
class OffsetClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

interface World {
  owner: TestAccount;
  id: string;
  me: { phone: string; jid: string };
  customer: { phone: string; jid: string };
}

describe('bots over HTTP (sandbox, Typebot and OpenAI test servers)', function () {
  this.timeout(180_000);
  const clock = new OffsetClock();
  let t: TestGateway;
  let typebot: TypebotTestServer;
  let openai: OpenAiTestServer;
  before(async () => {
    typebot = await new TypebotTestServer().start();
    openai = await new OpenAiTestServer().start();
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox', LOG_LEVEL: process.env.TEST_LOG ?? 'silent' }, { clock });
  });
  after(async () => {
    await t.stop();
    await typebot.close();
    await openai.close();
  });

  async function world(): Promise<World> {
    const owner = await newAccount(t.api);
    const { id } = await newInstance(t.api, owner);
    const me = await newPhone(t.api, owner);
    const customer = await newPhone(t.api, owner, { push_name: 'Maria' });
    await pairByQr(t.api, owner, id, me.phone);
    return { owner, id, me, customer };
  }
  const saveBot = async (w: World, botId: string, body: Record<string, unknown>) => {
    const res = await t.api('POST', `/instances/${w.id}/bots/${botId}`, { token: w.owner.jwt, body: { delay_ms: 0, ...body } });
    if (res.status !== 200) throw new Error(`bot save failed: ${res.status} ${res.text}`);
  };
  const assistant = (extra: Record<string, unknown> = {}) => ({ kind: 'openai', url: `${openai.url}/v1`, model: 'tiny', api_key: openai.apiKey, ...extra });
  const say = async (w: World, text: string) => {
    const r = await t.api('POST', `/sandbox/phones/${w.customer.phone}/messages`, { token: w.owner.jwt, body: { to: w.me.phone, text } });
    if (r.status !== 201) throw new Error(`send failed: ${r.status} ${r.text}`);
    return r.body.message_id as string;
  };
  const sendImage = async (w: World, bytes: Buffer, caption?: string, mimetype = 'image/png') => {
    const media = { kind: 'image', mimetype, data_base64: bytes.toString('base64'), ...(caption ? { caption } : {}) };
    const r = await t.api('POST', `/sandbox/phones/${w.customer.phone}/messages`, { token: w.owner.jwt, body: { to: w.me.phone, media } });
    if (r.status !== 201) throw new Error(`send failed: ${r.status} ${r.text}`);
  };
  const inbox = async (w: World) => ((await t.api('GET', `/sandbox/phones/${w.customer.phone}/inbox`, { token: w.owner.jwt })).body.messages as any[]).filter((m) => !m.from_me);
  const texts = async (w: World) => (await inbox(w)).map((m) => m.text ?? `[${m.media?.kind ?? m.type}]`);
  const sessions = async (w: World, botId: string) => (await t.api('GET', `/instances/${w.id}/bots/${botId}/sessions`, { token: w.owner.jwt })).body.data as any[];
  const jobsSettled = async (w: World) => (await t.gateway.docs.collection('bot_jobs').count({ instance_id: w.id, state: 'pending' })) === 0;

  it('runs a Typebot flow with a choice: greeting by name, a numbered choice, "1" picks it, media and links, each answer once', async () => {
    const w = await world();
    await saveBot(w, 'shop', { kind: 'typebot', url: typebot.url, typebot: 'shop' });
    await say(w, 'hi');
    await waitFor(async () => (await texts(w)).length === 3, 'the greeting and the choice', 60_000);
    expect(await texts(w)).to.deep.equal(['Hello *Maria*!', '_What can we do for you?_', '1. Sales\n2. Support']);
    const session = [...typebot.sessions.values()].at(-1);
    expect(session?.variables).to.include({ name: 'Maria', phone: w.customer.phone, jid: w.customer.jid });
    await say(w, '1');
    await waitFor(async () => (await texts(w)).length === 7, 'the answer to the choice', 60_000);
    const after = await inbox(w);
    expect(session?.replies).to.deep.equal(['Sales']);
    expect(after[3].text).to.equal('Sales, great.');
    expect(after[4].media?.kind).to.equal('image');
    expect(after[5].text).to.equal('https://shop.example/catalog');
    expect(after[6].text).to.equal('Your e-mail?');
    await say(w, 'maria@example.com');
    await waitFor(async () => (await texts(w)).length === 8, 'the thanks', 60_000);
    expect((await texts(w))[7]).to.equal('Thanks, we will write to maria@example.com.');
    await waitFor(() => jobsSettled(w), 'jobs settled', 60_000);
    expect(await texts(w)).to.have.length(8);
    const [s] = await sessions(w, 'shop');
    expect(s).to.include({ jid: w.customer.jid, status: 'active', exchanges: 3, failures: 0 });
  });

  it('answers only after the keyword, with the conversation as context, and stops on the stop keyword', async () => {
    const w = await world();
    await saveBot(w, 'ai', assistant({ trigger: { type: 'keyword', value: 'help' }, stop_keyword: 'stop' }));
    await say(w, 'hello there');
    await waitFor(() => jobsSettled(w), 'the first message judged', 60_000);
    expect(await texts(w)).to.deep.equal([]);
    await say(w, 'I need HELP');
    await waitFor(async () => (await texts(w)).length === 1, 'the answer', 60_000);
    await say(w, 'with my order');
    await waitFor(async () => (await texts(w)).length === 2, 'the second answer', 60_000);
    expect(await texts(w)).to.deep.equal(['You said: I need HELP (1 messages of context)', 'You said: with my order (3 messages of context)']);
    await say(w, 'STOP');
    await waitFor(async () => (await sessions(w, 'ai'))[0]?.status === 'stopped', 'stopped', 60_000);
    await say(w, 'are you there?');
    await waitFor(() => jobsSettled(w), 'judged', 60_000);
    expect(await texts(w)).to.have.length(2);
  });

  it('pauses when a person answers in the middle (the API), stays quiet, and answers again once resumed', async () => {
    const w = await world();
    await saveBot(w, 'ai', assistant());
    await say(w, 'first');
    await waitFor(async () => (await texts(w)).length === 1, 'the bot answers', 60_000);
    const human = await t.api('POST', `/instances/${w.id}/chat/send/text`, { token: w.owner.jwt, body: { phone: w.customer.phone, message: 'Hi, Ana here, I take it from here' } });
    expect(human.status, human.text).to.be.oneOf([200, 201]);
    await waitFor(async () => (await sessions(w, 'ai'))[0]?.status === 'paused', 'paused by the human', 60_000);
    expect((await sessions(w, 'ai'))[0].paused_by).to.equal('human');
    await say(w, 'thanks Ana');
    await waitFor(() => jobsSettled(w), 'judged', 60_000);
    expect(await texts(w)).to.deep.equal(['You said: first (1 messages of context)', 'Hi, Ana here, I take it from here']);
    const resumed = await t.api('POST', `/instances/${w.id}/bots/ai/sessions/${w.customer.phone}/resume`, { token: w.owner.jwt });
    expect(resumed.status, resumed.text).to.equal(200);
    expect(resumed.body.data.status).to.equal('active');
    await say(w, 'back to the bot');
    await waitFor(async () => (await texts(w)).length === 3, 'the bot again', 60_000);
    const paused = await t.api('POST', `/instances/${w.id}/bots/ai/sessions/${w.customer.jid}/pause`, { token: w.owner.jwt });
    expect(paused.body.data).to.include({ status: 'paused', paused_by: 'operator' });
    expect((await t.api('POST', `/instances/${w.id}/bots/ai/sessions/5500000000/pause`, { token: w.owner.jwt })).status).to.equal(404);
  });

  it('retries a bot server that is down (reported in the session), then answers once when it is up; garbage is retried too', async () => {
    const w = await world();
    await saveBot(w, 'ai', assistant());
    openai.mood = 'down';
    await say(w, 'anyone?');
    await waitFor(async () => ((await sessions(w, 'ai'))[0]?.failures ?? 0) >= 1, 'the failure reported', 60_000);
    expect((await sessions(w, 'ai'))[0].last_error).to.include('503');
    openai.mood = 'garbage';
    await waitFor(async () => ((await sessions(w, 'ai'))[0]?.failures ?? 0) >= 2, 'the garbage reported', 20_000);
    expect((await sessions(w, 'ai'))[0].last_error).to.include('not JSON');
    openai.mood = 'ok';
    await waitFor(async () => (await texts(w)).length === 1, 'the answer once the server is up', 30_000);
    await waitFor(() => jobsSettled(w), 'settled', 60_000);
    expect(await texts(w)).to.deep.equal(['You said: anyone? (1 messages of context)']);
    expect((await sessions(w, 'ai'))[0]).to.include({ last_error: null, exchanges: 1 });
  });

  it('bounds a flow that loops and a contact flooding, and the instance keeps working', async () => {
    const w = await world();
    await saveBot(w, 'loop', { kind: 'typebot', url: typebot.url, typebot: 'loop' });
    await say(w, 'go');
    await waitFor(async () => (await texts(w)).length === 10, 'ten answers', 60_000);
    await waitFor(() => jobsSettled(w), 'settled', 60_000);
    expect(await texts(w)).to.have.length(10);
    await t.api('DELETE', `/instances/${w.id}/bots/loop`, { token: w.owner.jwt });
    await saveBot(w, 'ai', assistant());
    // 100 messages at once (the "100 in a second"): at most 20 a minute (counting the "go" above) reach the bot, 40 if they straddle a minute.
    await Promise.all(Array.from({ length: 100 }, (_, i) => say(w, `flood ${i}`)));
    await waitFor(() => jobsSettled(w), 'the flood judged', 60_000);
    const jobs = await t.gateway.docs.collection('bot_jobs').count({ instance_id: w.id, bot_id: 'ai' });
    expect(jobs).to.be.within(1, 40);
    await waitFor(async () => (await texts(w)).length === 10 + jobs, "the bot's answers to what reached it", 60_000);
    const sent = await t.api('POST', `/instances/${w.id}/chat/send/text`, { token: w.owner.jwt, body: { phone: w.customer.phone, message: 'still here' } });
    expect(sent.status, sent.text).to.be.oneOf([200, 201]);
  });

  it('shows a contact\'s image to a model with vision (a data URL part beside the caption); without vision, or past the bounds, the model reads "[image]"', async () => {
    const w = await world();
    await saveBot(w, 'eye', assistant({ vision: true }));
    const png = await sharp({ create: { width: 24, height: 12, channels: 3, background: '#0a7' } }).png().toBuffer();
    const seen = `[image image/png 24x12, ${png.length} bytes]`;
    await sendImage(w, png, 'what is this?');
    await waitFor(async () => (await texts(w)).length === 1, 'the answer to the image', 60_000);
    expect((await texts(w))[0]).to.equal(`You said: what is this? ${seen} (1 messages of context)`);
    // No caption: the image alone; a declared PNG that is no image: the placeholder.
    await sendImage(w, png);
    await waitFor(async () => (await texts(w)).length === 2, 'the answer to the bare image', 60_000);
    expect((await texts(w))[1]).to.equal(`You said: ${seen} (3 messages of context)`);
    await sendImage(w, Buffer.from('this is not a picture at all'), undefined, 'image/png');
    await waitFor(async () => (await texts(w)).length === 3, 'the answer to the false image', 60_000);
    expect((await texts(w))[2]).to.equal('You said: [image] (5 messages of context)');
    // A real PNG over the bound (noise does not compress) is not sent to the model.
    const side = Math.ceil(Math.sqrt(VISION_MAX_BYTES / 3)) + 16;
    const noise = Buffer.alloc(side * side * 3);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
    const big = await sharp(noise, { raw: { width: side, height: side, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
    expect(big.length).to.be.above(VISION_MAX_BYTES);
    await sendImage(w, big, 'big one');
    await waitFor(async () => (await texts(w)).length === 4, 'the answer to the big image', 60_000);
    expect((await texts(w))[3]).to.equal('You said: big one (7 messages of context)');
    // Vision off: the placeholder, as a plain string.
    await saveBot(w, 'eye', assistant({ vision: false }));
    await sendImage(w, png);
    await waitFor(async () => (await texts(w)).length === 5, 'the answer without vision', 60_000);
    expect((await texts(w))[4]).to.equal('You said: [image] (9 messages of context)');
    expect(openai.requests.at(-1)?.messages.at(-1)).to.deep.equal({ role: 'user', content: '[image]' });
    // The history keeps the text the model read, never the picture.
    const contents = JSON.stringify(openai.requests.at(-1)?.messages);
    expect(contents).not.to.include('base64');
  });

  it('ends a conversation idle past expire_minutes; the next message starts a new one', async () => {
    const w = await world();
    await saveBot(w, 'ai', assistant({ expire_minutes: 1 }));
    await say(w, 'one');
    await waitFor(async () => (await texts(w)).length === 1, 'answer', 60_000);
    clock.offsetMs += 2 * 60_000;
    await waitFor(async () => (await sessions(w, 'ai'))[0]?.status === 'expired', 'expired', 30_000);
    await say(w, 'two');
    await waitFor(async () => (await texts(w)).length === 2, 'answer in a new conversation', 60_000);
    expect((await texts(w))[1]).to.equal('You said: two (1 messages of context)');
    expect((await sessions(w, 'ai'))[0]).to.include({ status: 'active', exchanges: 1 });
  });
});
