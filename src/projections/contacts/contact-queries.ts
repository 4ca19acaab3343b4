import type { DocumentStore } from '../../infra/docstore/port.js';
import { CONTACTS, LABELS, type ContactDoc, type LabelDoc } from './contacts-projection.js';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class ContactQueries {
  constructor(private readonly docs: DocumentStore) {}

  /** By jid; `query` matches the names, the number or the jid, case-insensitively. */
  async page(instanceId: string, page: number, size: number, query?: string): Promise<{ total: number; contacts: ContactDoc[] }> {
    const contacts = this.docs.collection<ContactDoc>(CONTACTS);
    const filter: Record<string, unknown> = { instance_id: instanceId };
    if (query) {
      const pattern = { $regex: escape(query), $options: 'i' };
      filter.$or = [{ name: pattern }, { push_name: pattern }, { business_name: pattern }, { jid: pattern }, { lid: pattern }];
    }
    const [total, items] = await Promise.all([
      contacts.count(filter),
      contacts.find(filter, { sort: { jid: 1 }, skip: (page - 1) * size, limit: size }),
    ]);
    return { total, contacts: items };
  }

  async byJid(instanceId: string, jid: string): Promise<ContactDoc | null> {
    const contacts = this.docs.collection<ContactDoc>(CONTACTS);
    return (await contacts.findOne({ _id: `${instanceId}:${jid}` })) ?? (jid.endsWith('@lid') ? contacts.findOne({ instance_id: instanceId, lid: jid }) : null);
  }

  /** Everyone the account may post a status to: its known contacts by phone, blocked ones left out. */
  async statusAudience(instanceId: string): Promise<string[]> {
    const docs = await this.docs.collection<ContactDoc>(CONTACTS).find({ instance_id: instanceId, blocked: false, name: { $ne: '' } });
    return docs.filter((d) => d.jid.endsWith('@s.whatsapp.net')).map((d) => d.jid);
  }

  async labels(instanceId: string): Promise<LabelDoc[]> {
    return this.docs.collection<LabelDoc>(LABELS).find({ instance_id: instanceId }, { sort: { id: 1 } });
  }
}
