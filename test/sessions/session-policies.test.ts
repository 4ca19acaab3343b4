import { expect } from 'chai';
import pino from 'pino';
import type { NetworkMessage, SessionEvent } from '../../src/domain/session/events.js';
import { AutoRead } from '../../src/sessions/policies/auto-read.js';
import { CallRejection } from '../../src/sessions/policies/call-rejection.js';
import type { LiveSession, PolicySettings } from '../../src/sessions/policies/live-session.js';
import type { NetworkConnection } from '../../src/sessions/port.js';

const logger = pino({ level: 'silent' });
const clock = { now: () => new Date('2026-01-02T03:04:05Z') };
const settings = (auto_read_messages: boolean, reject_calls: boolean): PolicySettings => ({ byId: async () => ({ auto_read_messages, reject_calls }) });

/** A session whose socket the test can end; what the policy did on it and recorded. */
function session(open = true) {
  const reads: { chat: string; ids: string[]; sender?: string }[] = [];
  const rejected: string[] = [];
  const recorded: SessionEvent[] = [];
  let live = true;
  const connection = {
    markRead: async (chat: string, ids: string[], sender?: string) => void reads.push({ chat, ids, ...(sender === undefined ? {} : { sender }) }),
    rejectCall: async (id: string) => void rejected.push(id),
  } as Pick<NetworkConnection, 'markRead' | 'rejectCall'>;
  const handle: LiveSession = {
    instanceId: 'i1',
    connection: () => (live ? (connection as NetworkConnection) : null),
    isOpen: () => live && open,
    selfJid: () => '5511000000001@s.whatsapp.net',
    record: async (events) => void recorded.push(...events),
  };
  return { handle, reads, rejected, recorded, end: () => void (live = false) };
}

function received(id: string, chat: string, extra: Partial<NetworkMessage> = {}): SessionEvent {
  const message: NetworkMessage = { id, chat, sender: chat, from_me: false, is_group: false, timestamp_s: 1, type: 'text', text: 'hi', ...extra };
  return { type: 'MessageReceived', data: { upsert: 'notify', message } };
}

describe('session policies', () => {
  it('auto-read marks incoming messages read once per chat and group sender, and records ReadSelf', async () => {
    const s = session();
    await new AutoRead(settings(true, false), clock, logger).react(s.handle, [
      received('m1', 'a@s.whatsapp.net'),
      received('m2', 'a@s.whatsapp.net'),
      received('m3', 'g@g.us', { is_group: true, sender: 'b@s.whatsapp.net' }),
      received('m4', 'a@s.whatsapp.net', { from_me: true }),
    ]);
    expect(s.reads).to.deep.equal([
      { chat: 'a@s.whatsapp.net', ids: ['m1', 'm2'] },
      { chat: 'g@g.us', ids: ['m3'], sender: 'b@s.whatsapp.net' },
    ]);
    expect(s.recorded.map((e) => e.type === 'ReceiptReceived' && e.data)).to.deep.equal([
      { message_ids: ['m1', 'm2'], chat: 'a@s.whatsapp.net', sender: '5511000000001@s.whatsapp.net', state: 'ReadSelf', timestamp_s: 1767323045 },
      { message_ids: ['m3'], chat: 'g@g.us', sender: '5511000000001@s.whatsapp.net', state: 'ReadSelf', timestamp_s: 1767323045 },
    ]);
  });

  it('auto-read does nothing when the setting is off, or through a socket that is no longer open', async () => {
    const off = session();
    await new AutoRead(settings(false, false), clock, logger).react(off.handle, [received('m1', 'a@s.whatsapp.net')]);
    const closed = session(false);
    await new AutoRead(settings(true, false), clock, logger).react(closed.handle, [received('m1', 'a@s.whatsapp.net')]);
    expect([off.reads, off.recorded, closed.reads, closed.recorded]).to.deep.equal([[], [], [], []]);
  });

  it('call rejection rejects and records when the setting is on, and not through a replaced socket', async () => {
    const on = session();
    await new CallRejection(settings(false, true), logger).react(on.handle, { id: 'c1', from: 'a@s.whatsapp.net' });
    expect(on.rejected).to.deep.equal(['c1']);
    expect(on.recorded).to.deep.equal([{ type: 'CallRejected', data: { call_id: 'c1', from: 'a@s.whatsapp.net' } }]);
    const replaced = session();
    replaced.end();
    await new CallRejection(settings(false, true), logger).react(replaced.handle, { id: 'c2', from: 'a@s.whatsapp.net' });
    const off = session();
    await new CallRejection(settings(false, false), logger).react(off.handle, { id: 'c3', from: 'a@s.whatsapp.net' });
    expect([replaced.rejected, replaced.recorded, off.rejected, off.recorded]).to.deep.equal([[], [], [], []]);
  });

  it('a policy whose settings cannot be read logs it and throws nothing', async () => {
    const s = session();
    const broken: PolicySettings = { byId: () => Promise.reject(new Error('read model down')) };
    await new CallRejection(broken, logger).react(s.handle, { id: 'c1', from: 'a@s.whatsapp.net' });
    await new AutoRead(broken, clock, logger).react(s.handle, [received('m1', 'a@s.whatsapp.net')]);
    expect([s.rejected, s.reads]).to.deep.equal([[], []]);
  });
});
