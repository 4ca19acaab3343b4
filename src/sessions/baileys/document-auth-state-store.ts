import type { SecretBox } from '../../infra/crypto/secret-box.js';
import type { Document, DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { AuthStateStore } from '../port.js';

export const SESSION_AUTH_COLLECTION = 'session_auth';

interface AuthDoc extends Document {
  instance_id: string;
  type: string;
  key_id: string;
  /** The value as JSON, sealed with the server key (SecretBox, AES-256-GCM). */
  sealed: string;
}

/**
 * An instance's network credentials in the document store: one document per (instance, type,
 * id), each value sealed with the server key and bound to its place by the AAD, so a sealed value
 * copied onto another instance's or another key's document does not open. Shared by both drivers
 * (Baileys keeps creds and signal keys here, the sandbox its link).
 */
export class DocumentAuthStateStore implements AuthStateStore {
  constructor(
    private readonly docs: DocumentStore,
    private readonly box: SecretBox,
    private readonly instanceId: string,
  ) {
    if (!instanceId || instanceId.includes('/')) throw new Error('instance id must be non-empty and contain no "/"');
  }

  /** For the composition root: lets `clear` find an instance's documents without a scan. */
  static async ensureIndexes(docs: DocumentStore): Promise<void> {
    await docs.collection(SESSION_AUTH_COLLECTION).createIndex({ name: 'by_instance', keys: { instance_id: 1 } });
  }

  async get(type: string, ids: string[]): Promise<Record<string, unknown>> {
    checkType(type);
    const out: Record<string, unknown> = {};
    if (ids.length === 0) return out;
    const found = await this.collection().find({ _id: { $in: ids.map((id) => this.docId(type, id)) } });
    for (const doc of found) {
      out[doc.key_id] = JSON.parse(this.box.open(doc.sealed, this.aad(type, doc.key_id)).toString('utf8'));
    }
    return out;
  }

  async set(data: Record<string, Record<string, unknown | null>>): Promise<void> {
    const ops: WriteOp[] = [];
    for (const [type, values] of Object.entries(data)) {
      checkType(type);
      for (const [id, value] of Object.entries(values)) {
        const _id = this.docId(type, id);
        if (value === null || value === undefined) {
          ops.push({ collection: SESSION_AUTH_COLLECTION, op: 'deleteOne', filter: { _id } });
          continue;
        }
        const doc: AuthDoc = {
          _id,
          instance_id: this.instanceId,
          type,
          key_id: id,
          sealed: this.box.seal(JSON.stringify(value), this.aad(type, id)),
        };
        ops.push({ collection: SESSION_AUTH_COLLECTION, op: 'replaceOne', filter: { _id }, doc, upsert: true });
      }
    }
    // Credentials must survive a crash: losing a ratchet step desynchronises the session.
    if (ops.length) await this.docs.batch(ops, { durable: true });
  }

  async clear(): Promise<void> {
    await this.collection().deleteMany({ instance_id: this.instanceId }, { durable: true });
  }

  private collection() {
    return this.docs.collection<AuthDoc>(SESSION_AUTH_COLLECTION);
  }

  /** Instance ids and types hold no "/", so the id (which may, e.g. base64) is unambiguous. */
  private docId(type: string, id: string): string {
    return `${this.instanceId}/${type}/${id}`;
  }

  private aad(type: string, id: string): string {
    return `${SESSION_AUTH_COLLECTION}\u0000${this.instanceId}\u0000${type}\u0000${id}`;
  }
}

function checkType(type: string): void {
  if (!type || type.includes('/')) throw new Error(`invalid auth state type ${JSON.stringify(type)}`);
}
