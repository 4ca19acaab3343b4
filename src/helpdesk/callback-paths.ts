import { createHmac } from 'node:crypto';
import { tokenHash } from '../infra/crypto/secrets.js';

/**
 * The unguessable path of an instance's helpdesk callback (`/helpdesk/webhook/{path}`). It is
 * derived, not stored: an HMAC under a key of its own (itself derived from the server key) over
 * the instance and the configuration's generation, so only this server can name it and a
 * configuration made after a removal gets a new one. Stores keep only its hash.
 */
export class CallbackPaths {
  private readonly key: Buffer;

  constructor(serverKey: Buffer) {
    this.key = createHmac('sha256', serverKey).update('helpdesk-callback-paths').digest();
  }

  path(instanceId: string, generation: number): string {
    return createHmac('sha256', this.key).update(`${instanceId}\u0000${generation}`).digest('base64url');
  }

  static hash(path: string): string {
    return tokenHash(path);
  }
}
