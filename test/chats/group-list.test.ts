import { expect } from 'chai';
import { expectError, newAccount } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { newPhone, waitFor } from '../support/sandbox.js';
import { fieldsOf, pairedInstance } from '../support/chats.js';

describe('GET /instances/{id}/group/list over the sandbox', () => {
  let me: { phone: string; jid: string };
  let a: { phone: string; jid: string };
  let b: { phone: string; jid: string };
  let c: { phone: string; jid: string };
  let instanceId: string;
  const jids: Record<string, string> = {};

  const list = (query = '') => t.api('GET', `/instances/${instanceId}/group/list${query}`, { token: owner.jwt });
  const group = async (body: Record<string, unknown>) => {
    const res = await t.api('POST', '/sandbox/groups', { token: owner.jwt, body });
    expect(res.status, res.text).to.equal(201);
    return res.body.jid as string;
  };

  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });
  before(async () => {
    [me, a, b, c] = [await newPhone(t.api, owner), await newPhone(t.api, owner), await newPhone(t.api, owner), await newPhone(t.api, owner)];
    // Before pairing: these reach the instance with the history.
    jids.gamma = await group({ name: 'Gamma', owner: a.phone, participants: [me.phone, b.phone] });
    jids.alpha = await group({ name: 'Alpha', owner: me.phone, participants: [a.phone] });
    jids.beta = await group({
      name: 'Beta',
      owner: b.phone,
      participants: [me.phone, a.phone, c.phone],
      topic: 'the topic',
      announce: true,
      locked: true,
      ephemeral_seconds: 86_400,
    });
    await group({ name: 'Not mine', owner: a.phone, participants: [b.phone] });
    ({ id: instanceId } = await pairedInstance(t, owner, me.phone));
    await waitFor(async () => (await list()).body?.data?.groups?.length === 3, 'three groups');
  });

  it('answers the envelope with every group of the account, by name, and who the caller is', async () => {
    const res = await list();
    expect(res.status).to.equal(200);
    expect(res.body.code).to.equal(200);
    expect(res.body.success).to.equal(true);
    const account = await t.api('GET', '/account', { token: owner.jwt });
    expect(res.body.data.user_id).to.equal(account.body.user_id).and.to.be.a('number');
    expect(res.body.data.instance_id).to.equal(instanceId);
    expect(res.body.data.groups.map((g: { name: string }) => g.name)).to.deep.equal(['Alpha', 'Beta', 'Gamma']);
  });

  it('gives every Group and Participant field of the spec, in order', async () => {
    const beta = (await list()).body.data.groups[1];
    expect(Object.keys(beta)).to.deep.equal([
      'jid', 'owner_jid', 'owner_pn', 'name', 'topic', 'topic_deleted', 'is_locked', 'is_announce', 'is_ephemeral',
      'disappearing_timer', 'group_created', 'participant_count', 'total_participants', 'is_admin', 'invite_url', 'participants',
    ]);
    expect(beta).to.include({
      jid: jids.beta,
      owner_jid: b.jid,
      owner_pn: b.phone,
      name: 'Beta',
      topic: 'the topic',
      topic_deleted: false,
      is_locked: true,
      is_announce: true,
      is_ephemeral: true,
      disappearing_timer: 86_400,
      participant_count: 4,
      total_participants: 4,
      is_admin: false,
      invite_url: '',
    });
    expect(Number.isNaN(Date.parse(beta.group_created))).to.equal(false);
    expect(beta.participants).to.have.length(4);
    const owner = beta.participants.find((p: { jid: string }) => p.jid === b.jid);
    expect(Object.keys(owner)).to.deep.equal(['jid', 'phone_number', 'lid', 'is_admin', 'is_super_admin', 'display_name', 'error']);
    expect(owner).to.deep.include({ phone_number: b.phone, lid: '', is_admin: true, is_super_admin: true, error: 0 });
    const member = beta.participants.find((p: { jid: string }) => p.jid === me.jid);
    expect(member).to.deep.include({ phone_number: me.phone, is_admin: false, is_super_admin: false });
  });

  it("says whether the connected account is admin, and gives the invite link only then", async () => {
    const groups = (await list()).body.data.groups as { name: string; is_admin: boolean; invite_url: string }[];
    const byName = Object.fromEntries(groups.map((g) => [g.name, g]));
    expect(byName.Alpha).to.include({ is_admin: true });
    expect(byName.Alpha!.invite_url).to.match(/^https:\/\/chat\.whatsapp\.com\/[A-Za-z0-9_-]{22}$/);
    expect(byName.Beta).to.include({ is_admin: false, invite_url: '' });
    expect(byName.Gamma).to.include({ is_admin: false, invite_url: '' });
  });

  it('pages with page and pageSize, defaults 1 and 10', async () => {
    const first = await list('?page=1&pageSize=2');
    const second = await list('?page=2&pageSize=2');
    const third = await list('?page=3&pageSize=2');
    expect(first.body.data.groups.map((g: { name: string }) => g.name)).to.deep.equal(['Alpha', 'Beta']);
    expect(second.body.data.groups.map((g: { name: string }) => g.name)).to.deep.equal(['Gamma']);
    expect(third.body.data.groups).to.deep.equal([]);
    expect((await list('?pageSize=1')).body.data.groups.map((g: { name: string }) => g.name)).to.deep.equal(['Alpha']);
  });

  it('follows participants added and removed, and new groups', async () => {
    const res = await t.api('POST', `/sandbox/groups/${jids.gamma}/participants`, { token: owner.jwt, body: { add: [c.phone], remove: [b.phone], by: a.phone } });
    expect(res.status, res.text).to.equal(200);
    await waitFor(async () => {
      const gamma = (await list()).body.data.groups.find((g: { name: string }) => g.name === 'Gamma');
      const members = gamma.participants.map((p: { phone_number: string }) => p.phone_number).sort();
      return gamma.participant_count === 3 && JSON.stringify(members) === JSON.stringify([a.phone, me.phone, c.phone].sort());
    }, 'gamma membership');
    await group({ name: 'Delta', owner: c.phone, participants: [me.phone] });
    await waitFor(async () => (await list()).body.data.groups.some((g: { name: string }) => g.name === 'Delta'), 'new group');
  });

  it('refuses out-of-range or malformed paging with 400 naming the field', async () => {
    for (const [query, field] of [
      ['?page=0', 'page'],
      ['?page=-1', 'page'],
      ['?page=abc', 'page'],
      ['?pageSize=0', 'pageSize'],
      ['?pageSize=101', 'pageSize'],
      ['?pageSize=', 'pageSize'],
    ] as const) {
      const res = await list(query);
      expectError(res, 400, 'invalid_input');
      expect(fieldsOf(res), query).to.include(field);
    }
  });

  it("is the owner's only", async () => {
    const other = await newAccount(t.api);
    expectError(await t.api('GET', `/instances/${instanceId}/group/list`, { token: other.jwt }), 403, 'forbidden');
    expectError(await t.api('GET', `/instances/${instanceId}/group/list`), 401, 'unauthorized');
  });
});
