import { proto, type BaileysEventMap, type Chat, type ChatUpdate, type Contact, type GroupMetadata, type WAMessage } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { HISTORY_MESSAGES_PER_EVENT } from '../../../src/sessions/baileys/chat-translator.js';
import { translateBatch } from '../../../src/sessions/baileys/translator.js';
import { ALICE_LID, ALICE_PN, BOB_LID, BOB_PN, context, expectValid, GROUP, T0, translate, wire } from './support.js';

const chatsUpdate = (...updates: ChatUpdate[]): Partial<BaileysEventMap> => ({ 'chats.update': updates });

describe('Baileys translator: chats', () => {
  describe('chats.update unread counts', () => {
    it('turns an increment that no live message of the batch explains into unread_delta (offline catch-up)', () => {
      const offline: WAMessage = { key: { remoteJid: ALICE_PN, fromMe: false, id: 'OFF' }, message: { conversation: 'x' }, messageTimestamp: T0 };
      const events = translate({
        'messages.upsert': { type: 'append', messages: [wire(offline)] },
        ...chatsUpdate({ id: ALICE_PN, unreadCount: 1, conversationTimestamp: T0 }),
      });
      expect(events.filter((e) => e.type === 'ChatUpdated')).to.deep.equal([
        { type: 'ChatUpdated', data: { jid: ALICE_PN, changes: { unread_delta: 1, last_message_s: T0 } } },
      ]);
    });

    it('does not count twice the increment of a live message (consumers count MessageReceived notify)', () => {
      const live = (id: string): WAMessage => wire({ key: { remoteJid: ALICE_PN, fromMe: false, id }, message: { conversation: id }, messageTimestamp: T0 });
      // Baileys' event buffer sums the per-message increments: three messages, two of them live here.
      const events = translate({
        'messages.upsert': { type: 'notify', messages: [live('N1'), live('N2')] },
        ...chatsUpdate({ id: ALICE_PN, unreadCount: 3, conversationTimestamp: T0 }, { id: BOB_PN, unreadCount: 1 }),
      });
      expect(events.filter((e) => e.type === 'ChatUpdated')).to.deep.equal([
        { type: 'ChatUpdated', data: { jid: ALICE_PN, changes: { unread_delta: 1, last_message_s: T0 } } },
        { type: 'ChatUpdated', data: { jid: BOB_PN, changes: { unread_delta: 1 } } },
      ]);
      const justLive = translate({
        'messages.upsert': { type: 'notify', messages: [live('N3')] },
        ...chatsUpdate({ id: ALICE_PN, unreadCount: 1, conversationTimestamp: T0 + 1 }),
      });
      expect(justLive.filter((e) => e.type === 'ChatUpdated')).to.deep.equal([
        { type: 'ChatUpdated', data: { jid: ALICE_PN, changes: { last_message_s: T0 + 1 } } },
      ]);
    });

    it('takes 0 (the phone read the chat) as an absolute count and -1 as "marked unread"', () => {
      expect(translate(chatsUpdate({ id: ALICE_PN, unreadCount: 0 }, { id: BOB_PN, unreadCount: -1 }))).to.deep.equal([
        { type: 'ChatUpdated', data: { jid: ALICE_PN, changes: { unread_count: 0, marked_as_unread: false } } },
        { type: 'ChatUpdated', data: { jid: BOB_PN, changes: { marked_as_unread: true } } },
      ]);
    });

    it('ignores a neutralised mark (null) and reports nothing for an update that changes nothing', () => {
      expect(translate(chatsUpdate({ id: ALICE_PN, unreadCount: null }))).to.deep.equal([]);
    });
  });

  it('maps app-state chat actions: archive, pin and its undo (null), mute in ms and unmute (null)', () => {
    const events = translate(
      chatsUpdate(
        { id: ALICE_PN, archived: true },
        { id: BOB_PN, pinned: T0 },
        { id: GROUP, pinned: null, muteEndTime: 1_900_000_000_000 },
        { id: ALICE_LID, muteEndTime: null },
      ),
    );
    expect(events).to.deep.equal([
      { type: 'ChatUpdated', data: { jid: ALICE_PN, changes: { archived: true } } },
      { type: 'ChatUpdated', data: { jid: BOB_PN, changes: { pinned: true } } },
      { type: 'ChatUpdated', data: { jid: GROUP, changes: { pinned: false, mute_end_ms: 1_900_000_000_000 } } },
      { type: 'ChatUpdated', data: { jid: ALICE_LID, changes: { mute_end_ms: 0 } } },
    ]);
  });

  it('maps chats.upsert with absolute counts, and chats.delete', () => {
    const chat: Chat = { id: ALICE_PN, name: 'Alice', unreadCount: 2, archived: false, pinned: 0, conversationTimestamp: T0 };
    expect(translate({ 'chats.upsert': [chat], 'chats.delete': [BOB_PN] })).to.deep.equal([
      { type: 'ChatsUpserted', data: { chats: [{ jid: ALICE_PN, name: 'Alice', archived: false, pinned: false, unread_count: 2, last_message_s: T0 }] } },
      { type: 'ChatUpdated', data: { jid: BOB_PN, changes: { deleted: true } } },
    ]);
  });

  describe('messaging-history.set', () => {
    const chats: Chat[] = [
      { id: ALICE_LID, pnJid: ALICE_PN, name: 'Alice', unreadCount: 3, conversationTimestamp: T0, muteEndTime: 1_800_000_000, archived: true },
      { id: GROUP, name: 'Team', unreadCount: 0, pinned: T0, parentGroupId: '120363000000000099@g.us' },
    ];
    const contacts: Contact[] = [{ id: BOB_PN, lid: BOB_LID, notify: 'Bob' }];
    const messages: WAMessage[] = [
      wire({ key: { remoteJid: ALICE_LID, fromMe: false, id: 'H1' }, message: { conversation: 'old news' }, messageTimestamp: T0 - 100, pushName: 'Alice' }),
    ];
    const history: BaileysEventMap['messaging-history.set'] = {
      chats,
      contacts,
      messages,
      isLatest: true,
      progress: 42.4,
      syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
      lidPnMappings: [{ pn: '5511955554444@s.whatsapp.net', lid: '400000000000004@lid' }],
    };

    it('becomes HistorySyncReceived with the chats (absolute counts) and messages, then the LID pairs it reveals', () => {
      expect(translate({ 'messaging-history.set': history })).to.deep.equal([
        {
          type: 'HistorySyncReceived',
          data: {
            sync_type: 'INITIAL_BOOTSTRAP',
            progress: 42,
            is_latest: true,
            chats: [
              // History gives the mute end in seconds; events carry milliseconds.
              // A person by phone jid when the chunk tells it (the chat's pnJid): one person, one chat.
              { jid: ALICE_PN, name: 'Alice', archived: true, unread_count: 3, mute_end_ms: 1_800_000_000_000, last_message_s: T0 },
              { jid: GROUP, name: 'Team', pinned: true, unread_count: 0, community_jid: '120363000000000099@g.us' },
            ],
            messages: [
              {
                id: 'H1',
                chat: ALICE_PN,
                chat_lid: ALICE_LID,
                addressing_mode: 'lid',
                sender: ALICE_PN,
                sender_pn: ALICE_PN,
                sender_lid: ALICE_LID,
                from_me: false,
                is_group: false,
                push_name: 'Alice',
                timestamp_s: T0 - 100,
                type: 'text',
                text: 'old news',
              },
            ],
          },
        },
        {
          type: 'LidMappingLearned',
          data: {
            pairs: [
              { pn: '5511955554444@s.whatsapp.net', lid: '400000000000004@lid' },
              { pn: ALICE_PN, lid: ALICE_LID },
              { pn: BOB_PN, lid: BOB_LID },
            ],
          },
        },
        // The history's address book: the contacts read model's first names.
        { type: 'ContactsUpserted', data: { contacts: [{ jid: BOB_PN, lid: BOB_LID, push_name: 'Bob' }] } },
      ]);
    });

    it('splits a large chunk so no stored event grows without bound', () => {
      const many = Array.from({ length: HISTORY_MESSAGES_PER_EVENT + 1 }, (_, i) =>
        wire({ key: { remoteJid: ALICE_PN, fromMe: false, id: `M${i}` }, message: { conversation: `${i}` }, messageTimestamp: T0 }),
      );
      const events = translate({ 'messaging-history.set': { ...history, messages: many, lidPnMappings: [], contacts: [], chats: [] } });
      expect(events.map((e) => (e.type === 'HistorySyncReceived' ? e.data.messages.length : -1))).to.deep.equal([HISTORY_MESSAGES_PER_EVENT, 1]);
    });
  });

  it('passes on the pairs of lid-mapping.update', () => {
    expect(translate({ 'lid-mapping.update': { pn: ALICE_PN, lid: ALICE_LID } })).to.deep.equal([
      { type: 'LidMappingLearned', data: { pairs: [{ pn: ALICE_PN, lid: ALICE_LID }] } },
    ]);
  });
});

