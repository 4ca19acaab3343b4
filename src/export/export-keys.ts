import { BoundedMap } from '../infra/bounded-map.js';
import type { SecretBox } from '../infra/crypto/secret-box.js';
import type { DocumentStore } from '../infra/docstore/port.js';
import { signingKey } from '../webhooks/signing.js';
import { EXPORT_SETTINGS, type ExportSettingsDoc } from './documents.js';

const CACHE_LIMIT = 10_000;
/** A safety net only: the reactor reports every change of the settings it commits. */
const MAX_AGE_MS = 5_000;

/**
 * Each instance's webhook signing key, opened from the secret the export reactor folded and kept in
 * memory only (as the webhook's SigningKeys), forgotten when a commit changes the instance's
 * settings: messages published after a rotation is committed are signed with the new secret.
 */
export class ExportKeys {
  private readonly held = new BoundedMap<string, { key: Buffer | null; at: number }>(CACHE_LIMIT);
  private generation = 0;

  constructor(
    private readonly docs: DocumentStore,
    private readonly box: SecretBox,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async forInstance(instanceId: string): Promise<Buffer | null> {
    const held = this.held.get(instanceId);
    if (held && this.now() - held.at < MAX_AGE_MS) return held.key;
    const generation = this.generation;
    const at = this.now();
    const settings = await this.docs.collection<ExportSettingsDoc>(EXPORT_SETTINGS).findOne({ _id: instanceId });
    const key = settings?.secret_sealed ? signingKey(this.box.open(settings.secret_sealed, `webhook-secret:${instanceId}`).toString('utf8')) : null;
    if (generation === this.generation) this.held.set(instanceId, { key, at });
    return key;
  }

  forget(instanceIds: readonly string[]): void {
    if (instanceIds.length === 0) return;
    this.generation++;
    for (const id of instanceIds) this.held.delete(id);
  }
}
