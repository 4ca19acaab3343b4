import { expect } from 'chai';
import { presentSessionStatus } from '../../src/api/presenters/session-status.js';
import type { SessionStatusDoc } from '../../src/projections/sessions/sessions-projection.js';

/** The spec's order for every field, including the picture fields the sandbox never sets. */
describe('session status presenter', () => {
  const full: SessionStatusDoc = {
    // Stored in another order on purpose.
    _id: 'I',
    about: 'hi',
    verified_name: 'V',
    picture_url: 'https://pps.example/p.jpg',
    picture_id: '123',
    business_profile: { email: 'e@x.co', address: 'A', profile_options: { k: 'v' }, categories: [{ id: '1', name: 'C' }], business_hours_timezone: 'UTC', website: 'https://w.example' },
    business_name: 'B',
    push_name: 'P',
    jid: '5511@s.whatsapp.net',
    phone: '5511',
    connected: true,
    paired: true,
  };

  it('orders every field as the spec lists them', () => {
    const out = presentSessionStatus(full, true);
    expect(Object.keys(out)).to.deep.equal([
      'connected', 'phone', 'whatsapp_jid', 'push_name', 'business_name', 'business_profile',
      'profile_picture_id', 'profile_picture_url', 'profile_url', 'verified_name', 'about', 'website',
    ]);
    expect(Object.keys(out.business_profile as object)).to.deep.equal(['business_hours_timezone', 'categories', 'profile_options', 'address', 'email']);
    expect(out.profile_picture_url).to.equal('https://pps.example/p.jpg');
  });

  it('answers {connected: false} alone when not connected, whatever is stored', () => {
    expect(presentSessionStatus(full, false)).to.deep.equal({ connected: false });
    expect(presentSessionStatus(null, true)).to.deep.equal({ connected: false });
  });

  it('leaves out empty fields, empty lists and an empty business profile', () => {
    const sparse: SessionStatusDoc = { _id: 'I', paired: true, connected: true, phone: '5511', jid: '5511@s.whatsapp.net', push_name: '', about: '', business_name: 'B', business_profile: { categories: [], profile_options: {}, email: '' } };
    expect(presentSessionStatus(sparse, true)).to.deep.equal({
      connected: true,
      phone: '5511',
      whatsapp_jid: '5511@s.whatsapp.net',
      business_name: 'B',
      profile_url: 'https://wa.me/5511',
    });
  });

  it('holds only connected when disconnected, as the spec says, even for a session stopped for good (the webhook and history say why)', () => {
    const message = 'WhatsApp refused client version 2.3000.1 (405): set WHATSAPP_VERSION to the current WhatsApp Web version and restart the session';
    const down: SessionStatusDoc = { ...full, connected: false, last_disconnect: { reason: 'client_outdated', at: '2026-01-01T00:00:00.000Z', message } };
    expect(presentSessionStatus(down, false)).to.deep.equal({ connected: false });
    expect(presentSessionStatus({ ...down, paired: false }, false)).to.deep.equal({ connected: false });
  });
});
