import { expect } from 'chai';
import { connect } from 'node:net';
import { capturedLogs, WARN } from '../support/captured-logs.js';
import { newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';

/** Sends an upgrade request as raw bytes and answers the status line's code (the socket is then closed). */
function rawUpgrade(url: string, path: string, headers: Record<string, string>): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (status) {
        socket.destroy();
        resolve(Number(status[1]));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(/^HTTP\/1\.1 (\d{3})/.exec(answer) ? Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)![1]) : -1));
    const lines = [`GET ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='];
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

describe('realtime upgrades that cannot become a stream', function () {
  this.timeout(30_000);
  const logs = capturedLogs();
  const { t, owner } = useGateway({ REALTIME_MAX_STREAMS_PER_ACCOUNT: '3' }, { logger: logs.logger });

  it('answers 400 to a path with bad percent-encoding, and logs no error for it', async () => {
    const before = logs.lines.length;
    expect(await rawUpgrade(t.gateway.url, `/instances/%ZZ/events/ws?access_token=${owner.jwt}`, { 'Sec-WebSocket-Version': '13' })).to.equal(400);
    expect(await rawUpgrade(t.gateway.url, '/instances/%E0%A4%A/events/ws', { 'Sec-WebSocket-Version': '13' })).to.equal(400);
    expect(logs.lines.slice(before).filter((l) => l.level >= WARN)).to.deep.equal([]);
  });

  it('does not count handshakes that fail against the per-account stream cap', async () => {
    const { id } = await newInstance(t.api, owner);
    const path = `/instances/${id}/events/ws?access_token=${owner.jwt}`;
    // Four times the cap of handshakes ws refuses after the gateway accepted the credential.
    for (let i = 0; i < 12; i++) expect(await rawUpgrade(t.gateway.url, path, { 'Sec-WebSocket-Version': '99' })).to.equal(400);
    // Each socket is closed by now; a valid upgrade of the same account is a stream.
    expect(await rawUpgrade(t.gateway.url, path, { 'Sec-WebSocket-Version': '13' })).to.equal(101);
    expect(t.gateway.realtime.stats().streams).to.be.at.most(1);
  });
});
