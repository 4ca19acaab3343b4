import { expect } from 'chai';
import { DISCONNECT_REASONS } from '../../src/domain/session/events.js';
import { decideReconnect } from '../../src/sessions/reconnect-policy.js';

describe('reconnect policy', () => {
  const settings = { baseMs: 1000, maxMs: 60_000 };

  it('reconnects at once when the network asks for a restart', () => {
    expect(decideReconnect('restart_required', 5, 0.9, settings)).to.deep.equal({ action: 'reconnect', delayMs: 0 });
  });

  it('wipes credentials when logged out, and stays down when replaced or refused', () => {
    expect(decideReconnect('logged_out', 1, 0.5, settings)).to.deep.equal({ action: 'wipe' });
    for (const reason of ['replaced', 'forbidden', 'multidevice_mismatch'] as const) {
      expect(decideReconnect(reason, 1, 0.5, settings), reason).to.deep.equal({ action: 'stop' });
    }
  });

  it('backs off exponentially with full jitter, capped', () => {
    for (const reason of ['connection_lost', 'connection_closed', 'timed_out', 'unavailable', 'unknown'] as const) {
      expect(decideReconnect(reason, 1, 0.999, settings)).to.deep.equal({ action: 'reconnect', delayMs: 999 });
      expect(decideReconnect(reason, 4, 0.5, settings)).to.deep.equal({ action: 'reconnect', delayMs: 4000 });
      expect(decideReconnect(reason, 30, 0.5, settings)).to.deep.equal({ action: 'reconnect', delayMs: 30_000 });
      expect(decideReconnect(reason, 3, 0, settings)).to.deep.equal({ action: 'reconnect', delayMs: 0 });
    }
  });

  it('has a decision for every reason', () => {
    for (const reason of DISCONNECT_REASONS) expect(decideReconnect(reason, 1, 0.5, settings).action).to.be.a('string');
  });
});
