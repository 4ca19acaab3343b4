import type { DocumentStore } from '../../infra/docstore/port.js';
import { ACCOUNTS, type AccountDoc } from './accounts-projection.js';

export class AccountQueries {
  constructor(private readonly docs: DocumentStore) {}

  byId(accountId: string): Promise<AccountDoc | null> {
    return this.docs.collection<AccountDoc>(ACCOUNTS).findOne({ _id: accountId });
  }

  byEmail(email: string): Promise<AccountDoc | null> {
    return this.docs.collection<AccountDoc>(ACCOUNTS).findOne({ email });
  }

  byClientToken(clientToken: string): Promise<AccountDoc | null> {
    return this.docs.collection<AccountDoc>(ACCOUNTS).findOne({ client_token: clientToken });
  }
}
