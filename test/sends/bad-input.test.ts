/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import type { Clock } from '../../src/infra/clock.js';
import { eventData, pairedInstance } from '../support/chats.js';
import { newPhone } from '../support/sandbox.js';
import { useGateway } from '../support/use-gateway.js';

/** A clock the test moves forward by hand. */
const movableClock = () => {
  let offset = 0;
  const clock: Clock & { advance(ms: number): void } = { now: () => new Date(Date.now() + offset), advance: (ms) => (offset += ms) };
  return clock;
};

/**
 * The "Bad input" cases the main sending suite cannot reach: media URLs under the
 * production outbound-safety rules (ALLOW_PRIVATE_TARGETS false), an edit after the network's 15
 * minutes, and mentions of people who are not in the group. Each is a clear 4xx, with nothing
 * sent and nothing stored.
 */
describe('sending: bad input refused over HTTP (outbound safety on, edit window, group mentions)', function () {
  this.timeout(60_000);
  const clock = movableClock();
  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox', ALLOW_PRIVATE_TARGETS: 'false', JWT_TTL_SECONDS: String(86400) }, { clock });
  let me: { id: string; phone: string; jid: string };
  let peer: { id: string; phone: string; jid: string };
  const post = (path: string, body: unknown) => t.api('POST', `/instances/${me.id}/chat/${path}`, { token: owner.jwt, body });
  const inbox = async (phone: string) => (await t.api('GET', `/sandbox/phones/${phone}/inbox`, { token: owner.jwt })).body.messages as any[];
  const sentCount = async () => (await eventData(t, me.id, 'MessageSent')).length;

  before(async () => {
    me = await pairedInstance(t, owner);
    peer = await pairedInstance(t, owner);
  });

  it('refuses media URLs that are not https or resolve to private, loopback, link-local or metadata addresses', async () => {
    const before = await sentCount();
    const beforeInbox = (await inbox(peer.phone)).length;
    for (const url of [
      'http://example.com/photo.jpg',
      'https://127.0.0.1/photo.jpg',
      'https://localhost/photo.jpg',
      'https://10.1.2.3/photo.jpg',
      'https://192.168.0.10/photo.jpg',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/photo.jpg',
      'ftp://example.com/photo.jpg',
      'not a url',
    ]) {
      const res = await post('send/image', { phone: peer.phone, media: { url } });
      expect(res.status, `${url}: ${res.text}`).to.equal(400);
      expect(res.body.error.type, url).to.equal('invalid_input');
    }
    expect(await sentCount()).to.equal(before);
    expect((await inbox(peer.phone)).length).to.equal(beforeInbox);
  });

  it('answers 409 to an edit after the 15 minutes the network allows, and sends no edit', async () => {
    const sent = await post('send/text', { phone: peer.phone, message: 'opens at 8', link_preview: false });
    expect(sent.status, sent.text).to.equal(200);
    const fresh = await post('edit', { phone: peer.phone, message_id: sent.body.data.message_id, message: 'opens at 9' });
    expect(fresh.status, fresh.text).to.equal(200);
    const before = await sentCount();
    clock.advance(16 * 60_000);
    const late = await post('edit', { phone: peer.phone, message_id: sent.body.data.message_id, message: 'opens at 10' });
    expect(late.status, late.text).to.equal(409);
    expect(late.body.success).to.equal(false);
    expect(await sentCount()).to.equal(before);
    expect((await inbox(peer.phone)).filter((m) => m.text === 'opens at 10' || m.edit?.text === 'opens at 10')).to.have.length(0);
  });

  it('refuses mentions of people who are not members of the group', async () => {
    const outsider = await newPhone(t.api, owner);
    const created = await t.api('POST', `/instances/${me.id}/group/create`, { token: owner.jwt, body: { name: 'Team', participants: [peer.phone] } });
    expect(created.status, created.text).to.equal(200);
    const group = created.body.data.jid ?? created.body.data.id;
    expect(group).to.match(/@g\.us$/);
    const ok = await post('send/text', { phone: group, message: 'hi all', mentions: [peer.phone] });
    expect(ok.status, ok.text).to.equal(200);
    const before = await sentCount();
    const res = await post('send/text', { phone: group, message: 'hi', mentions: [outsider.phone] });
    expect(res.status, res.text).to.equal(400);
    expect(res.body.error.type).to.equal('invalid_input');
    expect(await sentCount()).to.equal(before);
  });
});
