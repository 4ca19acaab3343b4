import type { DocumentStore } from '../../infra/docstore/port.js';
import { SESSION_STATUS, type SessionStatusDoc } from './sessions-projection.js';

export class SessionQueries {
  constructor(private readonly docs: DocumentStore) {}

  status(instanceId: string): Promise<SessionStatusDoc | null> {
    return this.docs.collection<SessionStatusDoc>(SESSION_STATUS).findOne({ _id: instanceId });
  }

  /** Instances whose credentials exist: the ones to reconnect at boot, with what is known of them. */
  paired(): Promise<SessionStatusDoc[]> {
    return this.docs.collection<SessionStatusDoc>(SESSION_STATUS).find({ paired: true });
  }
}
