import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import type { PostSettings } from '../../src/webhooks/dispatch/post/axios-post.js';
import type { PostRequest, WebhookPost } from '../../src/webhooks/dispatch/post/port.js';
import { Receiver, verifies } from '../webhooks/support/receiver.js';
import { waitFor } from '../support/sandbox.js';

/**
 * Settings the adapters under test are made with: private targets allowed, and a time limit far
 * above a round trip to the in-process receiver even on a loaded CI machine (a GC pause or CPU
 * starvation of 300 ms turned answers into failures). The time-limit tests make their own adapter
 * with SHORT_TIMEOUT_MS.
 */
export const POST_SETTINGS: PostSettings = { allowPrivate: true, perHost: 4, timeoutMs: 5000 };
/** The time limit the tests that measure it use: short, so their bounds tell it from a hang. */
const SHORT_TIMEOUT_MS = 300;

/** The behaviour every WebhookPost adapter must have. */
export function webhookPostContract(name: string, make: (settings: PostSettings) => WebhookPost): void {
  describe(`WebhookPost contract: ${name}`, function () {
    this.timeout(10_000);
    let post: WebhookPost;
    let rx: Receiver;
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const nowS = () => Math.floor(Date.now() / 1000);
    const request = (over: Partial<PostRequest> = {}): PostRequest => ({
      url: rx.url,
      id: 'evt_0123456789abcdef0123456789abcdef',
      timestampS: nowS(),
      body: JSON.stringify({ type: 'Message', text: 'olá 👋' }),
      key,
      ...over,
    });

    beforeEach(async () => {
      rx = await new Receiver().start();
      post = make(POST_SETTINGS);
    });
    afterEach(async () => {
      await post.close();
      await rx.stop();
    });

    it('POSTs the exact body with Standard Webhooks headers that verify, and answers the status', async () => {
      rx.respond = () => 204;
      const sent = request();
      expect(await post.send(sent, new AbortController().signal)).to.deep.equal({ kind: 'answered', status: 204, excerpt: '' });
      const [got] = rx.received;
      expect(got!.raw).to.equal(sent.body);
      expect(got!.headers).to.include({ 'content-type': 'application/json', 'webhook-id': sent.id, 'webhook-timestamp': String(sent.timestampS) });
      expect(verifies(secret, got!)).to.equal(true);
      expect(verifies(`whsec_${randomBytes(24).toString('base64')}`, got!)).to.equal(false);
    });

    it('keeps the start of an error answer, whitespace folded', async () => {
      rx.respond = () => ({ status: 503, body: `busy\n\n  ${'x'.repeat(500)}` });
      const answer = await post.send(request(), new AbortController().signal);
      expect(answer).to.include({ kind: 'answered', status: 503 });
      const excerpt = (answer as { excerpt: string }).excerpt;
      expect(excerpt.startsWith('busy x')).to.equal(true);
      expect(excerpt.length).to.be.at.most(200);
    });

    it('passes a Retry-After header on', async () => {
      const server = await rawServer((socket) => socket.write('HTTP/1.1 429 Too Many Requests\r\nretry-after: 7\r\ncontent-length: 0\r\n\r\n'));
      try {
        expect(await post.send(request({ url: server.url }), new AbortController().signal)).to.deep.equal({ kind: 'answered', status: 429, excerpt: '', retryAfter: '7' });
      } finally {
        await server.close();
      }
    });

    it('cuts off an answer whose body trickles in past the time limit, and keeps its status', async () => {
      const server = await rawServer((socket) => {
        socket.write('HTTP/1.1 500 Internal Server Error\r\ntransfer-encoding: chunked\r\n\r\n');
        const timer = setInterval(() => socket.write('1\r\nx\r\n'), 50);
        socket.on('close', () => clearInterval(timer));
      });
      const timed = make({ ...POST_SETTINGS, timeoutMs: SHORT_TIMEOUT_MS });
      try {
        const started = Date.now();
        const answer = await timed.send(request({ url: server.url }), new AbortController().signal);
        expect(answer).to.include({ kind: 'answered', status: 500 });
        expect(Date.now() - started).to.be.below(3000);
      } finally {
        await timed.close();
        await server.close();
      }
    });

    it('answers failed, with the code, when nothing listens', async () => {
      const url = rx.url;
      await rx.stop();
      const answer = await post.send(request({ url }), new AbortController().signal);
      expect(answer).to.include({ kind: 'failed', code: 'ECONNREFUSED' });
    });

    it('refuses at connection time, unless private targets are allowed, a name that resolves to a private address', async () => {
      const guarded = make({ ...POST_SETTINGS, allowPrivate: false });
      try {
        // `localhost` resolves to loopback: the check runs on the address dialled, after DNS.
        const url = rx.url.replace('127.0.0.1', 'localhost');
        expect(await guarded.send(request({ url }), new AbortController().signal)).to.include({ kind: 'failed', code: 'EBLOCKEDADDRESS' });
        expect(rx.requests).to.equal(0);
        expect(await post.send(request({ url }), new AbortController().signal)).to.include({ kind: 'answered', status: 200 });
      } finally {
        await guarded.close();
      }
    });

    it('answers failed when the receiver does not answer in time', async () => {
      const timed = make({ ...POST_SETTINGS, timeoutMs: SHORT_TIMEOUT_MS });
      try {
        // Up and connected first, so only the time limit is measured.
        await timed.send(request(), new AbortController().signal);
        rx.respond = () => 'hang';
        const started = Date.now();
        const answer = await timed.send(request(), new AbortController().signal);
        expect(answer.kind).to.equal('failed');
        expect((answer as { code?: string }).code).to.be.oneOf(['ECONNABORTED', 'ETIMEDOUT']);
        expect(Date.now() - started).to.be.within(250, 2000);
      } finally {
        await timed.close();
      }
    });

    it('answers aborted when the signal fires in flight, or had fired already', async () => {
      rx.respond = () => 'hang';
      const abort = new AbortController();
      const answer = post.send(request(), abort.signal);
      await waitFor(() => rx.requests === 1, 'the request in flight');
      abort.abort();
      expect(await answer).to.deep.equal({ kind: 'aborted' });
      expect(await post.send(request(), abort.signal)).to.deep.equal({ kind: 'aborted' });
      // Another caller's request is not touched by that signal.
      rx.respond = () => 200;
      expect(await post.send(request(), new AbortController().signal)).to.include({ kind: 'answered', status: 200 });
    });

    it('never sends a request whose signal fires right after it was asked for', async () => {
      const abort = new AbortController();
      const answer = post.send(request(), abort.signal);
      abort.abort();
      expect(await answer).to.deep.equal({ kind: 'aborted' });
      // A request that did go out shows up at once: nothing came.
      expect(await post.send(request(), new AbortController().signal)).to.include({ kind: 'answered', status: 200 });
      expect(rx.requests).to.equal(1);
    });

    it('keeps connections alive between requests', async () => {
      for (let i = 0; i < 20; i++) await post.send(request({ id: `evt_${i}` }), new AbortController().signal);
      expect(rx.received).to.have.length(20);
      // The pool may open a second connection while the first one's answer is being finished.
      expect(rx.sockets).to.be.at.most(2);
    });
  });
}

/** A TCP server that answers each request (its first bytes) as `answer` writes it. */
async function rawServer(answer: (socket: Socket) => void): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.once('data', () => answer(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
