import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { request, type Agent, type Dispatcher } from 'undici';
import { DomainError, invalidInput } from '../../domain/errors.js';
import { createOutboundAgent } from '../../infra/http/outbound-agent.js';
import { checkOutboundUrl } from '../../infra/http/outbound-policy.js';
import { BlockedAddressError } from '../../infra/http/public-lookup.js';

/** Where a send's file comes from, as the API takes it: a URL the gateway fetches, or the bytes. */
export type MediaInput = { url: string; data?: undefined } | { data: string; url?: undefined };

const MAX_REDIRECTS = 3;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const tooLarge = (max: number) => new DomainError('payload_too_large', `the media is larger than ${max} bytes (MEDIA_MAX_BYTES)`, [{ field: 'media', message: `at most ${max} bytes` }]);

/**
 * Brings a send's file to disk. A URL is a tenant's choice of address, so it is fetched under the
 * outbound-safety rules (https and public addresses unless ALLOW_PRIVATE_TARGETS; every redirect
 * checked again; the address checked on the socket dialled), at most `maxBytes` (refused from
 * its Content-Length, cut off past it otherwise), streamed to the file as it arrives.
 */
export class MediaInputs {
  private readonly agent: Agent;

  constructor(
    private readonly o: { maxBytes: number; allowPrivate: boolean; timeoutMs?: number },
  ) {
    this.agent = createOutboundAgent({ allowPrivate: o.allowPrivate, timeoutMs: o.timeoutMs ?? 30_000 });
  }

  /** Writes the file to `path`; answers its length and the name and type the source gave. */
  async toFile(input: MediaInput, path: string): Promise<{ length: number; name?: string; contentType?: string }> {
    if (input.data !== undefined) return { length: await this.decode(input.data, path) };
    return this.fetch(input.url, path);
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async decode(data: string, path: string): Promise<number> {
    const compact = data.replace(/\s+/g, '');
    if (compact === '' || compact.length % 4 !== 0 || !BASE64.test(compact)) throw invalidInput('media.data', 'must be base64 (standard alphabet, padded)');
    if ((compact.length / 4) * 3 > this.o.maxBytes + 2) throw tooLarge(this.o.maxBytes);
    const bytes = Buffer.from(compact, 'base64');
    if (bytes.length > this.o.maxBytes) throw tooLarge(this.o.maxBytes);
    await writeFile(path, bytes, { mode: 0o600 });
    return bytes.length;
  }

  private async fetch(raw: string, path: string): Promise<{ length: number; name?: string; contentType?: string }> {
    let url = raw;
    for (let hop = 0; ; hop++) {
      const verdict = checkOutboundUrl(url, this.o.allowPrivate);
      if (!verdict.ok) throw invalidInput('media.url', verdict.reason);
      let answer: Dispatcher.ResponseData;
      try {
        answer = await request(verdict.url, { dispatcher: this.agent, method: 'GET', headers: { accept: '*/*', 'user-agent': 'messaging-gateway' } });
      } catch (err) {
        throw fetchError(err);
      }
      const { statusCode, headers, body } = answer;
      if (statusCode >= 300 && statusCode < 400 && typeof headers.location === 'string') {
        body.resume();
        if (hop >= MAX_REDIRECTS) throw new DomainError('upstream_failed', 'the media URL redirects too often');
        url = new URL(headers.location, verdict.url).href;
        continue;
      }
      if (statusCode !== 200) {
        body.resume();
        throw invalidInput('media.url', `the media host answered ${statusCode}`);
      }
      const header = headers['content-length'];
      if (typeof header === 'string' && /^\d+$/.test(header) && Number(header) > this.o.maxBytes) {
        body.destroy();
        throw tooLarge(this.o.maxBytes);
      }
      let received = 0;
      const max = this.o.maxBytes;
      try {
        // One pass, with back-pressure: the bytes go to disk as they arrive and are counted on the way.
        const file = createWriteStream(path, { mode: 0o600 });
        await pipeline(body, async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            if ((received += chunk.length) > max) throw tooLarge(max);
            yield chunk;
          }
        }, file);
      } catch (err) {
        body.destroy();
        if (err instanceof DomainError) throw err;
        throw fetchError(err);
      }
      const type = headers['content-type'];
      const name = nameOf(headers['content-disposition'], verdict.url);
      return { length: received, ...(name ? { name } : {}), ...(typeof type === 'string' ? { contentType: type.split(';')[0]?.trim() } : {}) };
    }
  }
}

/** The file name a download suggests: Content-Disposition, else the URL's last path segment. */
function nameOf(disposition: string | string[] | undefined, url: URL): string | undefined {
  const header = typeof disposition === 'string' ? disposition : undefined;
  const quoted = header ? /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(header)?.[1] : undefined;
  const last = decodeURIComponent(url.pathname.split('/').pop() ?? '');
  const name = (quoted ?? last).trim();
  return name && name.length <= 255 && !/[\\/]/.test(name) ? name : undefined;
}

function fetchError(err: unknown): DomainError {
  const blocked = err instanceof BlockedAddressError || (err as { cause?: unknown })?.cause instanceof BlockedAddressError;
  if (blocked) return invalidInput('media.url', 'must not resolve to a private, loopback or link-local address');
  return new DomainError('upstream_failed', `the media URL could not be fetched: ${(err as Error)?.message ?? String(err)}`);
}
