import { invalidInput } from '../../domain/errors.js';
import type { NetworkMessage } from '../../domain/session/events.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import { GROUPS, type GroupDoc } from '../../projections/groups/groups-projection.js';
import type { NetworkConnection } from '../../sessions/port.js';

const isGroup = (jid: string) => jid.endsWith('@g.us');
const digitsOf = (jid: string) => jid.split('@')[0]?.split(':')[0] ?? '';

/**
 * Who a send goes to, as the network knows them: `phone` as CONTRACT's Chat operations take it
 * (digits, or a user, group or LID jid). A number is looked up on the network first (400 "not on
 * WhatsApp" when it is not, a Brazilian mobile tried both ways); jids go as given.
 */
export async function resolveRecipient(connection: NetworkConnection, phone: string): Promise<string> {
  if (phone.endsWith('@g.us') || phone.endsWith('@lid')) return phone;
  const digits = digitsOf(phone);
  const check = await connection.checkNumber(digits);
  if (!check.exists) throw invalidInput('phone', `${digits} is not on WhatsApp`);
  return check.jid;
}

/** The group as the group read model has it (participants by jid, phone jid and LID). */
export class Groups {
  constructor(private readonly docs: DocumentStore) {}

  find(instanceId: string, jid: string): Promise<GroupDoc | null> {
    return this.docs.collection<GroupDoc>(GROUPS).findOne({ _id: `${instanceId}:${jid}` });
  }

  /**
   * Mentions as jids. In a group each must be a member (a mention of someone outside it notifies
   * nobody: 400); in a 1:1 chat, the other party or the account itself.
   */
  async mentions(instanceId: string, chat: string, mentions: string[] | undefined, self: string[]): Promise<string[] | undefined> {
    if (!mentions || mentions.length === 0) return undefined;
    const jids = [...new Set(mentions.map((m) => (m.includes('@') ? m : `${m.replace(/\D/g, '')}@s.whatsapp.net`)))];
    if (isGroup(chat)) {
      const group = await this.find(instanceId, chat);
      if (group) {
        const members = new Set(group.participants.flatMap((p) => [p.jid, p.phone_number, p.lid].filter((j): j is string => !!j).map(normal)));
        const outside = jids.find((j) => !members.has(normal(j)));
        if (outside) throw invalidInput('mentions', `${outside} is not a member of the group`);
      }
      return jids;
    }
    const allowed = new Set([normal(chat), ...self.map(normal)]);
    const outside = jids.find((j) => !allowed.has(normal(j)));
    if (outside) throw invalidInput('mentions', `${outside} is not in this chat`);
    return jids;
  }

  /** Whether the account administers the group (it may delete others' messages there). */
  async isAdmin(instanceId: string, group: string, self: string[]): Promise<boolean> {
    const doc = await this.find(instanceId, group);
    const mine = new Set(self.map(normal));
    return !!doc?.participants.some((p) => p.is_admin && [p.jid, p.phone_number, p.lid].some((j) => !!j && mine.has(normal(j))));
  }
}

/** A jid without its device part; a bare number as a user jid. */
function normal(jid: string): string {
  const at = jid.indexOf('@');
  if (at < 0) return `${jid}@s.whatsapp.net`;
  return `${digitsOf(jid)}${jid.slice(at)}`;
}

/** Whether a stored message belongs to the chat `jid` (by phone jid or LID). */
export function inChat(message: NetworkMessage, jid: string): boolean {
  const target = normal(jid);
  return [message.chat, message.chat_lid].some((c) => !!c && normal(c) === target);
}
