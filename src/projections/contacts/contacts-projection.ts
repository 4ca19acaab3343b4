import type { RecordedEvent } from '../../domain/recorded.js';
import type { NetworkMessage } from '../../domain/session/events.js';
import { idOfStream } from '../../domain/streams.js';
import type { Document, DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import { APPLIED } from '../idempotent-writes.js';
import { pairsOf, phoneOf } from '../chats/lid-merge.js';
import type { Projection, ReadDocs } from '../projection.js';

export const CONTACTS = 'contacts';
export const LABELS = 'labels';

/** One person the account knows: by phone jid whenever known, the LID beside (as chats are keyed). */
export interface ContactDoc extends Document {
  _id: string;
  instance_id: string;
  jid: string;
  /** Digits of the phone jid; '' while only the LID is known. */
  phone: string;
  lid: string;
  /** Saved in the account's address book. */
  name: string;
  /** What the person calls themselves. */
  push_name: string;
  business_name: string;
  blocked: boolean;
}

export interface LabelDoc extends Document {
  _id: string;
  instance_id: string;
  id: string;
  name: string;
  color: number;
}

const key = (instanceId: string, jid: string) => `${instanceId}:${jid}`;
const isPerson = (jid: string) => jid.endsWith('@s.whatsapp.net') || jid.endsWith('@lid');

function blank(jid: string) {
  return { phone: phoneOf(jid), lid: jid.endsWith('@lid') ? jid : '', name: '', push_name: '', business_name: '', blocked: false };
}

/** A contact's fields set, the document made first when new (fields in one order either way). */
function upsert(instanceId: string, jid: string, set: Record<string, unknown>): WriteOp[] {
  const id = key(instanceId, jid);
  const fields = blank(jid);
  for (const field of Object.keys(set)) delete (fields as Record<string, unknown>)[field];
  return [{ collection: CONTACTS, op: 'updateOne', filter: { _id: id }, update: { $setOnInsert: { instance_id: instanceId, jid, ...fields }, $set: set }, upsert: true }];
}

/** A message's sender, when it is someone else: their push name, and their LID beside. */
function fromMessage(instanceId: string, m: NetworkMessage): WriteOp[] {
  if (m.from_me || !m.push_name) return [];
  const jid = m.sender_pn ?? m.sender;
  if (!isPerson(jid)) return [];
  const set: Record<string, unknown> = { push_name: m.push_name };
  if (m.sender_lid && jid !== m.sender_lid) set.lid = m.sender_lid;
  return upsert(instanceId, jid, set);
}

/**
 * The account's contacts: the address book the history sync and contact updates tell, and
 * everyone who wrote (their push name), merged across phone jid and LID as chats are; blocked
 * ones marked from the block list. Labels of business accounts beside them.
 */
export const contactsProjection: Projection = {
  name: 'contacts',
  eventTypes: new Set(['ContactsUpserted', 'MessageReceived', 'HistorySyncReceived', 'BlocklistUpdated', 'LidMappingLearned', 'LabelsUpserted', 'SessionLoggedOut']),

  async setup(docs: DocumentStore) {
    await docs.collection(CONTACTS).createIndex({ name: 'instance_jid', keys: { instance_id: 1, jid: 1 } });
    await docs.collection(CONTACTS).createIndex({ name: 'instance_lid', keys: { instance_id: 1, lid: 1 } });
    await docs.collection(LABELS).createIndex({ name: 'instance', keys: { instance_id: 1, id: 1 } });
  },

  apply(event) {
    const instanceId = idOfStream(event.streamId);
    switch (event.type) {
      case 'ContactsUpserted':
        return event.data.contacts.flatMap((c) => {
          if (!isPerson(c.jid)) return [];
          const set: Record<string, unknown> = {};
          if (c.name !== undefined) set.name = c.name;
          if (c.push_name !== undefined) set.push_name = c.push_name;
          if (c.business_name !== undefined) set.business_name = c.business_name;
          if (c.lid !== undefined && c.lid !== c.jid) set.lid = c.lid;
          return upsert(instanceId, c.jid, set);
        });
      case 'MessageReceived':
        return fromMessage(instanceId, event.data.message);
      case 'HistorySyncReceived':
        return event.data.messages.filter((m) => !m.is_group).flatMap((m) => fromMessage(instanceId, m));
      case 'BlocklistUpdated': {
        const d = event.data;
        const people = d.jids.filter(isPerson);
        const writes: WriteOp[] = [];
        if (d.action === 'set') writes.push({ collection: CONTACTS, op: 'updateMany', filter: { instance_id: instanceId, blocked: true }, update: { $set: { blocked: false } } });
        const blocked = d.action !== 'unblock';
        for (const jid of people) {
          // A LID the contact is known by already marks that contact; otherwise the jid itself.
          writes.push({ collection: CONTACTS, op: 'updateMany', filter: { instance_id: instanceId, lid: jid }, update: { $set: { blocked } } });
          if (!jid.endsWith('@lid') || blocked) writes.push(...upsert(instanceId, jid, { blocked }));
        }
        return writes;
      }
      case 'LabelsUpserted':
        return event.data.labels.map((l): WriteOp =>
          l.deleted
            ? { collection: LABELS, op: 'deleteOne', filter: { _id: key(instanceId, l.id) } }
            : { collection: LABELS, op: 'replaceOne', filter: { _id: key(instanceId, l.id) }, doc: { _id: key(instanceId, l.id), instance_id: instanceId, id: l.id, name: l.name, color: l.color }, upsert: true },
        );
      case 'SessionLoggedOut':
        return [
          { collection: CONTACTS, op: 'deleteMany', filter: { instance_id: instanceId } },
          { collection: LABELS, op: 'deleteMany', filter: { instance_id: instanceId } },
        ];
      default:
        return [];
    }
  },

  /** A phone↔LID pair makes the person's LID contact and phone contact one (the phone's). */
  reading: {
    needs: (event) => pairsOf(event).length > 0,
    async apply(event: RecordedEvent, read: ReadDocs) {
      const instanceId = idOfStream(event.streamId);
      const merges: WriteOp[] = [];
      for (const { pn, lid } of pairsOf(event)) merges.push(...(await mergePair(instanceId, pn, lid, read)));
      return [...merges, ...contactsProjection.apply(event)];
    },
  },
};

/**
 * The LID's contact folds into the phone jid's: the phone's own values win where it has them, the
 * LID's fill the rest; the LID document goes. Nothing to fold (no LID contact, a replay) writes only
 * the LID beside the phone contact when there is one.
 */
async function mergePair(instanceId: string, pn: string, lid: string, read: ReadDocs): Promise<WriteOp[]> {
  const [lidDoc] = (await read(CONTACTS, { _id: key(instanceId, lid) })) as ContactDoc[];
  const [pnDoc] = (await read(CONTACTS, { _id: key(instanceId, pn) })) as ContactDoc[];
  if (!lidDoc) return pnDoc ? [{ collection: CONTACTS, op: 'updateOne', filter: { _id: pnDoc._id }, update: { $set: { lid } } }] : [];
  const strip = (d: ContactDoc | undefined) => {
    if (!d) return {};
    const { [APPLIED]: _marks, ...rest } = d as ContactDoc & { [APPLIED]?: unknown };
    return rest;
  };
  const base = strip(lidDoc) as ContactDoc;
  const mine = strip(pnDoc) as Partial<ContactDoc>;
  const pick = (field: 'name' | 'push_name' | 'business_name') => (mine[field] ? mine[field] : base[field]);
  const merged: ContactDoc = {
    _id: key(instanceId, pn),
    instance_id: instanceId,
    jid: pn,
    phone: phoneOf(pn),
    lid,
    name: pick('name') ?? '',
    push_name: pick('push_name') ?? '',
    business_name: pick('business_name') ?? '',
    blocked: (mine.blocked ?? false) || base.blocked,
  };
  return [
    { collection: CONTACTS, op: 'replaceOne', filter: { _id: merged._id }, doc: merged, upsert: true },
    { collection: CONTACTS, op: 'deleteOne', filter: { _id: lidDoc._id } },
  ];
}
