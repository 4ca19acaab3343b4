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
