import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../src/infra/crypto/secret-box.js';
import type { DeliveryRepo } from '../../src/webhooks/deliveries/delivery-repo.js';
import type { HookDoc } from '../../src/webhooks/deliveries/documents.js';
import { SigningKeys } from '../../src/webhooks/dispatch/signing-keys.js';
import { signingKey } from '../../src/webhooks/signing.js';

describe('webhook signing keys', () => {
  const box = new SecretBox(randomBytes(32));
  const hookWith = (secret: string): HookDoc => ({ _id: 'i1', url: 'https://x', events: ['All'], secret_sealed: box.seal(secret, 'webhook-secret:i1'), seq: 0 });

  /** A fold whose reads the test answers one by one. */
  function fold() {
    const pending: ((hook: HookDoc) => void)[] = [];
    let reads = 0;
    const repo = { hook: () => (reads++, new Promise<HookDoc>((resolve) => pending.push(resolve))) } as unknown as DeliveryRepo;
    return { repo, answer: (hook: HookDoc) => pending.shift()?.(hook), reads: () => reads };
  }

  it('reads the fold once per instance until told of a change', async () => {
    const f = fold();
    let now = 0;
    const keys = new SigningKeys(f.repo, box, () => now);
    const first = keys.forInstance('i1');
    f.answer(hookWith('whsec_AAAA'));
    expect(await first).to.deep.equal(signingKey('whsec_AAAA'));
    expect(await keys.forInstance('i1')).to.deep.equal(signingKey('whsec_AAAA'));
    expect(f.reads()).to.equal(1);
    keys.forget(['i1']);
    const second = keys.forInstance('i1');
    f.answer(hookWith('whsec_BBBB'));
    expect(await second).to.deep.equal(signingKey('whsec_BBBB'));
    now += 60_000;
    const aged = keys.forInstance('i1');
    f.answer(hookWith('whsec_CCCC'));
    expect(await aged).to.deep.equal(signingKey('whsec_CCCC'));
    expect(f.reads()).to.equal(3);
  });

  it('does not keep a key read before a change was reported', async () => {
    const f = fold();
    const keys = new SigningKeys(f.repo, box, () => 0);
    const stale = keys.forInstance('i1');
    keys.forget(['i1']);
    f.answer(hookWith('whsec_OLD0'));
    await stale;
    const fresh = keys.forInstance('i1');
    f.answer(hookWith('whsec_NEW0'));
    expect(await fresh).to.deep.equal(signingKey('whsec_NEW0'));
  });
});
