import type { SecretBox } from '../../infra/crypto/secret-box.js';
import type { DeliveryRepo } from '../deliveries/delivery-repo.js';
import { signingKey } from '../signing.js';

const CACHE_LIMIT = 10_000;

/**
 * Each instance's signing key, opened from its sealed secret when a delivery is signed. The
 * sealed value is read from the reactor's fold on every send, so a rotation applies to the next
 * attempt; the opened key is kept in memory only, per sealed value, and never logged.
 */
export class SigningKeys {
  private readonly opened = new Map<string, Buffer>();

  constructor(
    private readonly repo: DeliveryRepo,
    private readonly box: SecretBox,
  ) {}

  async forInstance(instanceId: string): Promise<Buffer | null> {
    const hook = await this.repo.hook(instanceId);
    if (!hook?.secret_sealed) return null;
    const cacheKey = `${instanceId}\0${hook.secret_sealed}`;
    let key = this.opened.get(cacheKey);
    if (!key) {
      key = signingKey(this.box.open(hook.secret_sealed, `webhook-secret:${instanceId}`).toString('utf8'));
      if (this.opened.size >= CACHE_LIMIT) this.opened.clear();
      this.opened.set(cacheKey, key);
    }
    return key;
  }
}
