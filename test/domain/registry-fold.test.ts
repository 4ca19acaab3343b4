import { expect } from 'chai';
import type { AccountRegistryEvent } from '../../src/domain/account/events.js';
import { isRegistered, registryDecider } from '../../src/domain/account/registry-decider.js';

const registered = (n: number, email = `user${n}@x.io`): AccountRegistryEvent => ({
  type: 'AccountRegistered',
  data: { account_id: `a${n}`, user_id: n, email, password_hash: 'p', client_token: `ct${n}`, client_secret_hash: 's' },
});

/** Folding the registry is linear in accounts (it copied the e-mail set per event: quadratic). */
describe('the account registry fold', () => {
  it('folds 100,000 registrations in well under the time a copy per event would take', () => {
    const started = performance.now();
    let state = registryDecider.initialState();
    for (let n = 1; n <= 100_000; n++) state = registryDecider.evolve(state, registered(n));
    // Copying the set per event is some 5e9 insertions here: minutes, not this.
    expect(performance.now() - started).to.be.below(5_000);
    expect(state.count).to.equal(100_000);
    expect(isRegistered(state, 'user1@x.io') && isRegistered(state, 'user100000@x.io')).to.equal(true);
  });

  it('every state answers for its own registrations, even evolved again after a newer one', () => {
    const s1 = registryDecider.evolve(registryDecider.initialState(), registered(1, 'a@x.io'));
    const s2 = registryDecider.evolve(s1, registered(2, 'b@x.io'));
    // A second branch from s1: it must not see b, and s2 must not see c.
    const s2b = registryDecider.evolve(s1, registered(2, 'c@x.io'));
    const s3 = registryDecider.evolve(s2, registered(3, 'd@x.io'));
    expect(['a@x.io', 'b@x.io', 'c@x.io', 'd@x.io'].map((e) => isRegistered(s1, e))).to.deep.equal([true, false, false, false]);
    expect(['a@x.io', 'b@x.io', 'c@x.io', 'd@x.io'].map((e) => isRegistered(s2, e))).to.deep.equal([true, true, false, false]);
    expect(['a@x.io', 'b@x.io', 'c@x.io', 'd@x.io'].map((e) => isRegistered(s2b, e))).to.deep.equal([true, false, true, false]);
    expect(['a@x.io', 'b@x.io', 'c@x.io', 'd@x.io'].map((e) => isRegistered(s3, e))).to.deep.equal([true, true, false, true]);
    expect(() => registryDecider.decide({ type: 'RegisterAccount', data: { account_id: 'x', email: 'b@x.io', password_hash: 'p', client_token: 't', client_secret_hash: 's' } }, s1)).to.not.throw();
    expect(() => registryDecider.decide({ type: 'RegisterAccount', data: { account_id: 'x', email: 'b@x.io', password_hash: 'p', client_token: 't', client_secret_hash: 's' } }, s3)).to.throw();
  });
});
