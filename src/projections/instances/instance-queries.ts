import type { DocumentStore, Filter, SortSpec } from '../../infra/docstore/port.js';
import { INSTANCES, type InstanceDoc } from './instances-projection.js';

export interface InstanceListQuery {
  accountId: string;
  page: number;
  size: number;
  query?: string;
  connected?: boolean;
  billingStatus?: string;
  sort: 'name' | 'created_at' | 'updated_at' | 'billing_status' | 'connected';
  sortDesc: boolean;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class InstanceQueries {
  /** Every authenticated instance request reads through this handle. */
  private readonly instances;

  constructor(private readonly docs: DocumentStore) {
    this.instances = docs.collection<InstanceDoc>(INSTANCES);
  }

  byId(instanceId: string): Promise<InstanceDoc | null> {
    return this.instances.findOne({ _id: instanceId });
  }

  byTokenHash(tokenHash: string): Promise<InstanceDoc | null> {
    return this.docs.collection<InstanceDoc>(INSTANCES).findOne({ token_hash: tokenHash });
  }

  async list(q: InstanceListQuery): Promise<{ total: number; items: InstanceDoc[] }> {
    const filter: Filter = { account_id: q.accountId };
    if (q.connected !== undefined) filter.connected = q.connected;
    if (q.billingStatus !== undefined) filter.billing_status = q.billingStatus;
    if (q.query) {
      const regex = { $regex: escapeRegex(q.query), $options: 'i' };
      filter.$or = [{ name: regex }, { _id: regex }, { phone: regex }];
    }
    const direction = q.sortDesc ? -1 : 1;
    // _id breaks ties so pages never overlap or skip.
    const sort: SortSpec = { [q.sort]: direction, _id: direction };
    const collection = this.docs.collection<InstanceDoc>(INSTANCES);
    const [total, items] = await Promise.all([
      collection.count(filter),
      collection.find(filter, { sort, skip: (q.page - 1) * q.size, limit: q.size }),
    ]);
    return { total, items };
  }
}
