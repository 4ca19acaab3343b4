import { expect } from 'chai';
import { sign, signedHeaders, signingKey } from '../../src/webhooks/signing.js';

describe('webhook signing (Standard Webhooks)', () => {
  it('matches the Standard Webhooks reference vector', () => {
    // The example from the Standard Webhooks specification and its reference libraries.
    const key = signingKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    const body = '{"test": 2432232314}';
    expect(sign(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body)).to.equal('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('puts id, timestamp and signature in the three headers', () => {
    const key = signingKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    const headers = signedHeaders(key, 'evt_1', 1700000000, '{}');
    expect(headers['webhook-id']).to.equal('evt_1');
    expect(headers['webhook-timestamp']).to.equal('1700000000');
    expect(headers['webhook-signature']).to.equal(sign(key, 'evt_1', 1700000000, '{}'));
    expect(sign(key, 'evt_1', 1700000001, '{}')).to.not.equal(headers['webhook-signature']);
  });
});
