import type { BotClient, BotTurn, BotTurnInput } from './bot-client.js';
import { MAX_ANSWER_CHARS } from './bot-client.js';
import { BotServerError, type BotHttp } from './bot-http.js';

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
    const messages = [...(settings.system_prompt ? [{ role: 'system', content: settings.system_prompt }] : []), ...history, { role: 'user', content: input.text }];
    const headers: Record<string, string> = input.apiKey ? { authorization: `Bearer ${input.apiKey}` } : {};
    const answer = (await this.http.post(`${settings.url}/chat/completions`, { model: settings.model, messages }, headers)) as Completion;
    const content = answer?.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new BotServerError('the model server answered without choices[0].message.content', false);
    const text = content.trim().slice(0, MAX_ANSWER_CHARS);
    return { answers: text === '' ? [] : [{ kind: 'text', text }], bot_session: null, choices: [] };
  }
}
