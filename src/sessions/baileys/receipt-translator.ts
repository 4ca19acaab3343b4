import { proto, type BaileysEventMap } from '@whiskeysockets/baileys';
import type { SessionEvent, SessionEventData } from '../../domain/session/events.js';
import { normalizeJid, toInt } from './jid.js';
import { addressOf, type TranslateContext } from './message-translator.js';

/** A chat or person as webhooks key them: the phone jid whenever the pair is known. */
function personal(jid: string | null | undefined, ctx: TranslateContext, alternate?: string | null): string | undefined {
  const normalized = normalizeJid(jid);
  return normalized ? addressOf(normalized, ctx, alternate).address : undefined;
}

type Receipt = SessionEventData<'ReceiptReceived'>;
type ReceiptState = Receipt['state'];

const Status = proto.WebMessageInfo.Status;

/**
 * `messages.update` carries receipts for 1:1 chats as a new message status. On our messages
 * (fromMe) a DELIVERY_ACK means delivered and READ or PLAYED (voice notes, videos) means read. On
 * messages we received, a READ status means another of our devices (the phone) read them: ReadSelf.
 * SERVER_ACK (the server has it) and updates without a status (edits, stars, polls) are not
 * receipts. Groups receipts come through `message-receipt.update` instead.
 */
export function messageUpdateReceipts(updates: BaileysEventMap['messages.update'], ctx: TranslateContext): SessionEvent[] {
  const receipts: Receipt[] = [];
  for (const { key, update } of updates) {
    const status = update.status;
    const chat = personal(key.remoteJid, ctx, key.remoteJidAlt);
    if (status === null || status === undefined || !chat || !key.id) continue;
    const state = key.fromMe ? ourMessageState(status) : status >= Status.READ ? 'ReadSelf' : undefined;
    if (!state) continue;
    const sender = state === 'ReadSelf' ? normalizeJid(ctx.me?.jid) ?? chat : personal(key.participant, ctx, key.participantAlt) ?? chat;
    if (state === 'Failed') {
      // The server's error ack carries no time: it is now.
      receipts.push({ message_ids: [key.id], chat, sender, state, timestamp_s: ctx.nowS ?? 0, error: refusalOf(update.messageStubParameters) });
      continue;
    }
    receipts.push({ message_ids: [key.id], chat, sender, state, timestamp_s: toInt(update.messageTimestamp) ?? 0 });
  }
  return grouped(receipts);
}

/**
 * On our messages: DELIVERY_ACK delivered, READ read, PLAYED played (a voice note or video), and
 * ERROR (Baileys' status for the server's error ack) failed: the network took the message, then
 * refused it. SERVER_ACK and PENDING are not receipts.
 */
function ourMessageState(status: proto.WebMessageInfo.Status): ReceiptState | undefined {
  if (status === Status.DELIVERY_ACK) return 'Delivered';
  if (status === Status.READ) return 'Read';
  if (status === Status.PLAYED) return 'Played';
  if (status === Status.ERROR) return 'Failed';
  return undefined;
}

/** What the network's error codes mean, as far as they are known (Baileys' decode-wa-message.ts, WA Web). */
const REFUSALS: Record<number, string> = {
  463: 'the account is restricted: WhatsApp refuses messages that start new chats (existing chats still work); the recipient can write first, or wait for the restriction to end',
  479: 'WhatsApp rejected the message as invalid (a stale device session or a bad address); send it again',
};

/** The code and reason of an error ack, from Baileys' `messageStubParameters` ([code, text?]). */
function refusalOf(parameters: readonly unknown[] | null | undefined): { code: number; reason: string } {
  const code = Number.parseInt(String(parameters?.[0] ?? ''), 10);
  const text = typeof parameters?.[1] === 'string' ? parameters[1] : undefined;
  if (!Number.isInteger(code)) return { code: 0, reason: text ?? 'WhatsApp refused the message' };
  return { code, reason: REFUSALS[code] ?? text ?? `WhatsApp refused the message (error ${code})` };
}

/**
 * `message-receipt.update` carries per-participant receipts in groups (and status broadcasts):
 * the participant who read or received is the receipt's sender. A read by our own account (the
 * phone reading a group message) is ReadSelf.
 */
export function userReceiptEvents(updates: BaileysEventMap['message-receipt.update'], ctx: TranslateContext): SessionEvent[] {
  const me = [normalizeJid(ctx.me?.jid), normalizeJid(ctx.me?.lid)].filter((j): j is string => !!j);
  const receipts: Receipt[] = [];
  for (const { key, receipt } of updates) {
    const chat = personal(key.remoteJid, ctx, key.remoteJidAlt);
    const raw = normalizeJid(receipt.userJid);
    if (!chat || !raw || !key.id) continue;
    // Our own read is recognised by either identity; anyone else is named by phone jid when known.
    const sender = me.includes(raw) ? raw : (personal(raw, ctx) ?? raw);
    const played = toInt(receipt.playedTimestamp);
    const read = toInt(receipt.readTimestamp);
    const delivered = toInt(receipt.receiptTimestamp);
    let state: ReceiptState;
    let timestamp_s: number;
    if (played && !me.includes(sender)) [state, timestamp_s] = ['Played', played];
    else if (read || played) [state, timestamp_s] = [me.includes(sender) ? 'ReadSelf' : 'Read', (read || played) as number];
    else if (delivered) [state, timestamp_s] = ['Delivered', delivered];
    else continue;
    receipts.push({ message_ids: [key.id], chat, sender, state, timestamp_s });
  }
  return grouped(receipts);
}

/**
 * WhatsApp acknowledges several messages in one receipt and Baileys splits them into one update
 * per message; we join neighbours that share chat, sender, state and time back into one event.
 */
function grouped(receipts: Receipt[]): SessionEvent[] {
  const out: Receipt[] = [];
  for (const receipt of receipts) {
    const last = out[out.length - 1];
    if (
      last &&
      last.chat === receipt.chat &&
      last.sender === receipt.sender &&
      last.state === receipt.state &&
      last.timestamp_s === receipt.timestamp_s &&
      last.error?.code === receipt.error?.code
    ) {
      if (!last.message_ids.includes(receipt.message_ids[0] as string)) last.message_ids.push(...receipt.message_ids);
    } else {
      out.push({ ...receipt, message_ids: [...receipt.message_ids] });
    }
  }
  return out.map((data) => ({ type: 'ReceiptReceived', data }));
}
