import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { DomainError } from '../../src/domain/errors.js';
import { BlockedAddressError, publicOnlyLookup } from '../../src/infra/http/public-lookup.js';
import { MediaSource } from '../../src/media/media-source.js';
import { waitFor } from '../support/sandbox.js';
import { tcpBufferMaxBytes } from '../support/tcp-buffers.js';

/** A media host whose answers the test writes; it reports how many body bytes it got out. */
async function host(answer: (res: ServerResponse, sent: { bytes: number; closed: boolean }) => void) {
  const sent = { bytes: 0, closed: false };
  const server: Server = createServer((_req, res) => {
    res.on('close', () => (sent.closed = true));
    answer(res, sent);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/media.enc`), sent, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const anyHost = () => true;
const failure = async (promise: Promise<unknown>) => promise.then(() => expect.fail('expected a refusal'), (err: unknown) => err as DomainError);

describe('MediaSource', () => {
  it('cuts a chunked download once it passes the cap, without reading the rest', async () => {
    // More than the kernel's buffers can hold between the host and the reader (tens of MB where
    // TCP autotuning may grow that far), so "stopped before the end" means the reader hung up.
    const inKernel = tcpBufferMaxBytes();
    const total = 2 * inKernel + 64 * 1024 * 1024;
    const h = await host((res, sent) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 7);
      const pump = () => {
        while (sent.bytes < total && !sent.closed) {
          sent.bytes += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const source = new MediaSource({ allowedHost: anyHost, allowPrivate: true });
    try {
      let received = 0;
      const err = await failure(source.fetch(h.url, 1024 * 1024, () => (c) => (received += c.length)));
      expect(err).to.be.instanceOf(DomainError);
      expect(err.type).to.equal('payload_too_large');
      expect(received).to.be.at.most(1024 * 1024);
      await waitFor(() => h.sent.closed, 'the host sees the reader hang up');
      // What was read (the cap) plus what the kernel's buffers held, and far from the end.
      expect(h.sent.bytes, 'the host stopped far before the end').to.be.at.most(1024 * 1024 + inKernel + 1024 * 1024);
    } finally {
      await source.close();
      await h.close();
    }
  });

  it('refuses a Content-Length over the cap before reading any body', async () => {
    const h = await host((res) => {
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) });
      res.write(Buffer.alloc(1024));
      // ...and never more: a reader waiting for the body would hang.
    });
    const source = new MediaSource({ allowedHost: anyHost, allowPrivate: true });
    try {
      let chunks = 0;
      const err = await failure(source.fetch(h.url, 1024 * 1024, () => () => chunks++));
      expect(err.type).to.equal('payload_too_large');
      expect(chunks).to.equal(0);
    } finally {
      await source.close();
      await h.close();
    }
  });

  it('hands over every byte below the cap, and counts them', async () => {
    const body = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
    const h = await host((res) => res.end(body));
    const source = new MediaSource({ allowedHost: anyHost, allowPrivate: true });
    try {
      const parts: Buffer[] = [];
      expect(await source.fetch(h.url, body.length, () => (c) => parts.push(c))).to.equal(body.length);
      expect(Buffer.concat(parts).equals(body)).to.equal(true);
    } finally {
      await source.close();
      await h.close();
    }
  });

  it('answers 502 for a redirect or an error status, and does not follow it', async () => {
    let hits = 0;
    const h = await host((res) => {
      hits++;
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end();
    });
    const source = new MediaSource({ allowedHost: anyHost, allowPrivate: true });
    try {
      const err = await failure(source.fetch(h.url, 1000, () => () => undefined));
      expect(err.type).to.equal('upstream_failed');
      expect(hits).to.equal(1);
    } finally {
      await source.close();
      await h.close();
    }
  });

  it('fetches only allowlisted hosts, and only public https ones without ALLOW_PRIVATE_TARGETS', async () => {
    const strict = new MediaSource({ allowedHost: (url) => url.hostname.endsWith('.whatsapp.net') || url.hostname === '127.0.0.1', allowPrivate: false });
    try {
      for (const url of ['https://evil.example.com/x', 'http://mmg.whatsapp.net/x', 'https://127.0.0.1/x']) {
        const err = await failure(strict.fetch(new URL(url), 1000, () => () => undefined));
        expect(err.type, url).to.equal('invalid_input');
        expect(err.details?.[0]?.field).to.equal('url');
      }
    } finally {
      await strict.close();
    }
  });

  it('checks the resolved address, not only the name', async () => {
    const answer = await new Promise<{ err: NodeJS.ErrnoException | null }>((resolve) =>
      publicOnlyLookup('localhost', { all: true }, (err) => resolve({ err })),
    );
    expect(answer.err).to.be.instanceOf(BlockedAddressError);
  });
});
