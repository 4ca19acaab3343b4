import { request, type Agent, type Dispatcher } from 'undici';
import { createOutboundAgent } from '../../infra/http/outbound-agent.js';
import { checkOutboundUrl } from '../../infra/http/outbound-policy.js';

/** What a text's first link shows in the chat. */
export interface LinkPreview {
  /** The link as it stands in the text. */
  url: string;
  title: string;
  description?: string;
}

export interface LinkPreviewOptions {
  allowPrivate: boolean;
  /** The whole fetch, redirects included (default 3 s): a send never waits longer for its preview. */
  timeoutMs?: number;
  /** Bytes of the page read at most (default 256 KiB); only its head is wanted. */
  maxBytes?: number;
}

const MAX_REDIRECTS = 3;
const TITLE_CHARS = 256;
const DESCRIPTION_CHARS = 512;
/** A link as a chat client finds one: http(s), up to the next space or closing bracket. */
const LINK = /\bhttps?:\/\/[^\s<>"'`]+/i;

/**
 * Link previews for texts the gateway sends (CONTRACT, `link_preview`). The page is the text's
 * author's choice of address, so it is fetched under the outbound-safety rules: https and public
 * addresses only unless ALLOW_PRIVATE_TARGETS (every redirect checked again, the address checked on
 * the socket dialled), within a time bound, a size bound, HTML only, and read only up to the end of
 * its head. Any failure is no preview: the text goes out without one.
 */
export class LinkPreviews {
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;

  constructor(private readonly o: LinkPreviewOptions) {
    this.timeoutMs = o.timeoutMs ?? 3000;
    this.maxBytes = o.maxBytes ?? 256 * 1024;
    this.agent = createOutboundAgent({ allowPrivate: o.allowPrivate, timeoutMs: this.timeoutMs });
  }

  /** The preview of the first link in `text`, or null (no link, or nothing to show). */
  async of(text: string): Promise<LinkPreview | null> {
    const matched = LINK.exec(text)?.[0]?.replace(/[.,;:!?)\]}]+$/, '');
    if (!matched) return null;
    const page = await this.head(matched).catch(() => null);
    if (!page) return null;
    const found = parseHead(page);
    return found ? { url: matched, ...found } : null;
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  /** The page's head (what came before `</head>` or `<body`), or null when it is not an HTML page the rules allow. */
  private async head(first: string): Promise<string | null> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    let url = first;
    for (let hop = 0; ; hop++) {
      const verdict = checkOutboundUrl(url, this.o.allowPrivate);
      if (!verdict.ok) return null;
      const answer: Dispatcher.ResponseData = await request(verdict.url, {
        dispatcher: this.agent,
        method: 'GET',
        signal,
        headers: { accept: 'text/html', 'user-agent': 'messaging-gateway (link preview)' },
      });
      const { statusCode, headers, body } = answer;
      if (statusCode >= 300 && statusCode < 400 && typeof headers.location === 'string') {
        discard(body);
        if (hop >= MAX_REDIRECTS) return null;
        url = new URL(headers.location, verdict.url).href;
        continue;
      }
      const type = typeof headers['content-type'] === 'string' ? headers['content-type'] : '';
      if (statusCode !== 200 || !/^\s*(text\/html|application\/xhtml\+xml)\b/i.test(type)) {
        discard(body);
        return null;
      }
      return this.readHead(body);
    }
  }

  private async readHead(body: Dispatcher.ResponseData['body']): Promise<string> {
    let text = '';
    let bytes = 0;
    const decoder = new TextDecoder('utf-8');
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        const piece = chunk.subarray(0, Math.max(0, this.maxBytes - bytes));
        bytes += piece.length;
        text += decoder.decode(piece, { stream: true });
        const end = text.search(/<\/head\s*>|<body[\s>]/i);
        if (end >= 0) return text.slice(0, end);
        if (bytes >= this.maxBytes) break;
      }
      return text;
    } finally {
      // The rest of the page is never read.
      discard(body);
    }
  }
}

/** Drops a body unread: undici reports the drop as an error of the stream, which nobody awaits here. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** The title and description a page's head declares: Open Graph first, then `<title>` and `description`. */
export function parseHead(head: string): { title: string; description?: string } | null {
  const metas = new Map<string, string>();
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const attrs = attributesOf(tag);
    const key = (attrs.get('property') ?? attrs.get('name'))?.toLowerCase();
    const content = attrs.get('content');
    if (key && content !== undefined && !metas.has(key)) metas.set(key, content);
  }
  const titleTag = /<title\b[^>]*>([^<]*)<\/title\s*>/i.exec(head)?.[1];
  const title = clean(metas.get('og:title') ?? metas.get('twitter:title') ?? titleTag ?? '', TITLE_CHARS);
  if (!title) return null;
  const description = clean(metas.get('og:description') ?? metas.get('description') ?? metas.get('twitter:description') ?? '', DESCRIPTION_CHARS);
  return { title, ...(description ? { description } : {}) };
}

function attributesOf(tag: string): Map<string, string> {
  const attrs = new Map<string, string>();
  for (const m of tag.matchAll(/([a-zA-Z:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
    attrs.set((m[1] as string).toLowerCase(), m[2] ?? m[3] ?? m[4] ?? '');
  }
  return attrs;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function clean(raw: string, max: number): string {
  const decoded = raw.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1]?.toLowerCase() === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
  // Control characters never reach the chat; runs of white space are one space.
  const text = decoded.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
