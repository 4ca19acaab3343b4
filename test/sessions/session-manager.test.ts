import { expect } from 'chai';
import pino from 'pino';
import type { DisconnectReason, SessionEvent } from '../../src/domain/session/events.js';
import { DomainError } from '../../src/domain/errors.js';
import type { InstanceQueries } from '../../src/projections/instances/instance-queries.js';
import type { SessionQueries } from '../../src/projections/sessions/session-queries.js';
import type { SessionStatusDoc } from '../../src/projections/sessions/sessions-projection.js';
import type { AuthStateStore, ConnectionHandlers, ConnectOptions, MessagingNetwork, NetworkConnection } from '../../src/sessions/port.js';
import { SessionManager, type SessionHandover } from '../../src/sessions/session-manager.js';
import type { SessionRecorder } from '../../src/sessions/session-recorder.js';
import { waitFor } from '../support/sandbox.js';

/** A socket the test drives by hand. */
class FakeSocket {
  ended = false;
  rejected: string[] = [];
  constructor(readonly handlers: ConnectionHandlers) {}
  open(jid = '5511999990001@s.whatsapp.net') {
    return this.handlers.onEvents([{ type: 'SessionConnected', data: { jid, phone: jid.split('@')[0]!, business: false } }]);
  }
  close(reason: DisconnectReason, statusCode?: number) {
    this.handlers.onClose(statusCode === undefined ? { reason } : { reason, statusCode });
  }
  connection(): NetworkConnection {
    const refuse = () => Promise.reject(new Error('not in this fake'));
    return {
      requestPairingCode: refuse,
      checkNumber: refuse,
      profile: refuse,
      sendText: refuse,
      sendButtons: refuse,
      sendMedia: refuse,
      uploadMedia: refuse,
      sendMessage: refuse,
      change: refuse,
      sendChatPresence: refuse,
      markRead: async () => undefined,
      react: refuse,
      rejectCall: async (id) => void this.rejected.push(id),
      modifyChat: refuse,
      groupInviteCode: refuse,
      account: new Proxy({} as NetworkConnection['account'], { get: () => refuse }),
      logout: async () => undefined,
      end: async () => void (this.ended = true),
    };
  }
}

class FakeNetwork implements MessagingNetwork {
  readonly kind = 'sandbox' as const;
  sockets: FakeSocket[] = [];
  connects: { instanceId: string; at: number }[] = [];
  async connect(options: ConnectOptions): Promise<NetworkConnection> {
    const socket = new FakeSocket(options.handlers);
    this.sockets.push(socket);
    this.connects.push({ instanceId: options.instanceId, at: Date.now() });
    return socket.connection();
  }
  last(): FakeSocket {
    return this.sockets.at(-1)!;
  }
}

function setup(
  options: { paired?: { instanceId: string; connected: boolean }[]; canceled?: string[]; rejectCalls?: boolean; handover?: SessionHandover; backoff?: { baseMs: number; maxMs: number } } = {},
) {
  const network = new FakeNetwork();
  const recorded: SessionEvent[] = [];
  const cleared: string[] = [];
  const recorder = {
    async record(_instanceId: string, _accountId: string, events: SessionEvent[]) {
      recorded.push(...events);
      return events.length ? BigInt(recorded.length) : null;
    },
  } as unknown as SessionRecorder;
  const instances = {
    async byId(id: string) {
      return { _id: id, account_id: 'acc', billing_status: options.canceled?.includes(id) ? 'CANCELED' : 'TRIALING', reject_calls: options.rejectCalls ?? false, auto_read_messages: false };
    },
  } as unknown as InstanceQueries;
  const statuses = new Map<string, SessionStatusDoc>((options.paired ?? []).map((p) => [p.instanceId, { _id: p.instanceId, paired: true, connected: p.connected }]));
  const sessions = {
    async paired() {
      return [...statuses.values()];
    },
    async status(id: string) {
      return statuses.get(id) ?? null;
    },
  } as unknown as SessionQueries;
  const authState = (instanceId: string): AuthStateStore => ({
    get: async () => ({}),
    set: async () => undefined,
    clear: async () => void cleared.push(instanceId),
  });
  const manager = new SessionManager({
    network,
    recorder,
    authState,
    instances,
    sessions,
    logger: pino({ level: 'silent' }),
    backoff: options.backoff ?? { baseMs: 40, maxMs: 1000 },
    random: () => 0.5,
    qrTimeoutMs: 2000,
    openTimeoutMs: 1000,
    ...(options.handover ? { handover: options.handover } : {}),
  });
  return { manager, network, recorded, cleared, statuses };
}

