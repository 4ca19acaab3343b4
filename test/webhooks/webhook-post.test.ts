import { expect } from 'chai';
import { AxiosPost } from '../../src/webhooks/dispatch/axios-post.js';
import { WorkerPost } from '../../src/webhooks/dispatch/worker-post.js';
import { POST_SETTINGS, webhookPostContract } from '../contract/webhook-post.contract.js';
import { waitFor } from '../support/sandbox.js';
import { Receiver } from './support/receiver.js';

webhookPostContract('axios over undici, in process', (settings) => new AxiosPost(settings));
webhookPostContract('on a worker thread', (settings) => new WorkerPost(settings));

describe('WorkerPost', function () {
  this.timeout(10_000);

  it('answers what a dead thread had in flight as failed, and starts a new thread for the next request', async () => {
    const rx = await new Receiver().start();
    const lost: string[] = [];
    const post = new WorkerPost(POST_SETTINGS, (reason) => lost.push(reason));
    try {
      rx.respond = () => 'hang';
      const request = { url: rx.url, id: 'evt_1', timestampS: 1, body: '{}', key: Buffer.alloc(32) };
      const inFlight = post.send(request, new AbortController().signal);
      await waitFor(() => rx.requests === 1, 'the request in flight');
      // As an out-of-memory kill or a native crash would end it.
      await (Reflect.get(post, 'worker') as { terminate(): Promise<number> }).terminate();
      const answer = await inFlight;
      expect(answer).to.include({ kind: 'failed' });
      expect((answer as { message: string }).message).to.match(/thread stopped/);
      expect(lost).to.have.length(1);

      rx.respond = () => 200;
      expect(await post.send(request, new AbortController().signal)).to.include({ kind: 'answered', status: 200 });
    } finally {
      await post.close();
      await rx.stop();
    }
  });

  it('answers failed what a thread that stopped answering holds, ends it, and goes on with a new one', async () => {
    const rx = await new Receiver().start();
    const lost: string[] = [];
    // The thread's own timeout is far off: only the watch can answer the hanging request.
    const post = new WorkerPost({ ...POST_SETTINGS, timeoutMs: 60_000 }, (reason) => lost.push(reason), { everyMs: 50, afterMs: 1500 });
    try {
      rx.respond = () => 'hang';
      const request = { url: rx.url, id: 'evt_1', timestampS: 1, body: '{}', key: Buffer.alloc(32) };
      const started = Date.now();
      const answer = await post.send(request, new AbortController().signal);
      expect(answer).to.include({ kind: 'failed' });
      expect((answer as { message: string }).message).to.match(/stopped answering/);
      expect(Date.now() - started).to.be.within(1450, 5000);
      expect(lost).to.deep.equal(['it stopped answering']);

      rx.respond = () => 200;
      expect(await post.send(request, new AbortController().signal)).to.include({ kind: 'answered', status: 200 });
    } finally {
      await post.close();
      await rx.stop();
    }
  });

  it('answers failed after close, without a thread', async () => {
    const lost: string[] = [];
    const post = new WorkerPost(POST_SETTINGS, (reason) => lost.push(reason));
    await post.send({ url: 'http://127.0.0.1:9/', id: 'evt_0', timestampS: 1, body: '{}', key: Buffer.alloc(32) }, new AbortController().signal);
    await post.close();
    // Closing ends the thread on purpose: not a loss to report.
    expect(lost).to.deep.equal([]);
    const answer = await post.send({ url: 'http://127.0.0.1:9/', id: 'evt_1', timestampS: 1, body: '{}', key: Buffer.alloc(32) }, new AbortController().signal);
    expect(answer).to.include({ kind: 'failed' });
    expect(Reflect.get(post, 'worker')).to.equal(undefined);
  });
});
