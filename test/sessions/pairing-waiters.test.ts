import { expect } from 'chai';
import { DomainError } from '../../src/domain/errors.js';
import { PairingWaiters } from '../../src/sessions/pairing-waiters.js';

describe('pairing waiters', () => {
  it('answers the current QR at once, and the next one to those who asked before it', async () => {
    const waiters = new PairingWaiters();
    const early = waiters.qr(1000);
    waiters.offerQr('sandbox:A');
    expect(await early).to.equal('sandbox:A');
    expect(await waiters.qr(1000)).to.equal('sandbox:A');
    waiters.clearQr();
    const later = waiters.qr(1000);
    waiters.offerQr('sandbox:B');
    expect(await later).to.equal('sandbox:B');
  });

  it('tells a QR request upstream_failed when none comes in time, and forgets it', async () => {
    const waiters = new PairingWaiters();
    const err = await waiters.qr(10).then(() => null, (e: unknown) => e);
    expect(err).to.be.instanceOf(DomainError).and.to.have.property('type', 'upstream_failed');
    // A QR after the timeout resolves nobody and throws nothing; it is there for the next request.
    waiters.offerQr('sandbox:C');
    expect(await waiters.qr(10)).to.equal('sandbox:C');
  });

  it('rejects QR requests with the reason the session went down, and answers waiting restarts false', async () => {
    const waiters = new PairingWaiters();
    const qr = waiters.qr(1000).then(() => null, (e: unknown) => e);
    const open = waiters.open(false, 1000);
    const reason = new DomainError('conflict', 'closed while pairing');
    waiters.fail(reason);
    expect(await qr).to.equal(reason);
    expect(await open).to.equal(false);
  });

  it('answers a restart true once the session opens, at once when it is open, false without a wait', async () => {
    const waiters = new PairingWaiters();
    expect(await waiters.open(true, 0)).to.equal(true);
    expect(await waiters.open(false, 0)).to.equal(false);
    const open = waiters.open(false, 1000);
    waiters.settleOpen(true);
    expect(await open).to.equal(true);
    expect(await waiters.open(false, 10)).to.equal(false);
  });
});
