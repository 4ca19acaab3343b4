import { expect } from 'chai';
import type { SessionEvent } from '../../../src/domain/session/events.js';
import { OwnEchoes } from '../../../src/sessions/baileys/own-echoes.js';

const GROUP = '120363000000000001@g.us';
const BOB = '5511966665555@s.whatsapp.net';
const CAROL = '5511955554444@s.whatsapp.net';
const person = (jid: string) => ({ jid, phone_number: jid, is_admin: false, is_super_admin: false });
const added = (...jids: string[]): SessionEvent => ({ type: 'GroupParticipantsAdded', data: { group: GROUP, participants: jids.map(person) } });

describe('Baileys driver: the echo of its own group changes', () => {
  it('drops the network echo of an add the API made, once; a later add by someone else is kept', () => {
    const echoes = new OwnEchoes(() => 0);
    echoes.expect(GROUP, 'add', [BOB]);
    expect(echoes.filter([added(BOB)])).to.deep.equal([]);
    expect(echoes.filter([added(BOB)])).to.deep.equal([added(BOB)]);
  });

  it('keeps the people of an echo that were not asked for, and anything else', () => {
    const echoes = new OwnEchoes(() => 0);
    echoes.expect(GROUP, 'add', [BOB]);
    const rename: SessionEvent = { type: 'GroupUpdated', data: { group: GROUP, changes: { name: 'x' } } };
    expect(echoes.filter([added(BOB, CAROL), rename])).to.deep.equal([added(CAROL), rename]);
  });

  it('forgets an expectation after a minute', () => {
    let now = 0;
    const echoes = new OwnEchoes(() => now);
    echoes.expect(GROUP, 'update');
    now = 61_000;
    const rename: SessionEvent = { type: 'GroupUpdated', data: { group: GROUP, changes: { name: 'x' } } };
    expect(echoes.filter([rename])).to.deep.equal([rename]);
  });
});
