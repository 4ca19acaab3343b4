import { json, JsonTestServer, type Handler } from './http-json.js';

/**
 * A test tool, not part of the product: a server speaking OpenAI's chat completions
 * (POST {base}/chat/completions, Bearer key), as OpenAI, Ollama, vLLM and OpenRouter do. Its
 * "model" answers `You said: <last user message> (<n> messages of context)`, so a test sees both
 * the reply and the context the runner gave. A wrong key is 401, as OpenAI answers it.
 */
export interface ChatRequest {
  model: string;
  messages: { role: string; content: unknown }[];
}

export class OpenAiTestServer extends JsonTestServer {
  readonly requests: ChatRequest[] = [];
  /** While set, requests are held unanswered (a slow model): a test kills the gateway meanwhile. */
  hold = false;
  private released: (() => void)[] = [];

  /** Requests held now. */
  get waiting(): number {
    return this.released.length;
  }

  /** Answers every held request (to whoever still listens) and holds no more. */
  release(): void {
    this.hold = false;
    for (const go of this.released.splice(0)) go();
  }

  constructor(readonly apiKey = 'sk-test-server-key-0001') {
    super();
  }

  protected handle: Handler = async (req, body, res) => {
    if (this.hold) await new Promise<void>((resolve) => this.released.push(resolve));
    if (req.method !== 'POST' || !/\/chat\/completions$/.test(req.url ?? '')) return json(res, 404, { error: { message: 'not found' } });
    if (req.headers.authorization !== `Bearer ${this.apiKey}`) return json(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } });
    const request = body as ChatRequest;
    if (!request || typeof request.model !== 'string' || !Array.isArray(request.messages)) return json(res, 400, { error: { message: 'model and messages are required' } });
    this.requests.push(request);
    const last = [...request.messages].reverse().find((m) => m.role === 'user');
    const said = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
    json(res, 200, {
      id: `chatcmpl-${this.requests.length}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      choices: [{ index: 0, message: { role: 'assistant', content: `You said: ${said} (${request.messages.length} messages of context)` }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
  };
}