describe('Baileys translator: groups', () => {
  const meta: GroupMetadata = {
    id: GROUP,
    subject: 'Team',
    owner: ALICE_LID,
    ownerPn: ALICE_PN,
    desc: 'our group',
    creation: T0,
    restrict: true,
    announce: false,
    ephemeralDuration: 86_400,
    participants: [
      { id: ALICE_LID, phoneNumber: ALICE_PN, admin: 'superadmin' },
      { id: BOB_LID, phoneNumber: BOB_PN, admin: null, notify: 'Bob' },
    ],
  };
  const info = {
    jid: GROUP,
    owner_jid: ALICE_LID,
    owner_pn: ALICE_PN,
    name: 'Team',
    topic: 'our group',
    is_locked: true,
    is_announce: false,
    is_ephemeral: true,
    disappearing_timer: 86_400,
    created_s: T0,
    participants: [
      { jid: ALICE_LID, phone_number: ALICE_PN, lid: ALICE_LID, is_admin: true, is_super_admin: true },
      { jid: BOB_LID, phone_number: BOB_PN, lid: BOB_LID, is_admin: false, is_super_admin: false, display_name: 'Bob' },
    ],
  };

  it('maps groups.upsert, and complete groups.update (the fetch-all answer), to GroupsUpserted', () => {
    expect(translate({ 'groups.upsert': [meta] })).to.deep.equal([{ type: 'GroupsUpserted', data: { groups: [info] } }]);
    expect(translate({ 'groups.update': [meta] })).to.deep.equal([{ type: 'GroupsUpserted', data: { groups: [info] } }]);
  });

  it('says who changed what on a partial groups.update (a subject change), and asks for a fresh fetch for the rest', () => {
    const { events, refreshGroups } = translateBatch({ 'groups.update': [{ id: GROUP, subject: 'Renamed', author: ALICE_LID, authorPn: ALICE_PN }] }, context());
    expectValid(events);
    expect(events).to.deep.equal([{ type: 'GroupUpdated', data: { group: GROUP, changes: { name: 'Renamed' }, by: ALICE_PN } }]);
    expect(refreshGroups).to.deep.equal([GROUP]);
  });

  it('maps participants added and removed, the actor by phone number when known', () => {
    const add: BaileysEventMap['group-participants.update'] = {
      id: GROUP,
      author: ALICE_LID,
      authorPn: ALICE_PN,
      action: 'add',
      participants: [{ id: BOB_LID, phoneNumber: BOB_PN }],
    };
    const remove: BaileysEventMap['group-participants.update'] = { ...add, action: 'remove', authorPn: undefined };
    expect(translate({ 'group-participants.update': add })).to.deep.equal([
      {
        type: 'GroupParticipantsAdded',
        data: { group: GROUP, by: ALICE_PN, participants: [{ jid: BOB_LID, phone_number: BOB_PN, lid: BOB_LID, is_admin: false, is_super_admin: false }] },
      },
    ]);
    expect(translate({ 'group-participants.update': remove })).to.deep.equal([
      {
        type: 'GroupParticipantsRemoved',
        data: { group: GROUP, by: ALICE_LID, participants: [{ jid: BOB_LID, phone_number: BOB_PN, lid: BOB_LID, is_admin: false, is_super_admin: false }] },
      },
    ]);
  });

  it('says who was promoted by whom, and refreshes the group (roles live in the whole metadata)', () => {
    const { events, refreshGroups } = translateBatch(
      { 'group-participants.update': { id: GROUP, author: ALICE_LID, action: 'promote', participants: [{ id: BOB_LID }] } },
      context(),
    );
    expectValid(events);
    expect(events).to.deep.equal([
      { type: 'GroupParticipantsPromoted', data: { group: GROUP, by: ALICE_LID, participants: [{ jid: BOB_LID, lid: BOB_LID, is_admin: true, is_super_admin: false }] } },
    ]);
    expect(refreshGroups).to.deep.equal([GROUP]);
  });
});
