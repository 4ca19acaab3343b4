import type { Logger } from 'pino';
import type { LiveSession, PolicySettings } from './live-session.js';

/** The call rejection policy: an instance that rejects calls refuses each one and records it. */
export class CallRejection {
  constructor(
    private readonly settings: PolicySettings,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  /** Never throws: a call that could not be rejected just rings on, and is logged. */
  async react(session: LiveSession, call: { id: string; from: string }): Promise<void> {
    try {
      const instance = await this.settings.byId(session.instanceId);
      const connection = session.connection();
      if (!instance?.reject_calls || !connection) return;
      await connection.rejectCall(call.id, call.from);
      await session.record([{ type: 'CallRejected', data: { call_id: call.id, from: call.from } }]);
    } catch (err) {
      this.logger.warn({ err, instanceId: session.instanceId }, 'call rejection failed');
    }
  }
}
