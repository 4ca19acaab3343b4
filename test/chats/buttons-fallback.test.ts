import { expect } from 'chai';
import { messagingRoutes } from '../../src/api/routes/messaging.js';
import type { RouteInput } from '../../src/api/route.js';
import { MessagingCommands } from '../../src/commands/messaging.js';
import type { NetworkMessage, SessionEvent } from '../../src/domain/session/events.js';
import type { InstanceDoc } from '../../src/projections/instances/instances-projection.js';
import type { ButtonsContent, NetworkConnection } from '../../src/sessions/port.js';
import type { SessionManager } from '../../src/sessions/session-manager.js';
import type { SessionRecorder } from '../../src/sessions/session-recorder.js';

describe('send/buttons where the network will not render buttons', () => {
  it('answers and records what was sent instead, never silently', async () => {
    const recorded: SessionEvent[] = [];
    const sent: NetworkMessage = { id: 'M1', chat: '5511900000001@s.whatsapp.net', sender: 'me', from_me: true, is_group: false, timestamp_s: 1, type: 'text', text: '1. Yes' };
    const connection = {
      sendButtons: async (_to: string, _content: ButtonsContent) => ({ message: sent, fallback: 'text: sent as a numbered list' }),
    } as unknown as NetworkConnection;
    const manager = { connection: () => connection } as unknown as SessionManager;
    const recorder = { record: async (_i: string, _a: string, events: SessionEvent[]) => (recorded.push(...events), 1n) } as unknown as SessionRecorder;
    const route = messagingRoutes(new MessagingCommands(manager, recorder, { now: () => new Date() })).find((r) => r.path.endsWith('/send/buttons'));
    const answer = await route!.handler({
      instance: { _id: 'I', account_id: 'A' } as InstanceDoc,
      body: { phone: '5511900000001', buttons: [{ id: 'y', text: 'Yes' }] },
      principal: { accountId: 'A', via: 'jwt' },
      requestId: 'r1',
    } as unknown as RouteInput<never, never, never>);
    expect(answer.body).to.deep.equal({ code: 200, success: true, data: { message_id: 'M1', fallback: 'text: sent as a numbered list' } });
    expect(answer.headers).to.deep.equal({ 'x-fallback': 'text: sent as a numbered list' });
    expect(recorded).to.deep.equal([{ type: 'MessageSent', data: { message: sent, origin: 'api', fallback: 'text: sent as a numbered list' } }]);
  });
});
