import { expect } from 'chai';
import { messagingRoutes } from '../../src/api/routes/messaging.js';
import type { RouteInput } from '../../src/api/route.js';
import { MessagingCommands } from '../../src/commands/messaging.js';
import { SendCommands } from '../../src/commands/sending/send-commands.js';
import { SendGate } from '../../src/commands/sending/send-gate.js';
import type { NetworkMessage, SessionEvent } from '../../src/domain/session/events.js';
import type { OutgoingContent } from '../../src/domain/session/outgoing.js';
import type { InstanceDoc } from '../../src/projections/instances/instances-projection.js';
import type { NetworkConnection } from '../../src/sessions/port.js';
import type { SessionManager } from '../../src/sessions/session-manager.js';
import type { SessionRecorder } from '../../src/sessions/session-recorder.js';

describe('send/buttons where the network will not render buttons', () => {
  it('answers and records what was sent instead, never silently', async () => {
    const recorded: SessionEvent[] = [];
    const asked: OutgoingContent[] = [];
    const sent: NetworkMessage = { id: 'M1', chat: '5511900000001@s.whatsapp.net', sender: 'me', from_me: true, is_group: false, timestamp_s: 1, type: 'text', text: '1. Yes' };
    const connection = {
      checkNumber: async () => ({ exists: true, jid: '5511900000001@s.whatsapp.net' }),
      sendMessage: async (_to: string, content: OutgoingContent) => (asked.push(content), { message: sent, fallback: 'text: sent as a numbered list' }),
    } as unknown as NetworkConnection;
    const manager = { connection: () => connection, selfJid: async () => null } as unknown as SessionManager;
    const recorder = { record: async (_i: string, _a: string, events: SessionEvent[]) => (recorded.push(...events), 1n) } as unknown as SessionRecorder;
    const clock = { now: () => new Date() };
    const sending = new SendCommands({
      manager,
      recorder,
      clock,
      ids: { alphanumeric: () => 'X' } as never,
      docs: {} as never,
      media: {} as never,
      groups: { mentions: async () => undefined } as never,
      gate: new SendGate(),
      findMessage: async () => undefined,
    });
    const route = messagingRoutes(new MessagingCommands(manager, recorder, clock), sending).find((r) => r.path.endsWith('/send/buttons'));
    const answer = await route!.handler({
      instance: { _id: 'I', account_id: 'A' } as InstanceDoc,
      body: { phone: '5511900000001', buttons: [{ id: 'y', text: 'Yes' }] },
      principal: { accountId: 'A', via: 'jwt' },
      requestId: 'r1',
    } as unknown as RouteInput<never, never, never>);
    expect(asked).to.deep.equal([{ kind: 'buttons', buttons: [{ id: 'y', text: 'Yes' }] }]);
    expect(answer.body).to.deep.equal({
      code: 200,
      success: true,
      data: { message_id: 'M1', jid: '5511900000001@s.whatsapp.net', status: 'sent', timestamp: new Date(1000).toISOString(), fallback: 'text: sent as a numbered list' },
    });
    expect(answer.headers).to.deep.equal({ 'x-fallback': 'text: sent as a numbered list' });
    expect(recorded).to.deep.equal([{ type: 'MessageSent', data: { message: sent, origin: 'api', fallback: 'text: sent as a numbered list' } }]);
  });
});
