import type { BotClient, BotTurn, BotTurnInput } from './bot-client.js';
import { MAX_ANSWER_CHARS } from './bot-client.js';
import { BotServerError, type BotHttp } from './bot-http.js';

type RichNode = { text?: unknown; bold?: unknown; italic?: unknown; underline?: unknown; strikethrough?: unknown; url?: unknown; type?: unknown; children?: unknown };
type Block = { type?: unknown; content?: { type?: unknown; richText?: unknown; url?: unknown; markdown?: unknown; plainText?: unknown } };
type Answer = { sessionId?: unknown; messages?: unknown; input?: { type?: unknown; items?: unknown } | null };

/**
 * Typebot's public chat API: a conversation starts the flow (its variables `name`, `phone` and
 * `jid` filled from the contact) and each next message continues the session. Answer blocks
 * become sends: rich text with WhatsApp formatting, images, videos and audio as media, embeds as
 * links; a choice input as a numbered list, so the contact may answer "2" or the option's text.
 */
export class TypebotClient implements BotClient {
  constructor(private readonly http: BotHttp) {}

  async turn(input: BotTurnInput): Promise<BotTurn> {
    const base = input.settings.url;
    if (!input.fresh && input.bot_session) {
      const reply = pickChoice(input.text, input.choices);
      const answer = await this.http.post(`${base}/api/v1/sessions/${encodeURIComponent(input.bot_session)}/continueChat`, { message: { type: 'text', text: reply } }, {}, true);
      // The session ended on Typebot's side (the flow finished or timed out): the message starts it again.
      if (answer !== null) return read(answer as Answer, input.bot_session);
    }
    const started = await this.http.post(`${base}/api/v1/typebots/${encodeURIComponent(input.settings.typebot ?? '')}/startChat`, {
      prefilledVariables: { name: input.contact.name, phone: input.contact.phone, jid: input.contact.jid },
    });
    const answer = started as Answer;
    if (typeof answer?.sessionId !== 'string') throw new BotServerError('Typebot answered startChat without a sessionId', false);
    return read(answer, answer.sessionId);
  }
}

/** "2" or "sales" names the second option "Sales"; anything else goes as typed. */
export function pickChoice(text: string, choices: string[]): string {
  const t = text.trim();
  const n = /^\d{1,2}$/.test(t) ? Number(t) : NaN;
  if (n >= 1 && n <= choices.length) return choices[n - 1] as string;
  return choices.find((c) => c.toLowerCase() === t.toLowerCase()) ?? text;
}

function read(answer: Answer, session: string): BotTurn {
  if (typeof answer !== 'object' || answer === null || !Array.isArray(answer.messages)) throw new BotServerError('Typebot answered without messages', false);
  const answers: BotTurn['answers'] = [];
  for (const block of answer.messages as Block[]) {
    const url = typeof block?.content?.url === 'string' ? block.content.url : null;
    switch (block?.type) {
      case 'text': {
        const text = richText(block.content?.richText) || (typeof block.content?.plainText === 'string' ? block.content.plainText : '') || (typeof block.content?.markdown === 'string' ? block.content.markdown : '');
        if (text.trim() !== '') answers.push({ kind: 'text', text: text.slice(0, MAX_ANSWER_CHARS) });
        break;
      }
      case 'image':
      case 'video':
      case 'audio':
        if (url && /^https?:\/\//.test(url)) answers.push({ kind: block.type, text: url });
        break;
      case 'embed':
        if (url) answers.push({ kind: 'text', text: url });
        break;
      default:
        break;
    }
  }
  const items = answer.input && Array.isArray(answer.input.items) ? (answer.input.items as { content?: unknown }[]) : [];
  const choices = answer.input?.type === 'choice input' ? items.flatMap((i) => (typeof i?.content === 'string' ? [i.content] : [])) : [];
  if (choices.length > 0) answers.push({ kind: 'text', text: choices.map((c, i) => `${i + 1}. ${c}`).join('\n') });
  return { answers, bot_session: answer.input ? session : null, choices };
}

/** Typebot's rich text (Slate nodes) in WhatsApp's formatting: *bold*, _italic_, ~strike~, links spelled out. */
function richText(nodes: unknown): string {
  if (!Array.isArray(nodes)) return '';
  return (nodes as RichNode[]).map((p) => inline(p)).join('\n');
}

function inline(node: RichNode): string {
  if (typeof node?.text === 'string') {
    let t = node.text;
    if (t.trim() === '') return t;
    if (node.bold) t = `*${t}*`;
    if (node.italic) t = `_${t}_`;
    if (node.strikethrough) t = `~${t}~`;
    return t;
  }
  const inner = Array.isArray(node?.children) ? (node.children as RichNode[]).map(inline).join('') : '';
  if (node?.type === 'a' && typeof node.url === 'string' && node.url !== inner) return `${inner} (${node.url})`;
  return inner;
}
