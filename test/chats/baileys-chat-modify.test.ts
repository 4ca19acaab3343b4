import { expect } from 'chai';
import { chatModification } from '../../src/sessions/baileys/chat-modify.js';

const PERSON = '5511900000001@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';

describe('Baileys chat modifications', () => {
  const last = { id: 'ABC', from_me: false, timestamp_s: 1_700_000_000 };

  it('names the newest message as the range of archive, read state, clear and delete', () => {
    const range = [{ key: { remoteJid: PERSON, id: 'ABC', fromMe: false }, messageTimestamp: 1_700_000_000 }];
    expect(chatModification(PERSON, { type: 'archive', archived: true, last })).to.deep.equal({ archive: true, lastMessages: range });
    expect(chatModification(PERSON, { type: 'mark_unread', unread: true, last })).to.deep.equal({ markRead: false, lastMessages: range });
    expect(chatModification(PERSON, { type: 'mark_unread', unread: false, last })).to.deep.equal({ markRead: true, lastMessages: range });
    expect(chatModification(PERSON, { type: 'clear', last })).to.deep.equal({ clear: true, lastMessages: range });
    expect(chatModification(PERSON, { type: 'delete_chat', last })).to.deep.equal({ delete: true, lastMessages: range });
    expect(chatModification(PERSON, { type: 'archive', archived: false })).to.deep.equal({ archive: false, lastMessages: [] });
  });

  it('gives a group message its author, and no range when the author is unknown', () => {
    expect(chatModification(GROUP, { type: 'archive', archived: true, last: { ...last, participant: '5511900000002@s.whatsapp.net' } })).to.deep.equal({
      archive: true,
      lastMessages: [{ key: { remoteJid: GROUP, id: 'ABC', fromMe: false, participant: '5511900000002@s.whatsapp.net' }, messageTimestamp: 1_700_000_000 }],
    });
    expect(chatModification(GROUP, { type: 'archive', archived: true, last })).to.deep.equal({ archive: true, lastMessages: [] });
  });

  it('mutes until an absolute time, for always, or unmutes; pins; deletes one message for me', () => {
    expect(chatModification(PERSON, { type: 'mute', until_ms: 1_800_000_000_000 })).to.deep.equal({ mute: 1_800_000_000_000 });
    expect(chatModification(PERSON, { type: 'mute', until_ms: -1 })).to.deep.equal({ mute: -1 });
    expect(chatModification(PERSON, { type: 'mute', until_ms: 0 })).to.deep.equal({ mute: null });
    expect(chatModification(PERSON, { type: 'pin', pinned: true })).to.deep.equal({ pin: true });
    expect(chatModification(PERSON, { type: 'delete_message', message: { id: 'X1', from_me: true, timestamp_s: 5 } })).to.deep.equal({
      deleteForMe: { deleteMedia: true, key: { remoteJid: PERSON, id: 'X1', fromMe: true }, timestamp: 5 },
    });
  });
});
