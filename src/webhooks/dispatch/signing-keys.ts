import { BoundedMap } from '../../infra/bounded-map.js';
import type { SecretBox } from '../../infra/crypto/secret-box.js';
import type { DeliveryRepo } from '../deliveries/delivery-repo.js';
import { signingKey } from '../signing.js';

const CACHE_LIMIT = 10_000;
/** A safety net only: the reactor reports every change of the settings it commits. */
const MAX_AGE_MS = 5_000;

interface Held {
  key: Buffer | null;
  at: number;
}

/**
 * Each instance's signing key, opened from the sealed secret in the reactor's fold and kept in
 * memory only (never logged) until the reactor reports a commit that changed the instance's
 * settings (`forget`), so a rotation applies to every attempt after it is committed. Reading the
 * fold on every attempt cost a document decode and a secret unseal per delivery.
 */
export class SigningKeys {
  private readonly held = new BoundedMap<string, Held>(CACHE_LIMIT);
  /** Bumped by every forget: a read that started before one must not store what it read. */
  private generation = 0;

  constructor(
    private readonly repo: DeliveryRepo,
    private readonly box: SecretBox,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async forInstance(instanceId: string): Promise<Buffer | null> {
    const held = this.held.get(instanceId);
    if (held && this.now() - held.at < MAX_AGE_MS) return held.key;
    const generation = this.generation;
    const at = this.now();
    const hook = await this.repo.hook(instanceId);
    const key = hook?.secret_sealed ? signingKey(this.box.open(hook.secret_sealed, `webhook-secret:${instanceId}`).toString('utf8')) : null;
    if (generation === this.generation) this.held.set(instanceId, { key, at });
    return key;
  }

  /** These instances' settings changed in a committed batch: their keys are read again. */
  forget(instanceIds: readonly string[]): void {
    if (instanceIds.length === 0) return;
    this.generation++;
    for (const id of instanceIds) this.held.delete(id);
  }
}
