import type { BaileysEventMap, Contact } from '@whiskeysockets/baileys';
import type { SessionEvent, SessionEventData } from '../../domain/session/events.js';
import { compact } from './compact.js';
import { isLid, isPhoneJid, normalizeJid } from './jid.js';

type ContactInfo = SessionEventData<'ContactsUpserted'>['contacts'][number];

/** One person as the address book and the network describe them; groups and broadcasts are no one. */
export function contactOf(c: Partial<Contact>): ContactInfo | undefined {
  const id = normalizeJid(c.id);
  if (!id || !(isLid(id) || isPhoneJid(id))) return undefined;
  const lid = isLid(id) ? id : normalizeJid(c.lid);
  const pn = isPhoneJid(id) ? id : normalizeJid(c.phoneNumber);
  // Keyed by the phone jid when the network gave it, as chats are (CONTRACT.md, "Addresses").
  return compact<ContactInfo>({
    jid: pn ?? id,
    lid: lid && isLid(lid) ? lid : undefined,
    name: c.name || undefined,
    push_name: c.notify || undefined,
    business_name: c.verifiedName || undefined,
  });
}

function contactsEvent(contacts: Partial<Contact>[]): SessionEvent[] {
  const infos = contacts.map(contactOf).filter((c): c is ContactInfo => !!c && (c.name !== undefined || c.push_name !== undefined || c.business_name !== undefined || c.lid !== undefined));
  return infos.length > 0 ? [{ type: 'ContactsUpserted', data: { contacts: infos } }] : [];
}

/**
 * The account's address book, block list and labels, as Baileys reports them: contacts from the
 * history sync and from contact updates (a message's push name is one), the block list the
 * socket fetches on open and its changes, labels and their chats (app-state sync).
 */
export function accountEvents(batch: Partial<BaileysEventMap>): SessionEvent[] {
  const events: SessionEvent[] = [];
  const history = batch['messaging-history.set'];
  if (history?.contacts?.length) events.push(...contactsEvent(history.contacts));
  if (batch['contacts.upsert']) events.push(...contactsEvent(batch['contacts.upsert']));
  if (batch['contacts.update']) events.push(...contactsEvent(batch['contacts.update']));
  const set = batch['blocklist.set'];
  if (set) events.push({ type: 'BlocklistUpdated', data: { action: 'set', jids: jids(set.blocklist) } });
  const update = batch['blocklist.update'];
  if (update) events.push({ type: 'BlocklistUpdated', data: { action: update.type === 'add' ? 'block' : 'unblock', jids: jids(update.blocklist) } });
  const label = batch['labels.edit'];
  if (label && typeof label.id === 'string') {
    events.push({ type: 'LabelsUpserted', data: { labels: [compact({ id: label.id, name: label.name ?? '', color: label.color ?? 0, deleted: label.deleted || undefined })] } });
  }
  const association = batch['labels.association'];
  if (association && association.association.type === 'label_jid') {
    const chat = normalizeJid(association.association.chatId);
    if (chat) events.push({ type: 'ChatLabeled', data: { chat, label_id: association.association.labelId, labeled: association.type === 'add' } });
  }
  return events;
}

const jids = (list: string[]) => list.map((j) => normalizeJid(j) ?? j);
