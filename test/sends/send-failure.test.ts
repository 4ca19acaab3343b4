import { expect } from 'chai';
import { Boom } from '@hapi/boom';
import { DomainError, invalidInput } from '../../src/domain/errors.js';
import { sendFailure } from '../../src/commands/send-pacing/send-failure.js';
import { NotConnectedError } from '../../src/sessions/port.js';

/** Which send failures are final at once and which are retried, and the code each is told with. */
describe('send failures: final or for now', () => {
  it('is final for a refusal that cannot change, with the status the API answers for it', () => {
    expect(sendFailure(invalidInput('phone', '123@lid is not on WhatsApp'))).to.deep.equal({ final: true, code: 400, reason: 'phone: 123@lid is not on WhatsApp' });
    expect(sendFailure(new DomainError('not_found', 'no such group'))).to.include({ final: true, code: 404 });
    expect(sendFailure(new DomainError('payload_too_large', 'too big'))).to.include({ final: true, code: 413 });
    // The network's own refusals (Baileys' Boom errors): 463, 479, bad request.
    for (const code of [400, 403, 404, 463, 479]) expect(sendFailure(new Boom('refused', { statusCode: code })), `${code}`).to.include({ final: true, code });
  });

  it('retries what may pass: timeouts, a closed connection, the session down, overload, the unknown', () => {
    expect(sendFailure(new Boom('Timed Out', { statusCode: 408 }))).to.include({ final: false, code: 408 });
    expect(sendFailure(new Boom('Connection Closed', { statusCode: 428 }))).to.include({ final: false, code: 428 });
    expect(sendFailure(new Boom('rate-overlimit', { statusCode: 429 }))).to.include({ final: false, code: 429 });
    expect(sendFailure(new Boom('internal', { statusCode: 500 }))).to.include({ final: false, code: 500 });
    expect(sendFailure(new NotConnectedError('closed'))).to.include({ final: false, code: 409 });
    expect(sendFailure(new DomainError('not_connected', 'down'))).to.include({ final: false, code: 409 });
    expect(sendFailure(new DomainError('upstream_failed', 'refused the request'))).to.include({ final: false, code: 502 });
    expect(sendFailure(new Error('socket hang up'))).to.deep.equal({ final: false, code: 502, reason: 'socket hang up' });
  });
});
