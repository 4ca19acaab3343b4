import { BoundedMap } from '../../infra/bounded-map.js';
import type { AccountQueries } from '../../projections/accounts/account-queries.js';
import { secretGeneration } from '../../projections/accounts/accounts-projection.js';
import type { Projection } from '../../projections/projection.js';

/** Accounts whose generation is held in memory; one past it is read again from the read model. */
const REMEMBERED_ACCOUNTS = 100_000;

/**
 * Which client-secret generation each account is at, in memory, so that checking a JWT's
 * generation costs no store read per request. A JWT issued under an older generation is dead:
 * rotating the client secret ends every session opened before it.
 *
 * Fed two ways: the accounts read model when an account is first seen, and every rotation as
 * the accounts projection commits it (`watching`), in the same turn that releases the rotate
 * command's wait, so the old tokens are dead by the time the new secret is answered. Both keep
 * the highest generation seen, so a late read never brings an old one back.
 */
export class SecretGenerations {
  private readonly generations = new BoundedMap<string, number>(REMEMBERED_ACCOUNTS);

  constructor(private readonly accounts: AccountQueries) {}

  /** The account's generation, undefined when it is not in memory (then `load`). */
  current(accountId: string): number | undefined {
    return this.generations.get(accountId);
  }

  /** The account's generation from the read model; null for an account that does not exist. */
  async load(accountId: string): Promise<number | null> {
    const account = await this.accounts.byId(accountId);
    if (!account) return null;
    this.observe(accountId, account.secret_generation ?? 0);
    return this.current(accountId) as number;
  }

  observe(accountId: string, generation: number): void {
    const known = this.generations.get(accountId);
    if (known === undefined || generation > known) this.generations.set(accountId, generation);
  }

  /** The accounts projection, telling this view of every rotation it commits. */
  watching(accounts: Projection): Projection {
    let pending: [string, number][] = [];
    return {
      ...accounts,
      apply: (event) => {
        const generation = event.type === 'ClientSecretRotated' ? secretGeneration(event.streamId, event.revision) : null;
        if (generation !== null) pending.push(generation);
        return accounts.apply(event);
      },
      committed: (position) => {
        for (const [accountId, generation] of pending) this.observe(accountId, generation);
        pending = [];
        accounts.committed?.(position);
      },
    };
  }
}
