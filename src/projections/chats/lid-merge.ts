import type { NetworkMessage } from '../../domain/session/events.js';
import type { RecordedEvent } from '../../domain/recorded.js';
import type { WriteOp } from '../../infra/docstore/port.js';
import { APPLIED } from '../idempotent-writes.js';
import type { ReadDocs } from '../projection.js';
import type { ChatDoc } from './chats-projection.js';

/** A chat's _id: the instance and the jid it was first seen under. */
export const chatKey = (instanceId: string, jid: string) => `${instanceId}:${jid}`;
/** The phone number of a phone jid (device suffix dropped); '' for any other jid. */
export function phoneOf(jid: string): string {
  if (!jid.endsWith('@s.whatsapp.net')) return '';
  const at = jid.indexOf('@');
  const device = jid.indexOf(':');
  return jid.slice(0, device >= 0 && device < at ? device : at);
}

/** The phone↔LID pairs an event tells, once each (a LID or a phone jid met twice is one pair). */
export function pairsOf(event: RecordedEvent): { pn: string; lid: string }[] {
  let pairs: { pn: string; lid: string }[];
  const ofMessage = (m: NetworkMessage) => (!m.is_group && m.chat_lid ? [{ pn: m.chat, lid: m.chat_lid }] : []);
  switch (event.type) {
    case 'LidMappingLearned':
      pairs = event.data.pairs;
      break;
    case 'MessageReceived':
    case 'MessageSent':
      pairs = ofMessage(event.data.message);
      break;
    case 'HistorySyncReceived':
      pairs = event.data.messages.flatMap(ofMessage);
      break;
    default:
      return [];
  }
  // Nearly every message names no pair: asked for each chats event, live and in a rebuild.
  if (pairs.length === 0) return pairs;
  const seen = new Set<string>();
  return pairs.filter((p) => p.lid.endsWith('@lid') && p.pn.endsWith('@s.whatsapp.net') && !seen.has(p.lid) && !seen.has(p.pn) && (seen.add(p.lid), seen.add(p.pn)));
}

/** The fields that follow the newest message: whichever chat has it gives all of them. */
const LAST_MESSAGE = [
  'last_message_timestamp_ms',
  'last_message_id',
  'last_message_from_me',
  'last_message_sender',
  'last_message_user_name',
  'last_message_user_phone',
] as const;
/** How the person set the chat up on the phone: the chat active last says it. */
const SETTINGS = ['archived', 'pinned', 'mute_end_time', 'is_marked_spam'] as const;

/**
 * One chat of two that were one person's: unread counts added (neither chat's messages were read
 * in the other), the newest message and the settings of the chat active last, its name unless it
 * has none, marked unread if either was. The newer is the one with the later last message; on a
 * tie, `b`. Pure: the same two documents always give the same one.
 */
export function mergeChats(a: ChatDoc, b: ChatDoc): ChatDoc {
  const [older, newer] = a.last_message_timestamp_ms > b.last_message_timestamp_ms ? [b, a] : [a, b];
  const merged: ChatDoc = { ...older };
  for (const field of [...LAST_MESSAGE, ...SETTINGS]) (merged as Record<string, unknown>)[field] = newer[field];
  merged.name = newer.name !== '' ? newer.name : older.name;
  merged.messages_unread = a.messages_unread + b.messages_unread;
  merged.marked_as_unread = a.marked_as_unread || b.marked_as_unread;
  return merged;
}

/**
 * When the pair is learned and the person has both a chat under the LID (not yet folded) and one
 * under the phone jid, the two become the LID's document relabelled to the phone jid (writes by
 * LID find it by its key, writes by phone jid by its jid, as for a plain fold), and the phone
 * jid's document goes. Nothing to merge (either chat missing, or folded already: a replay, a
 * second report) answers no writes, and the plain fold does the rest.
 */
export async function mergeOnPair(instanceId: string, pn: string, lid: string, read: ReadDocs, chats: string): Promise<WriteOp[]> {
  const [lidChat] = (await read(chats, { _id: chatKey(instanceId, lid), jid: lid })) as ChatDoc[];
  if (!lidChat) return [];
  const phoneChats = (await read(chats, { instance_id: instanceId, jid: pn })) as ChatDoc[];
  if (phoneChats.length === 0) return [];
  const merged = phoneChats.reduce(mergeChats, lidChat);
  // The runner's own marks (idempotent writes) belong to the documents they were written on.
  const { [APPLIED]: _marks, ...doc } = merged as ChatDoc & { [APPLIED]?: unknown };
  return [
    // Relabel with the merged values first: a crash between the two writes leaves two rows, not a lost one.
    { collection: chats, op: 'replaceOne', filter: { _id: lidChat._id, jid: lid }, doc: { ...doc, _id: lidChat._id, instance_id: instanceId, jid: pn, phone: phoneOf(pn), lid } },
    ...phoneChats.map((p): WriteOp => ({ collection: chats, op: 'deleteOne', filter: { _id: p._id } })),
  ];
}
