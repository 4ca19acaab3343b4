import type { DocumentStore } from '../../infra/docstore/port.js';
import { GROUPS, LID_MAP, type GroupDoc, type LidDoc } from './groups-projection.js';

/** Both directions of the phone↔LID map, for the identities a page shows. */
export interface LidPairs {
  pnByLid: Map<string, string>;
  lidByPn: Map<string, string>;
}

export class GroupQueries {
  constructor(private readonly docs: DocumentStore) {}

  async page(instanceId: string, page: number, pageSize: number): Promise<{ total: number; groups: GroupDoc[] }> {
    const groups = this.docs.collection<GroupDoc>(GROUPS);
    const [total, items] = await Promise.all([
      groups.count({ instance_id: instanceId }),
      groups.find({ instance_id: instanceId }, { sort: { name: 1, jid: 1 }, skip: (page - 1) * pageSize, limit: pageSize }),
    ]);
    return { total, groups: items };
  }

  async byJid(instanceId: string, jid: string): Promise<GroupDoc | null> {
    return this.docs.collection<GroupDoc>(GROUPS).findOne({ _id: `${instanceId}:${jid}` });
  }

  /** The known pairs of the given LIDs and phone-number jids, in one read each. */
  async pairs(instanceId: string, lids: string[], pns: string[]): Promise<LidPairs> {
    const map = this.docs.collection<LidDoc>(LID_MAP);
    const [byLid, byPn] = await Promise.all([
      lids.length ? map.find({ _id: { $in: [...new Set(lids)].map((lid) => `${instanceId}:${lid}`) } }) : [],
      pns.length ? map.find({ instance_id: instanceId, pn: { $in: [...new Set(pns)] } }) : [],
    ]);
    const known = [...byLid, ...byPn];
    return { pnByLid: new Map(known.map((d) => [d.lid, d.pn])), lidByPn: new Map(known.map((d) => [d.pn, d.lid])) };
  }
}
