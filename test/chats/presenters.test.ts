import { expect } from 'chai';
import { presentChat, presentGroup } from '../../src/api/presenters/chats.js';
import { newChat, type ChatDoc } from '../../src/projections/chats/chats-projection.js';
import type { GroupDoc } from '../../src/projections/groups/groups-projection.js';

const group = (participants: GroupDoc['participants'], extra: Partial<GroupDoc> = {}): GroupDoc => ({
  _id: 'I:1@g.us',
  instance_id: 'I',
  jid: '120363000000000001@g.us',
  owner_jid: '99887766@lid',
  owner_pn: '',
  name: 'G',
  topic: '',
  topic_deleted: false,
  is_locked: false,
  is_announce: false,
  is_ephemeral: false,
  disappearing_timer: 0,
  group_created: '',
  invite_code: '',
  is_community: false,
  community_jid: '',
  participants,
  ...extra,
});

const chat = (jid: string, extra: Partial<ChatDoc> = {}): ChatDoc => {
  const doc: ChatDoc = { ...newChat('I', jid), phone: '' };
  return Object.assign(doc, extra);
};

describe('group and chat presenters', () => {
  const pairs = {
    pnByLid: new Map([
      ['99887766@lid', '5511900000001@s.whatsapp.net'],
      ['11223344@lid', '5511900000002@s.whatsapp.net'],
    ]),
    lidByPn: new Map([['5511900000003@s.whatsapp.net', '55667788@lid']]),
  };

  it('fills phone numbers of LID participants and LIDs of numbered ones from the map', () => {
    const g = presentGroup(
      group([
        { jid: '99887766@lid', is_admin: true, is_super_admin: true },
        { jid: '11223344@lid', lid: '11223344@lid', is_admin: false, is_super_admin: false, display_name: 'Bo' },
        { jid: '5511900000003@s.whatsapp.net', phone_number: '5511900000003@s.whatsapp.net', is_admin: false, is_super_admin: false },
        { jid: '00000000@lid', is_admin: false, is_super_admin: false },
      ]),
      { jid: '5511900000002:7@s.whatsapp.net' },
      pairs,
    );
    expect(g.owner_pn).to.equal('5511900000001');
    expect(g.participants.map((p) => [p.phone_number, p.lid])).to.deep.equal([
      ['5511900000001', '99887766@lid'],
      ['5511900000002', '11223344@lid'],
      ['5511900000003', '55667788@lid'],
      ['', '00000000@lid'],
    ]);
    // The account is known by its number; the group names it by LID: still found, not admin.
    expect(g.is_admin).to.equal(false);
    // Found indeed: made admin under its LID, the account is admin of the group.
    const promoted = presentGroup(group([{ jid: '11223344@lid', is_admin: true, is_super_admin: false }]), { jid: '5511900000002:7@s.whatsapp.net' }, pairs);
    expect(promoted.is_admin).to.equal(true);
    expect(g.participants[1]).to.include({ display_name: 'Bo' });
  });

  it('recognises the account by LID, counts a super admin as admin, and shows the invite only then', () => {
    const members = [{ jid: '11223344@lid', is_admin: false, is_super_admin: true }];
    const admin = presentGroup(group(members, { invite_code: 'AbCdEfGhIjKlMnOpQrStUv' }), { lid: '11223344@lid' }, pairs);
    expect(admin).to.include({ is_admin: true, invite_url: 'https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv' });
    expect(admin.participants[0]).to.include({ is_admin: true, is_super_admin: true });
    const stranger = presentGroup(group(members, { invite_code: 'AbCdEfGhIjKlMnOpQrStUv' }), { jid: '5511999999999@s.whatsapp.net' }, pairs);
    expect(stranger).to.include({ is_admin: false, invite_url: '' });
  });

  it('gives phone as digits for people, the mapped number for a LID, the jid otherwise', () => {
    const ctx = { nowMs: 1_000_000, pnByLid: pairs.pnByLid };
    expect(presentChat(chat('5511900000009@s.whatsapp.net'), ctx).phone).to.equal('5511900000009');
    expect(presentChat(chat('99887766@lid'), ctx).phone).to.equal('5511900000001');
    expect(presentChat(chat('12345@lid'), ctx).phone).to.equal('12345@lid');
    expect(presentChat(chat('120363000000000001@g.us'), ctx).phone).to.equal('120363000000000001@g.us');
  });

  it('shows mute ends in unix seconds, 0 once passed, -1 for always', () => {
    const ctx = { nowMs: 2_000_000_000_000, pnByLid: new Map<string, string>() };
    expect(presentChat(chat('1@g.us', { mute_end_time: 2_000_000_360_000 }), ctx).mute_end_time).to.equal(2_000_000_360);
    expect(presentChat(chat('1@g.us', { mute_end_time: 1_999_999_999_000 }), ctx).mute_end_time).to.equal(0);
    expect(presentChat(chat('1@g.us', { mute_end_time: -1 }), ctx).mute_end_time).to.equal(-1);
    const c = presentChat(chat('1@g.us', { messages_unread: 4, last_message_timestamp_ms: 1_700_000_000_000 }), ctx);
    expect(c).to.include({ unread: '4', messages_unread: 4, last_message_time: '2023-11-14T22:13:20.000Z' });
    expect(presentChat(chat('1@g.us'), ctx).last_message_time).to.equal('');
  });
});
