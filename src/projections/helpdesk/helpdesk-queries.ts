import type { DocumentStore } from '../../infra/docstore/port.js';
import { HELPDESKS, type HelpdeskDoc } from './helpdesk-projection.js';

export class HelpdeskQueries {
  constructor(private readonly docs: DocumentStore) {}

  byInstance(instanceId: string): Promise<HelpdeskDoc | null> {
    return this.docs.collection<HelpdeskDoc>(HELPDESKS).findOne({ _id: instanceId });
  }

  /** The configuration a callback path (by its hash) belongs to. */
  byCallbackHash(hash: string): Promise<HelpdeskDoc | null> {
    return this.docs.collection<HelpdeskDoc>(HELPDESKS).findOne({ callback_path_hash: hash });
  }
}
