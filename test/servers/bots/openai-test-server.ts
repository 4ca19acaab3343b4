import sharp from 'sharp';
import { json, JsonTestServer, type Handler } from './http-json.js';

/**
 * A test tool, not part of the product: a server speaking OpenAI's chat completions
 * (POST {base}/chat/completions, Bearer key), as OpenAI, Ollama, vLLM and OpenRouter do. Its
 * "model" answers `You said: <last user message> (<n> messages of context)`, so a test sees both
 * the reply and the context the runner gave. A wrong key is 401, as OpenAI answers it.
 *
 * A user message may be content parts, as OpenAI's vision models take them: `{type: "text", text}`
 * and `{type: "image_url", image_url: {url: "data:<mime>;base64,<bytes>"}}`. Each part's shape is
 * checked (400 as OpenAI answers a malformed one), the image decoded and read, and the answer
 * describes it: `You said: <text> [image <mime> <w>x<h>, <n> bytes] (...)`, so a test sees that the
 * model got the very picture.
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
    let said: string;
    try {
      said = typeof last?.content === 'string' ? last.content : await describeParts(last?.content);
    } catch (err) {
      return json(res, 400, { error: { message: (err as Error).message, type: 'invalid_request_error' } });
    }
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

const DATA_URL = /^data:(image\/(?:png|jpeg|webp|gif));base64,([A-Za-z0-9+/]+={0,2})$/;
const SHARP_FORMAT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/webp': 'webp', 'image/gif': 'gif' };

/** Content parts, checked as OpenAI checks them, read into one line. */
async function describeParts(content: unknown): Promise<string> {
  if (!Array.isArray(content) || content.length === 0) throw new Error('content must be a string or a non-empty array of parts');
  const said: string[] = [];
  for (const part of content as Record<string, unknown>[]) {
    if (part?.type === 'text' && typeof part.text === 'string' && Object.keys(part).length === 2) {
      said.push(part.text);
      continue;
    }
    const image = part?.image_url as Record<string, unknown> | undefined;
    if (part?.type !== 'image_url' || typeof image?.url !== 'string' || Object.keys(part).length !== 2) throw new Error(`invalid content part: ${JSON.stringify(part).slice(0, 100)}`);
    const m = DATA_URL.exec(image.url);
    if (!m) throw new Error('image_url.url must be an https URL or a data:image/(png|jpeg|webp|gif);base64 URL (this server takes data URLs)');
    const bytes = Buffer.from(m[2] ?? '', 'base64');
    const meta = await sharp(bytes)
      .metadata()
      .catch(() => null);
    if (!meta || meta.format !== SHARP_FORMAT[m[1] ?? '']) throw new Error(`the image is not a valid ${m[1]}`);
    said.push(`[image ${m[1]} ${meta.width}x${meta.height}, ${bytes.length} bytes]`);
  }
  return said.join(' ');
}
