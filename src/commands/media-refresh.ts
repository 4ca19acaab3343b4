import type { NetworkMessage } from '../domain/session/events.js';
import { networkCall } from '../sessions/network-call.js';
import type { SessionManager } from '../sessions/session-manager.js';

type Media = NonNullable<NetworkMessage['media']>;
export type FindStoredMessage = (instanceId: string, match: (message: NetworkMessage) => boolean) => Promise<NetworkMessage | undefined>;

/**
 * A media download the host answered 404/410 is asked for again: the message is found in the
 * instance's stored events by its media key, and the sender's phone uploads the file again
 * (the driver's refreshMedia). Nothing when the message is not known or the driver cannot.
 */
export class MediaRefresh {
  constructor(
    private readonly manager: SessionManager,
    private readonly find: FindStoredMessage,
  ) {}

  async refresh(instanceId: string, mediaKey: string): Promise<Media | undefined> {
    const message = await this.find(instanceId, (m) => m.media?.media_key === mediaKey);
    if (!message) return undefined;
    const connection = this.manager.connection(instanceId);
    if (!connection.refreshMedia) return undefined;
    return networkCall(() => connection.refreshMedia!(message));
  }
}
