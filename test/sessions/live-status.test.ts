import { expect } from 'chai';
import { presentSessionStatus } from '../../src/api/presenters/session-status.js';
import type { SessionEvent } from '../../src/domain/session/events.js';
import { evolveSessionStatus, initialSessionStatus } from '../../src/domain/session/session-status.js';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { pairByCode, newPhone, sessionEvents, status } from '../support/sandbox.js';

/**
 * The status route of a session open here answers from memory (the manager's live status). It is
 * the session's one fold: folding what the session stored gives the same answer.
 */
describe('the live session status', function () {
  this.timeout(20_000);
  let gw: TestGateway;
  let owner: TestAccount;

  before(async () => {
    gw = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' });
    owner = await newAccount(gw.api);
  });
  after(async () => gw.stop());

  it('answers what the fold of the stored session events says', async () => {
    const instance = await newInstance(gw.api, owner);
    const business = { email: 'shop@example.com', address: 'Rua A, 1', verified_name: 'Shop Ltd', name: 'Shop' };
    const phone = await newPhone(gw.api, owner, { push_name: 'Shop front', about: 'Open 9-18', business });
    await pairByCode(gw.api, owner, instance.id, phone.phone);
    const live = await status(gw.api, owner, instance.id);

    const stored = await sessionEvents(gw.gateway, instance.id);
    expect(stored.map((e) => e.type)).to.include.members(['SessionConnected', 'ProfileUpdated']);
    // Read back from the log as the projection gets them; the times do not show in the answer.
    const folded = stored.reduce((s, e) => evolveSessionStatus(s, { type: e.type, data: e.data } as SessionEvent, 'T'), initialSessionStatus());
    expect(live).to.deep.equal(presentSessionStatus({ _id: instance.id, ...folded }, true));
    expect(live).to.include({ connected: true, phone: phone.phone, push_name: 'Shop front', about: 'Open 9-18', business_name: 'Shop' });
  });
});
