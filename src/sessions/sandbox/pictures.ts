import type { Clock } from '../../infra/clock.js';
import type { IdGenerator } from '../../infra/ids.js';
import { DURABLE, type SandboxState } from './state.js';

/** `<id>.jpg`, the id being the picture's random name. */
const FILE = /^([A-Za-z0-9]{20,40})\.jpg$/;

/**
 * Profile and group pictures on the sandbox: kept whole (they are small JPEGs the gateway already
 * sized) and served publicly under a random name, as the network's picture host serves them.
 */
export class Pictures {
  constructor(
    private readonly state: SandboxState,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    private readonly publicUrl: string,
  ) {}

  async store(accountId: string, jpeg: Buffer): Promise<string> {
    const id = this.ids.alphanumeric(24);
    await this.state.pictures.insertOne({ _id: id, account_id: accountId, data: jpeg.toString('base64'), created_at: this.clock.now().toISOString() }, DURABLE);
    return id;
  }

  url(id: string): string {
    return `${this.publicUrl.replace(/\/$/, '')}/sandbox/pictures/${id}.jpg`;
  }

  async file(name: string): Promise<Buffer | null> {
    const id = FILE.exec(name)?.[1];
    if (!id) return null;
    const doc = await this.state.pictures.findOne({ _id: id });
    return doc ? Buffer.from(doc.data, 'base64') : null;
  }
}
