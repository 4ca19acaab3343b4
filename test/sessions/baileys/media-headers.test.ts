import { expect } from 'chai';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { loadConfig } from '../../../src/infra/config/config.js';
import { randomIds } from '../../../src/infra/ids.js';
import { MediaSource } from '../../../src/media/media-source.js';
import { chooseNetwork } from '../../../src/sessions/networks.js';

/** WhatsApp's media hosts expect WhatsApp Web's Origin on a download, as Baileys' own downloads send. */
describe('Baileys media downloads carry the headers WhatsApp media hosts expect', () => {
  it('the real network names https://web.whatsapp.com as Origin, and the media source sends it', async () => {
    const choice = await chooseNetwork(loadConfig({ MESSAGING_NETWORK: 'baileys' }), {
      docs: undefined as never,
      clock: { now: () => new Date() },
      ids: randomIds,
      logger: pino({ level: 'silent' }),
    });
    expect(choice.mediaHeaders).to.deep.equal({ Origin: 'https://web.whatsapp.com' });

    let seen: IncomingHttpHeaders | undefined;
    const server = createServer((req, res) => {
      seen = req.headers;
      res.writeHead(200, { 'content-length': '3' });
      res.end('abc');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const source = new MediaSource({ allowedHost: () => true, allowPrivate: true, ...(choice.mediaHeaders ? { headers: choice.mediaHeaders } : {}) });
    try {
      const bytes = await source.fetch(new URL(`http://127.0.0.1:${port}/m.enc`), 1024, () => () => undefined);
      expect(bytes).to.equal(3);
      expect(seen?.origin).to.equal('https://web.whatsapp.com');
    } finally {
      await source.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
