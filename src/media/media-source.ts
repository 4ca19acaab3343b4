import type { Readable } from 'node:stream';
import { request, type Agent } from 'undici';
import { DomainError, invalidInput } from '../domain/errors.js';
import { createOutboundAgent } from '../infra/http/outbound-agent.js';
import { checkOutboundUrl } from '../infra/http/outbound-policy.js';
import { BlockedAddressError } from '../infra/http/public-lookup.js';

export interface MediaSourceOptions {
  /** The network's media hosts (NetworkChoice.mediaHosts): nothing else is ever fetched. */
  allowedHost: (url: URL) => boolean;
  /** ALLOW_PRIVATE_TARGETS: http and loopback allowed (development, tests). */
  allowPrivate: boolean;
  /**
   * The allowed hosts are the gateway's own (the sandbox's media at PUBLIC_URL): fetched over
   * http or loopback whatever ALLOW_PRIVATE_TARGETS says, since no tenant chose the address;
   * `allowedHost` still admits that one origin and nothing else.
   */
  ownHost?: boolean;
  /** For the answer's headers, and again for each pause in the body. */
  timeoutMs?: number;
  /** Headers the network's media hosts expect on every download (NetworkChoice.mediaHeaders). */
  headers?: Record<string, string>;
}

const BODY_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * The media host no longer has the file (404, 410): WhatsApp keeps media for a while only, and
 * history media often points at files already gone. The sender's phone can upload it again.
 */
export class MediaGoneError extends DomainError {
  constructor(readonly statusCode: number) {
    super('upstream_failed', `the media host answered ${statusCode}`);
  }
}

const tooLarge = (max: number) =>
  new DomainError('payload_too_large', `the media is larger than ${max} bytes`, [{ field: 'url', message: `media over ${max} bytes` }]);

/**
 * Fetches encrypted media from the network's media hosts only. The URL must be on the allowlist
 * and pass the outbound policy; the name is checked again on the address dialled. Bytes are
 * handed over as they arrive and counted: past `maxBytes` the download is aborted, so an oversized
 * file is never read to its end (nor at all when its Content-Length already says so).
 */
export class MediaSource {
  private readonly agent: Agent;
  private readonly timeoutMs: number;

  constructor(private readonly options: MediaSourceOptions) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.agent = createOutboundAgent({ allowPrivate: options.allowPrivate || options.ownHost === true, timeoutMs: this.timeoutMs });
  }

  /** Refuses a URL the instance may not make us fetch (400 naming `url`). */
  check(url: URL): void {
    if (!this.options.allowedHost(url)) throw invalidInput('url', `${url.host} is not a media host of this network`);
    const verdict = checkOutboundUrl(url.href, this.options.allowPrivate || this.options.ownHost === true);
    if (!verdict.ok) throw invalidInput('url', verdict.reason);
  }

  /**
   * Streams the bytes at `url`; resolves with the byte count. `open` hears the announced length
   * (Content-Length, already checked against the cap) before the first byte and answers where
   * the bytes go.
   */
  async fetch(url: URL, maxBytes: number, open: (announced: number | undefined) => (chunk: Buffer) => void): Promise<number> {
    this.check(url);
    // A deep body buffer: with the default 64 KiB the socket pauses at every chunk, which costs
    // a large download as much as decrypting it.
    let answer: Awaited<ReturnType<typeof request>>;
    try {
      answer = await request(url, { dispatcher: this.agent, method: 'GET', highWaterMark: BODY_BUFFER_BYTES, ...(this.options.headers ? { headers: this.options.headers } : {}) });
    } catch (err) {
      // Thrown or rejected alike: whatever undici says about the address or the transfer.
      throw fetchError(err);
    }
    const { statusCode, headers, body } = answer;
    if (statusCode !== 200) {
      discard(body);
      if (statusCode === 404 || statusCode === 410) throw new MediaGoneError(statusCode);
      throw new DomainError('upstream_failed', `the media host answered ${statusCode}`);
    }
    const header = headers['content-length'];
    const announced = typeof header === 'string' && /^\d+$/.test(header) ? Number(header) : undefined;
    if (announced !== undefined && announced > maxBytes) {
      discard(body);
      throw tooLarge(maxBytes);
    }
    let onChunk: (chunk: Buffer) => void;
    try {
      onChunk = open(announced);
    } catch (err) {
      discard(body);
      throw err;
    }
    let received = 0;
    let consumerFailed = false;
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        received += chunk.length;
        if (received > maxBytes) throw tooLarge(maxBytes);
        consumerFailed = true;
        onChunk(chunk);
        consumerFailed = false;
      }
    } catch (err) {
      discard(body);
      // The consumer's own errors are its to explain; only the transfer's are the host's.
      throw err instanceof DomainError || consumerFailed ? err : fetchError(err);
    }
    return received;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** Drops the rest of an answer unread; the abort that follows is ours, not an error to report. */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

function fetchError(err: unknown): DomainError {
  const blocked = err instanceof BlockedAddressError || (err as { cause?: unknown })?.cause instanceof BlockedAddressError;
  if (blocked) return invalidInput('url', 'must not resolve to a private, loopback or link-local address');
  return new DomainError('upstream_failed', `the media host could not be reached: ${(err as Error)?.message ?? String(err)}`);
}
