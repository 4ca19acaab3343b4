import { expect } from 'chai';
import type { SessionEvent } from '../../src/domain/session/events.js';
import { evolveSessionStatus, initialSessionStatus, type SessionStatus } from '../../src/domain/session/session-status.js';

const T1 = '2026-01-01T10:00:00.000Z';
const T2 = '2026-01-01T11:00:00.000Z';

const connected: SessionEvent = {
  type: 'SessionConnected',
  data: { jid: '5511999990001@s.whatsapp.net', phone: '5511999990001', business: true, push_name: 'Shop', lid: '123@lid' },
};

/** Given these events (each with when it occurred), the status is... */
const given = (...events: [SessionEvent, string][]): SessionStatus => events.reduce((s, [e, at]) => evolveSessionStatus(s, e, at), initialSessionStatus());

describe('the session status fold', () => {
  it('starts unpaired and disconnected', () => {
    expect(given()).to.deep.equal({ paired: false, connected: false });
  });

  it('a connection pairs it and says who the account is, and since when', () => {
    expect(given([connected, T1])).to.deep.equal({
      paired: true, connected: true, phone: '5511999990001', jid: '5511999990001@s.whatsapp.net', business: true, push_name: 'Shop', lid: '123@lid', connected_at: T1,
    });
  });

  it('a disconnect keeps it paired and the account known, and says why and when', () => {
    const status = given([connected, T1], [{ type: 'SessionDisconnected', data: { reason: 'replaced', message: 'taken over' } }, T2]);
    expect(status).to.include({ paired: true, connected: false, phone: '5511999990001', connected_at: T1 });
    expect(status.last_disconnect).to.deep.equal({ reason: 'replaced', at: T2, message: 'taken over' });
  });

  it('a profile update sets the fields it carries and keeps the others', () => {
    const status = given(
      [connected, T1],
      [{ type: 'ProfileUpdated', data: { about: 'hello', picture_id: 'p1', business: { email: 'a@b.c' } } }, T2],
      [{ type: 'ProfileUpdated', data: { push_name: 'Shop 2' } }, T2],
    );
    expect(status).to.include({ about: 'hello', picture_id: 'p1', push_name: 'Shop 2', phone: '5511999990001' });
    expect(status.business_profile).to.deep.equal({ email: 'a@b.c' });
  });

  it('a logout forgets the account but not why the session last went down', () => {
    const status = given(
      [connected, T1],
      [{ type: 'ProfileUpdated', data: { about: 'hello' } }, T1],
      [{ type: 'SessionDisconnected', data: { reason: 'connection_lost' } }, T2],
      [{ type: 'SessionLoggedOut', data: { by: 'phone' } }, T2],
    );
    expect(status).to.deep.equal({ paired: false, connected: false, last_disconnect: { reason: 'connection_lost', at: T2 } });
  });

  it('answers the same object for an event it does not fold, and keeps a document\'s own fields', () => {
    const doc = { _id: 'i1', ...initialSessionStatus() };
    const message: SessionEvent = { type: 'SessionPairingStarted', data: { method: 'qr' } };
    expect(evolveSessionStatus(doc, message, T1)).to.equal(doc);
    expect(evolveSessionStatus(doc, connected, T1)).to.include({ _id: 'i1', connected: true });
  });
});
