import { Boom } from '@hapi/boom';
import { DisconnectReason, initAuthCreds, type ConnectionState, type Contact } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { DISCONNECT_REASONS } from '../../../src/domain/session/events.js';
import { connectedEvent, disconnectReasonOf } from '../../../src/sessions/baileys/translator.js';
import { expectValid, ME, ME_LID, ME_LID_USER, ME_PN } from './support.js';

/** A close as Baileys reports it: `lastDisconnect.error` is the Boom its end() was called with. */
const closed = (message: string, statusCode: number): Partial<ConnectionState> => ({
  connection: 'close',
  lastDisconnect: { error: new Boom(message, { statusCode }), date: new Date(0) },
});

describe('Baileys translator: connection', () => {
  describe('SessionConnected', () => {
    const user: Contact = { id: ME, lid: ME_LID, name: 'My Shop' };

    it('names the account by phone jid, phone digits, push name and LID', () => {
      const creds = { ...initAuthCreds(), platform: 'android' };
      const event = connectedEvent(user, creds);
      expectValid([event]);
      expect(event).to.deep.equal({
        type: 'SessionConnected',
        data: { jid: ME_PN, phone: '5511900000001', push_name: 'My Shop', lid: ME_LID_USER, platform: 'android', business: false },
      });
    });

    it('tells a WhatsApp Business phone by its platform (smba / smbi)', () => {
      for (const platform of ['smba', 'smbi']) {
        const event = connectedEvent(user, { ...initAuthCreds(), platform });
        expect(event.type === 'SessionConnected' && event.data.business, platform).to.equal(true);
      }
    });

    it('falls back to the LID in the creds and leaves out what is unknown', () => {
      const creds = { ...initAuthCreds(), me: { id: ME, lid: ME_LID } };
      const event = connectedEvent({ id: ME }, creds);
      expectValid([event]);
      expect(event).to.deep.equal({ type: 'SessionConnected', data: { jid: ME_PN, phone: '5511900000001', lid: ME_LID_USER, business: false } });
    });
  });

  describe('close reasons', () => {
    // Each row is a close as Baileys' socket produces it (lib/Socket/socket.js and the stream
    // error / failure handlers), with the reason the session manager decides on.
    const cases: [string, Partial<ConnectionState>, string, number][] = [
      ['restart required after pairing', closed('Stream Errored (restart required)', DisconnectReason.restartRequired), 'restart_required', 515],
      ['keep-alive missed', closed('Connection was lost', DisconnectReason.connectionLost), 'connection_lost', 408],
      ['QR attempts ended', closed('QR refs attempts ended', DisconnectReason.timedOut), 'timed_out', 408],
      ['connect timeout', closed('Timed Out', DisconnectReason.timedOut), 'timed_out', 408],
      ['websocket closed', closed('Connection Terminated', DisconnectReason.connectionClosed), 'connection_closed', 428],
      ['service unavailable', closed('Stream Errored (unknown)', DisconnectReason.unavailableService), 'unavailable', 503],
      ['replaced by another session', closed('Stream Errored (conflict)', DisconnectReason.connectionReplaced), 'replaced', 440],
      ['logged out from the phone', closed('Connection Failure', DisconnectReason.loggedOut), 'logged_out', 401],
      ['bad session', closed('Bad MAC', DisconnectReason.badSession), 'bad_session', 500],
      ['multi-device mismatch', closed('Multi-device beta not joined', DisconnectReason.multideviceMismatch), 'multidevice_mismatch', 411],
      ['forbidden (banned)', closed('Connection Failure', DisconnectReason.forbidden), 'forbidden', 403],
      ['a refused client version (the server\'s failure reason 405)', closed('Connection Failure', 405), 'client_outdated', 405],
      ['a code Baileys does not name', closed('Connection Failure', 418), 'unknown', 418],
    ];

    for (const [name, update, reason, statusCode] of cases) {
      it(`${name}: ${statusCode} → ${reason}`, () => {
        expect(update.connection).to.equal('close');
        expect(disconnectReasonOf(update.lastDisconnect?.error)).to.deep.equal({ reason, statusCode });
      });
    }

    it('has a reason for every code of Baileys DisconnectReason, all of them ours', () => {
      const codes = Object.values(DisconnectReason).filter((v): v is number => typeof v === 'number');
      for (const code of codes) {
        const { reason } = disconnectReasonOf(new Boom('x', { statusCode: code }));
        expect(reason, String(code)).to.not.equal('unknown');
        expect(DISCONNECT_REASONS).to.include(reason);
      }
    });

    it('is unknown, without a code, when the close carries no Boom', () => {
      expect(disconnectReasonOf(undefined)).to.deep.equal({ reason: 'unknown' });
      expect(disconnectReasonOf(new Error('plain'))).to.deep.equal({ reason: 'unknown' });
    });
  });
});
