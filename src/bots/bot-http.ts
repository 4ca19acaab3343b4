import { request, type Agent } from 'undici';
import { createOutboundAgent } from '../infra/http/outbound-agent.js';
import { checkOutboundUrl } from '../infra/http/outbound-policy.js';

/** A bot's server did not answer usefully. `permanent`: retrying the same call cannot help. */
export class BotServerError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'BotServerError';
  }
}

/** A bot's answer is a few messages: anything bigger is refused, not read. */
const MAX_BODY_BYTES = 1_000_000;

export interface BotHttpOptions {
  allowPrivate: boolean;
  timeoutMs?: number;
}

/**
 * JSON POSTs to bot servers (Typebot, OpenAI-compatible), on a tenant's behalf: every URL passes
 * the outbound policy, every connection is checked on the address it dials, every call has a
 * timeout, redirects are not followed, and the answer is read up to a bound and must be JSON.
 */
export class BotHttp {
  private readonly agent: Agent;

  constructor(private readonly options: BotHttpOptions) {
    this.agent = createOutboundAgent({ allowPrivate: options.allowPrivate, timeoutMs: options.timeoutMs ?? 30_000, connectionsPerOrigin: 8 });
  }

  /** 404 answers are handed back (Typebot's expired session), as `null`. */
  async post(url: string, body: unknown, headers: Record<string, string> = {}, allow404 = false): Promise<unknown> {
    const verdict = checkOutboundUrl(url, this.options.allowPrivate);
    if (!verdict.ok) throw new BotServerError(`the bot's URL is not allowed: ${verdict.reason}`, true);
    let res;
    try {
      res = await request(url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'messaging-gateway-bots/1.0', ...headers },
        body: JSON.stringify(body),
        maxRedirections: 0,
      } as Parameters<typeof request>[1]);
    } catch (err) {
      throw new BotServerError(`the bot's server did not answer: ${(err as Error).message}`, false);
    }
    const text = await readBounded(res.body);
    if (allow404 && res.statusCode === 404) return null;
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const permanent = res.statusCode >= 400 && res.statusCode < 500 && ![408, 409, 425, 429].includes(res.statusCode);
      throw new BotServerError(`the bot's server answered ${res.statusCode}: ${text.slice(0, 200)}`, permanent);
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new BotServerError(`the bot's server answered something that is not JSON: ${text.slice(0, 100)}`, false);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

async function readBounded(body: AsyncIterable<Buffer | Uint8Array> & { destroy?: () => void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      body.destroy?.();
      throw new BotServerError(`the bot's server answered more than ${MAX_BODY_BYTES} bytes`, false);
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}
