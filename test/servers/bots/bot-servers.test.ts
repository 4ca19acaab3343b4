import { expect } from 'chai';
import { OpenAiTestServer } from './openai-test-server.js';
import { TypebotTestServer } from './typebot-test-server.js';

const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // garbage on purpose
  }
  return { status: res.status, body: parsed as Record<string, unknown> & { [k: string]: any } }; // eslint-disable-line @typescript-eslint/no-explicit-any
};

describe('bot test servers (test tools)', () => {
  const typebot = new TypebotTestServer();
  const openai = new OpenAiTestServer();
  before(async () => {
    await typebot.start();
    await openai.start();
  });
  after(async () => {
    await typebot.close();
    await openai.close();
  });

  it('Typebot: starts the flow with prefilled variables, offers a choice, continues to the end', async () => {
    const start = await post(`${typebot.url}/api/v1/typebots/shop/startChat`, { prefilledVariables: { name: 'Ana' } });
    expect(start.status).to.equal(200);
    expect(start.body.messages[0].content.richText[0].children[1]).to.deep.equal({ text: 'Ana', bold: true });
    expect(start.body.input.items.map((i: { content: string }) => i.content)).to.deep.equal(['Sales', 'Support']);
    const next = await post(`${typebot.url}/api/v1/sessions/${start.body.sessionId}/continueChat`, { message: { type: 'text', text: 'Sales' } });
    expect(next.body.messages.map((m: { type: string }) => m.type)).to.deep.equal(['text', 'image', 'embed', 'text']);
    const end = await post(`${typebot.url}/api/v1/sessions/${start.body.sessionId}/continueChat`, { message: 'a@b.example' });
    expect(end.body.input).to.equal(undefined);
    expect((await post(`${typebot.url}/api/v1/sessions/${start.body.sessionId}/continueChat`, { message: 'again' })).status).to.equal(404);
    expect((await post(`${typebot.url}/api/v1/typebots/nope/startChat`, {})).status).to.equal(404);
  });

  it('OpenAI: answers with the context it was given; 401 for a wrong key; down and garbage on demand', async () => {
    const auth = { authorization: `Bearer ${openai.apiKey}` };
    const ok = await post(`${openai.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'hi' }] }, auth);
    expect(ok.body.choices[0].message.content).to.equal('You said: hi (2 messages of context)');
    expect((await post(`${openai.url}/v1/chat/completions`, { model: 'm', messages: [] }, { authorization: 'Bearer wrong' })).status).to.equal(401);
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const seen = await post(`${openai.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }] }, auth);
    expect(seen.body.choices[0].message.content).to.equal(`You said: look [image image/png 1x1, ${Buffer.from(png, 'base64').length} bytes] (1 messages of context)`);
    for (const bad of [[{ type: 'image_url', image_url: 'data:image/png;base64,AAAA' }], [{ type: 'image_url', image_url: { url: 'data:image/jpeg;base64,' + png } }], [{ type: 'text' }], []]) {
      expect((await post(`${openai.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: bad }] }, auth)).status, JSON.stringify(bad)).to.equal(400);
    }
    openai.mood = 'down';
    expect((await post(`${openai.url}/v1/chat/completions`, { model: 'm', messages: [] }, auth)).status).to.equal(503);
    openai.mood = 'garbage';
    expect(typeof (await post(`${openai.url}/v1/chat/completions`, { model: 'm', messages: [] }, auth)).body).to.equal('string');
    openai.mood = 'ok';
  });
});
