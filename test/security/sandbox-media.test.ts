/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { pairedInstance, phoneSends, recorded } from '../support/chats.js';
import { expectError } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { downloadBody, newPhone } from '../support/sandbox.js';

describe('security: sandbox media with the default outbound policy (finding f)', () => {
  let me: { id: string; phone: string };
  let media: any;
  const plain = randomBytes(2048);

  // The defaults an integrator trying the sandbox gets: http PUBLIC_URL, private targets refused.
  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox', ALLOW_PRIVATE_TARGETS: 'false' });
  before(async () => {
    me = await pairedInstance(t, owner);
    const sender = await newPhone(t.api, owner);
    const id = await phoneSends(t, owner, sender.phone, me.phone, { media: { kind: 'image', mimetype: 'image/jpeg', data_base64: plain.toString('base64') } });
    media = (await recorded(t, me.id, 'MessageReceived', (d) => d.message.id === id)).message.media;
  });

  const download = (body: unknown) => t.api('POST', `/instances/${me.id}/chat/downloadimage`, { token: owner.jwt, body });

  it("downloads the sandbox's own media over http PUBLIC_URL", async () => {
    expect(media.url.startsWith('http://127.0.0.1:')).to.equal(true);
    const res = await download(downloadBody(media));
    expect(res.status, res.text).to.equal(200);
    const data = res.body.data.data as string;
    expect(Buffer.from(data.slice(data.indexOf(',') + 1), 'base64').equals(plain)).to.equal(true);
  });

  it('fetches nothing else: other paths of the gateway, other ports, other hosts', async () => {
    const own = new URL(media.url);
    const elsewhere = [
      `${own.origin}/instances/${me.id}`,
      `${own.origin}/sandbox/mediax/${own.pathname.split('/').pop()}`,
      `${own.origin}/sandbox/media/../../account`,
      `http://127.0.0.1:${Number(own.port) + 1}${own.pathname}`,
      `http://localhost:${own.port}${own.pathname}`,
      `http://169.254.169.254${own.pathname}`,
      `https://mmg.whatsapp.net${own.pathname}`,
    ];
    for (const url of elsewhere) expectError(await download({ ...downloadBody(media), url }), 400, 'invalid_input');
  });
});
