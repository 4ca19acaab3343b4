import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { LinkPreviews, parseHead } from '../../src/media/outgoing/link-preview.js';

describe('LinkPreviews: a text link previewed under the outbound-safety rules', function () {
  this.timeout(20_000);
  let server: Server;
  let base: string;
  const hits: string[] = [];
  let articleCompleted = false;
  let closed: (() => void) | undefined;

  before(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      switch (req.url) {
        case '/article':
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.write('<!doctype html><html><head><title>Plain title</title>');
          res.write('<meta property="og:title" content="Spring sale &amp; more"><meta name="description" content="Up to 50% off &#8212; this week">');
          res.write('</head><body>');
          // A page far past the size bound, written as fast as it is read: the fetcher stops at the
          // end of the head and closes, so the server never gets to the end of it.
          void (async () => {
            for (let i = 0; i < 512 && !res.destroyed; i++) {
              if (!res.write('x'.repeat(64 * 1024))) {
                await new Promise<void>((r) => {
                  const done = () => (res.off('drain', done), res.off('close', done), r());
                  res.on('drain', done).on('close', done);
                });
              }
            }
            if (!res.destroyed) res.end('</body></html>', () => (articleCompleted = true));
          })();
          res.once('close', () => closed?.());
          return;
        case '/title-only':
          return res.writeHead(200, { 'content-type': 'text/html' }).end("<html><head><title>\n  Just a   title </title></head><body>hi</body></html>");
        case '/image':
          return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(100));
        case '/slow':
          // Headers, then nothing: the time bound ends it.
          res.writeHead(200, { 'content-type': 'text/html' });
          return res.write('<html><head>');
        case '/loop':
          return res.writeHead(302, { location: '/loop' }).end();
        case '/moved':
          return res.writeHead(301, { location: '/title-only' }).end();
        default:
          return res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  describe('where private targets are allowed (development, tests)', () => {
    const previews = new LinkPreviews({ allowPrivate: true, timeoutMs: 1000, maxBytes: 64 * 1024 });
    after(() => previews.close());

    it("reads the Open Graph title and the description from the page's head, for the first link of the text", async () => {
      const preview = await previews.of(`Look: ${base}/article, then ${base}/title-only`);
      expect(preview).to.deep.equal({ url: `${base}/article`, title: 'Spring sale & more', description: 'Up to 50% off — this week' });
    });

    it("stops reading at the end of the head: the page's body is never taken whole", async () => {
      articleCompleted = false;
      const connectionClosed = new Promise<void>((r) => (closed = r));
      const preview = await previews.of(`${base}/article`);
      expect(preview?.title).to.equal('Spring sale & more');
      await connectionClosed;
      // 32 MB could not all be written into a connection nobody read.
      expect(articleCompleted).to.equal(false);
    });

    it('falls back to <title>, follows a redirect, and squeezes white space', async () => {
      expect(await previews.of(`${base}/moved`)).to.deep.equal({ url: `${base}/moved`, title: 'Just a title' });
    });

    it('gives no preview for a page that is not HTML, too slow, redirected without end, missing, or for a text without a link', async () => {
      const started = Date.now();
      expect(await previews.of(`${base}/slow`)).to.equal(null);
      expect(Date.now() - started).to.be.below(5000);
      expect(await previews.of(`${base}/image`)).to.equal(null);
      expect(await previews.of(`${base}/loop`)).to.equal(null);
      expect(hits.filter((h) => h === '/loop').length).to.equal(4);
      expect(await previews.of(`${base}/missing`)).to.equal(null);
      expect(await previews.of('no link here')).to.equal(null);
    });
  });

  describe('under the production rules (ALLOW_PRIVATE_TARGETS false)', () => {
    const previews = new LinkPreviews({ allowPrivate: false, timeoutMs: 1000 });
    after(() => previews.close());

    it('refuses http, loopback, private and metadata addresses without sending them a request', async () => {
      const port = (server.address() as { port: number }).port;
      const before = hits.length;
      for (const url of [
        `${base}/title-only`,
        `https://127.0.0.1:${port}/title-only`,
        `https://localhost:${port}/title-only`,
        'https://10.0.0.1/',
        'https://169.254.169.254/latest/meta-data/',
        'https://[::1]/',
      ]) {
        expect(await previews.of(`see ${url}`), url).to.equal(null);
      }
      expect(hits.length).to.equal(before);
    });
  });

  it('parses only what a head declares, never more than the bounds', () => {
    expect(parseHead("<meta content='Quoted &quot;x&quot;' property='og:title'>")).to.deep.equal({ title: 'Quoted "x"' });
    expect(parseHead('<meta name="description" content="no title">')).to.equal(null);
    expect(parseHead(`<title>${'t'.repeat(1000)}</title>`)?.title.length).to.equal(256);
  });
});
