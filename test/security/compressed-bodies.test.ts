import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import { capturedLogs, WARN } from '../support/captured-logs.js';
import { expectError, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';

describe('security: compressed request bodies', () => {
  const logs = capturedLogs();
  const { t, owner } = useGateway({}, { logger: logs.logger });

  async function post(path: string, encoding: string, bytes: Uint8Array, token?: string) {
    const res = await fetch(t.gateway.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': encoding, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: bytes,
    });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as unknown, headers: res.headers, text };
  }

  it('answers 400 invalid_input to bytes that are not what content-encoding says, on open and authenticated routes, logging no warning', async () => {
    const { id } = await newInstance(t.api, owner);
    const garbage = new TextEncoder().encode('{"this is": "not compressed"}');
    const before = logs.lines.length;
    for (const encoding of ['gzip', 'deflate', 'br']) {
      expectError(await post('/auth/signup', encoding, garbage), 400, 'invalid_input');
      expectError(await post('/auth/login', encoding, garbage), 400, 'invalid_input');
      expectError(await post(`/instances/${id}/webhook`, encoding, garbage, owner.jwt), 400, 'invalid_input');
    }
    // A truncated gzip stream is as malformed as no gzip at all.
    const truncated = gzipSync(Buffer.from(JSON.stringify({ email: 'a@example.com', password: 'correct horse battery' }))).subarray(0, 12);
    expectError(await post('/auth/login', 'gzip', truncated), 400, 'invalid_input');
    const loud = logs.lines.slice(before).filter((l) => l.level >= WARN);
    expect(loud, JSON.stringify(loud)).to.deep.equal([]);
  });

  it('still reads a well-formed gzip body', async () => {
    const body = gzipSync(Buffer.from(JSON.stringify({ email: owner.email, password: owner.password })));
    const res = await post('/auth/login', 'gzip', body);
    expect(res.status, res.text).to.equal(200);
  });
});