const types = (events: SessionEvent[]) => events.map((e) => e.type);
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('session manager', () => {
  it('reconnects paired instances at boot, not canceled ones', async () => {
    const { manager, network } = setup({ paired: [{ instanceId: 'A', connected: true }, { instanceId: 'B', connected: false }, { instanceId: 'C', connected: true }], canceled: ['C'] });
    await manager.start();
    await tick();
    expect(network.connects.map((c) => c.instanceId)).to.deep.equal(['A', 'B']);
    await manager.shutdown();
  });

  it('reconnects at once when the network asks for a restart', async () => {
    const { manager, network, recorded } = setup({ paired: [{ instanceId: 'A', connected: false }] });
    await manager.start();
    await tick();
    await network.last().open();
    network.last().close('restart_required', 515);
    // No delay is asked for; the bound is only there to fail, not to measure (a loaded CI box).
    await waitFor(async () => network.connects.length === 2, 'reconnect', 2000);
    expect(types(recorded)).to.deep.equal(['SessionConnected', 'SessionDisconnected']);
    await manager.shutdown();
  });

  it('backs off exponentially (with jitter) on a lost connection, and starts over once connected', async () => {
    // Delays large enough that a timer a few hundred ms late (a loaded CI box) cannot make
    // attempt 1 look like attempt 4: 100, 200, 400, 800 ms.
    const { manager, network, recorded } = setup({ paired: [{ instanceId: 'A', connected: false }], backoff: { baseMs: 200, maxMs: 5000 } });
    await manager.start();
    await tick();
    await network.last().open();
    const gaps: number[] = [];
    for (let i = 0; i < 3; i++) {
      const closedAt = Date.now();
      network.last().close('connection_lost', 428);
      const before = network.connects.length;
      await waitFor(async () => network.connects.length > before, 'reconnect', 5000);
      gaps.push(network.connects.at(-1)!.at - closedAt);
    }
    // random 0.5 of a ceiling of 200, 400, 800 ms.
    expect(gaps[0]).to.be.within(98, 3000);
    expect(gaps[1]).to.be.within(198, 3000);
    expect(gaps[2]).to.be.within(398, 3000);
    expect(gaps[2]!).to.be.greaterThan(gaps[0]!);
    // Recorded once, when it went down; the failed attempts in between are not news.
    expect(types(recorded)).to.deep.equal(['SessionConnected', 'SessionDisconnected']);
    expect(recorded[1]).to.deep.equal({ type: 'SessionDisconnected', data: { reason: 'connection_lost', status_code: 428 } });
    await network.last().open();
    const closedAt = Date.now();
    network.last().close('timed_out');
    await waitFor(async () => network.connects.length === 5, 'reconnect', 5000);
    // Attempt 1 again (100 ms), not attempt 4 (800 ms).
    expect(network.connects.at(-1)!.at - closedAt).to.be.below(600);
    await manager.shutdown();
  });

  it('stops and records when replaced, keeping the credentials; restart takes the session back', async () => {
    const { manager, network, recorded, cleared } = setup({ paired: [{ instanceId: 'A', connected: true }] });
    await manager.start();
    await tick();
    await network.last().open();
    network.last().close('replaced', 440);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(network.connects).to.have.length(1);
    expect(cleared).to.deep.equal([]);
    expect(recorded.at(-1)).to.deep.include({ type: 'SessionDisconnected' });
    const stop = recorded.at(-1)!.data as { reason: string; status_code: number; message: string };
    expect(stop).to.include({ reason: 'replaced', status_code: 440 });
    // A clear stop: the reason says what happened and what to do about it.
    expect(stop.message).to.match(/another client.*440.*restart/);
    expect(manager.isConnected('A')).to.equal(false);
    // Still paired: a QR would be pointless.
    const qr = await manager.qr('A', 'acc').catch((e: unknown) => e);
    expect((qr as DomainError).type).to.equal('conflict');
    const restarted = manager.restart('A', 'acc');
    await waitFor(async () => network.connects.length === 2, 'reconnect', 500);
    await network.last().open();
    expect(await restarted).to.equal(true);
    await manager.shutdown();
  });

  it('a replaced session whose lease moved to another node is let go quietly (the hand-over seam)', async () => {
    const asked: string[] = [];
    const { manager, network, recorded, cleared } = setup({
      paired: [{ instanceId: 'A', connected: true }, { instanceId: 'B', connected: true }],
      handover: { movedElsewhere: async (id) => (asked.push(id), id === 'A') },
    });
    await manager.start();
    await tick();
    await network.sockets[0]!.open();
    await network.sockets[1]!.open();
    network.sockets[0]!.close('replaced', 440);
    network.sockets[1]!.close('replaced', 440);
    await waitFor(async () => recorded.length === 3, 'the stop of B', 500);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(asked.sort()).to.deep.equal(['A', 'B']);
    // A moved: nothing recorded for it here, no reconnect, credentials kept for its new owner.
    expect(recorded.slice(2)).to.have.length(1);
    expect(recorded[2]!.data).to.include({ reason: 'replaced' });
    expect(network.connects).to.have.length(2);
    expect(cleared).to.deep.equal([]);
    expect(manager.isConnected('A')).to.equal(false);
    await manager.shutdown();
  });

  it('stops on a refused client version (405) instead of looping, with the message the driver gave', async () => {
    const { manager, network, recorded } = setup({ paired: [{ instanceId: 'A', connected: true }] });
    await manager.start();
    await tick();
    await network.last().open();
    const message = 'WhatsApp refused client version 2.3000.1 (405): set WHATSAPP_VERSION to the current WhatsApp Web version and restart the session';
    network.last().handlers.onClose({ reason: 'client_outdated', statusCode: 405, message });
    await waitFor(async () => recorded.length === 2, 'recorded', 500);
    expect(recorded[1]).to.deep.equal({ type: 'SessionDisconnected', data: { reason: 'client_outdated', status_code: 405, message } });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(network.connects).to.have.length(1);
    await manager.shutdown();
  });

  it('wipes the credentials and records the logout when the phone logs it out', async () => {
    const { manager, network, recorded, cleared } = setup({ paired: [{ instanceId: 'A', connected: true }] });
    await manager.start();
    await tick();
    await network.last().open();
    network.last().close('logged_out', 401);
    await waitFor(async () => recorded.length === 2, 'recorded', 500);
    expect(cleared).to.deep.equal(['A']);
    // One event: a LoggedOut is a disconnection too (one Disconnected webhook, not two).
    expect(recorded.slice(1)).to.deep.equal([{ type: 'SessionLoggedOut', data: { by: 'phone' } }]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(network.connects).to.have.length(1);
    // Unpaired now, before any read model says so: pairing may start again.
    const qr = manager.qr('A', 'acc');
    await waitFor(async () => network.connects.length === 2, 'pairing socket', 500);
    network.last().handlers.onQr('QR-1');
    expect(await qr).to.equal('QR-1');
    await manager.shutdown();
  });

  it('records the loss of a session the read models show connected, when it fails to come back at boot', async () => {
    const { manager, network, recorded } = setup({ paired: [{ instanceId: 'A', connected: true }] });
    await manager.start();
    await tick();
    network.last().close('connection_lost');
    await waitFor(async () => recorded.length === 1, 'recorded', 500);
    expect(recorded).to.deep.equal([{ type: 'SessionDisconnected', data: { reason: 'connection_lost' } }]);
    await manager.shutdown();
  });

  it('ignores what a socket it ended still reports', async () => {
    const { manager, network, recorded } = setup({ paired: [{ instanceId: 'A', connected: false }] });
    await manager.start();
    await tick();
    const old = network.last();
    await old.open();
    const restarted = manager.restart('A', 'acc');
    await waitFor(async () => network.connects.length === 2, 'reconnect', 500);
    expect(old.ended).to.equal(true);
    await old.handlers.onEvents([{ type: 'PresenceUpdated', data: { jid: 'x@s.whatsapp.net', state: 'available' } }]);
    old.close('connection_lost');
    await network.last().open();
    expect(await restarted).to.equal(true);
    expect(types(recorded)).to.deep.equal(['SessionConnected', 'SessionConnected']);
    expect(manager.isConnected('A')).to.equal(true);
    await manager.shutdown();
  });

  it('fails a QR request at once when the socket closes before offering one', async () => {
    const { manager, network } = setup();
    const qr = manager.qr('N', 'acc').catch((e: unknown) => e);
    await waitFor(async () => network.connects.length === 1, 'pairing socket', 500);
    const started = Date.now();
    network.last().close('timed_out', 408);
    const error = (await qr) as DomainError;
    expect(error).to.be.instanceOf(DomainError);
    expect(error.type).to.equal('upstream_failed');
    expect(Date.now() - started).to.be.below(500);
    // An unpaired socket is not re-opened on its own.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(network.connects).to.have.length(1);
  });

  it('shares one pairing socket between concurrent QR requests', async () => {
    const { manager, network, recorded } = setup();
    const both = Promise.all([manager.qr('N', 'acc'), manager.qr('N', 'acc')]);
    await waitFor(async () => network.connects.length >= 1, 'pairing socket', 500);
    await tick();
    network.last().handlers.onQr('QR-X');
    expect(await both).to.deep.equal(['QR-X', 'QR-X']);
    expect(network.connects).to.have.length(1);
    expect(types(recorded)).to.deep.equal(['SessionPairingStarted']);
    await manager.shutdown();
  });

  it('keeps a live status folded from what the session reports, starting from what was known of it', async () => {
    const { manager, network, statuses } = setup({ paired: [{ instanceId: 'A', connected: true }] });
    statuses.set('A', { _id: 'A', paired: true, connected: true, phone: '5511999990001', about: 'known before', business_name: 'Shop' });
    await manager.start();
    await tick();
    expect(manager.liveStatus('A')).to.equal(null);
    // A reconnect reports the identity only: the profile learned at pairing stays.
    await network.last().open();
    const first = manager.liveStatus('A');
    expect(first).to.deep.include({ connected: true, jid: '5511999990001@s.whatsapp.net', about: 'known before', business_name: 'Shop' });
    expect(manager.liveStatus('A')).to.equal(first);
    await network.last().handlers.onEvents([{ type: 'ProfileUpdated', data: { about: 'new about' } }]);
    expect(manager.liveStatus('A')).to.deep.include({ about: 'new about', business_name: 'Shop' });
    network.last().close('connection_lost');
    expect(manager.liveStatus('A')).to.equal(null);
    await manager.shutdown();
  });

  it('rejects calls only when the instance says so', async () => {
    for (const rejectCalls of [true, false]) {
      const { manager, network, recorded } = setup({ paired: [{ instanceId: 'A', connected: false }], rejectCalls });
      await manager.start();
      await tick();
      await network.last().open();
      network.last().handlers.onCall?.({ id: 'CALL1', from: '5511999990002@s.whatsapp.net' });
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(network.last().rejected).to.deep.equal(rejectCalls ? ['CALL1'] : []);
      expect(types(recorded).includes('CallRejected')).to.equal(rejectCalls);
      await manager.shutdown();
    }
  });
});
