import { expect } from 'chai';
import type { SessionEvent } from '../../src/domain/session/events.js';
import type { AuthStateStore } from '../../src/sessions/port.js';
import { SandboxConnection, type ConnectionActions } from '../../src/sessions/sandbox/connection.js';

const auth: AuthStateStore = { get: async () => ({}), set: async () => undefined, clear: async () => undefined };
const presence = (n: number): SessionEvent => ({ type: 'PresenceUpdated', data: { jid: `${n}@s.whatsapp.net`, state: 'available' } }) as unknown as SessionEvent;

describe('sandbox connection: delivering events to the manager', () => {
  /** Handlers whose onEvents stays pending until the test releases it. */
  function harness(latencyMs = 0) {
    const log: string[] = [];
    const releases: (() => void)[] = [];
    const conn = new SandboxConnection(
      'inst',
      'acc',
      auth,
      {
        onEvents: (events) => {
          log.push(`events ${events.map((e) => (e.data as { jid: string }).jid.split('@')[0]).join(',')}`);
          return new Promise<void>((resolve) => releases.push(resolve));
        },
        onQr: () => undefined,
        onClose: (close) => void log.push(`close ${close.reason}`),
      },
      {} as ConnectionActions,
      latencyMs,
    );
    const settle = async () => {
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    };
    return { conn, log, releases, settle };
  }

  it('hands what arrived while a batch was being stored to the manager in one call, in order', async () => {
    const { conn, log, releases, settle } = harness();
    const done: number[] = [];
    const first = conn.deliver([presence(1)]).then(() => done.push(1));
    await settle();
    expect(log).to.deep.equal(['events 1']);
    const second = conn.deliver([presence(2)]).then(() => done.push(2));
    const third = conn.deliver([presence(3), presence(4)]).then(() => done.push(3));
    await settle();
    expect(log, 'nothing more while the first is stored').to.deep.equal(['events 1']);

    releases[0]!();
    await first;
    await settle();
    expect(log).to.deep.equal(['events 1', 'events 2,3,4']);
    expect(done, 'the later ones wait for their own store').to.deep.equal([1]);
    releases[1]!();
    await Promise.all([second, third]);
    expect(done).to.deep.equal([1, 2, 3]);
  });

  it('gives events that arrive during a batch\'s network latency their own latency', async () => {
    const { conn, log, releases } = harness(40);
    const started = Date.now();
    const first = conn.deliver([presence(1)]);
    await new Promise((r) => setTimeout(r, 10));
    const second = conn.deliver([presence(2)]).then(() => Date.now() - started);
    await new Promise((r) => setTimeout(r, 60));
    expect(log).to.deep.equal(['events 1']);
    releases[0]!();
    await first;
    await new Promise((r) => setTimeout(r, 60));
    expect(log).to.deep.equal(['events 1', 'events 2']);
    releases[1]!();
    expect(await second).to.be.at.least(80);
  });

  it('never lets later events overtake a close queued before them', async () => {
    const { conn, log, releases, settle } = harness();
    void conn.deliver([presence(1)]);
    await settle();
    void conn.deliver([presence(2)]);
    void conn.close({ reason: 'connection_lost' });
    void conn.deliver([presence(3)]);
    releases[0]!();
    await settle();
    releases[1]?.();
    await settle();
    releases[2]?.();
    await settle();
    expect(log).to.deep.equal(['events 1', 'events 2', 'close connection_lost', 'events 3']);
  });
});
