import type { BotClient, BotTurn, BotTurnInput } from './bot-client.js';
import { MAX_ANSWER_CHARS } from './bot-client.js';
import { BotServerError, type BotHttp } from './bot-http.js';
import { IMAGE_PLACEHOLDER } from './jobs.js';

type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
type Completion = { choices?: { message?: { content?: unknown } }[] };

/**
 * Any server speaking OpenAI's chat completions (OpenAI, Ollama, vLLM, OpenRouter): the system
 * prompt, the conversation's last `max_history` messages, then the contact's message.
 */
export class OpenAiClient implements BotClient {
  constructor(private readonly http: BotHttp) {}

  async turn(input: BotTurnInput): Promise<BotTurn> {
    const { settings } = input;
    const history = (settings.max_history ?? 10) > 0 ? input.history.slice(-(settings.max_history ?? 10)) : [];
    const messages = [...(settings.system_prompt ? [{ role: 'system', content: settings.system_prompt }] : []), ...history, { role: 'user', content: userContent(input) }];
    const headers: Record<string, string> = input.apiKey ? { authorization: `Bearer ${input.apiKey}` } : {};
    const answer = (await this.http.post(`${settings.url}/chat/completions`, { model: settings.model, messages }, headers)) as Completion;
    const content = answer?.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new BotServerError('the model server answered without choices[0].message.content', false);
    const text = content.trim().slice(0, MAX_ANSWER_CHARS);
    return { answers: text === '' ? [] : [{ kind: 'text', text }], bot_session: null, choices: [] };
  }
}

/**
 * The contact's message: its text, or with an image (vision on) the content parts chat completions
 * take for one: the caption as text (the "[image]" placeholder is left out, the picture says it),
 * then the image as a data URL, so the model server needs no access to the media host.
 */
function userContent(input: BotTurnInput): string | ContentPart[] {
  if (!input.image) return input.text;
  const parts: ContentPart[] = input.text === IMAGE_PLACEHOLDER ? [] : [{ type: 'text', text: input.text }];
  parts.push({ type: 'image_url', image_url: { url: `data:${input.image.mimetype};base64,${input.image.bytes.toString('base64')}` } });
  return parts;
}
