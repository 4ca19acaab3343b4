import { expect } from 'chai';
import { AxiosPost } from '../../src/webhooks/dispatch/post/axios-post.js';
import { WorkerPost, type StallWatch } from '../../src/webhooks/dispatch/post/worker-post.js';
import { POST_SETTINGS, webhookPostContract } from '../contract/webhook-post.contract.js';
import { waitFor } from '../support/sandbox.js';
import { Receiver } from './support/receiver.js';

webhookPostContract('axios over undici, in process', (settings) => new AxiosPost(settings));
webhookPostContract('on a worker thread', (settings) => new WorkerPost(settings));

describe('WorkerPost', function () {
  this.timeout(10_000);
  let rx: Receiver;
  let post: WorkerPost;
  let lost: string[];
  const request = { url: '', id: 'evt_1', timestampS: 1, body: '{}', key: Buffer.alloc(32) };
  /** A WorkerPost that reports its lost threads in `lost`, and a receiver that hangs until told otherwise. */
  const start = async (settings = POST_SETTINGS, stall?: StallWatch) => {
    rx = await new Receiver().start();
    rx.respond = () => 'hang';
    request.url = rx.url;
    lost = [];
    post = new WorkerPost(settings, (reason) => lost.push(reason), stall);
  };
  afterEach(async () => {
    await post.close();
    await rx?.stop();
  });

  it('answers what a dead thread had in flight as failed, and starts a new thread for the next request', async () => {
    await start();
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
  });

  it('answers failed what a thread that stopped answering holds, ends it, and goes on with a new one', async () => {
    // The thread's own timeout is far off: only the watch can answer the hanging request.
    await start({ ...POST_SETTINGS, timeoutMs: 60_000 }, { everyMs: 50, afterMs: 1500 });
    const answer = post.send(request, new AbortController().signal);
    // The stall clock starts when the thread says it is ready, not at the send: loading the
    // thread through tsx takes a varying while on a loaded machine. Time from that message.
    let readyAt: number | undefined;
    (Reflect.get(post, 'worker') as { on(event: 'message', listener: (m: object) => void): void }).on('message', (m) => {
      if ('ready' in m) readyAt = performance.now();
    });
    const got = await answer;
    const waited = performance.now() - readyAt!;
    expect(got).to.include({ kind: 'failed' });
    expect((got as { message: string }).message).to.match(/stopped answering/);
    expect(waited).to.be.within(1500, 4000);
    expect(lost).to.deep.equal(['it stopped answering']);

    rx.respond = () => 200;
    expect(await post.send(request, new AbortController().signal)).to.include({ kind: 'answered', status: 200 });
  });

  it('answers failed after close, without a thread', async () => {
    await start();
    rx.respond = () => 200;
    await post.send(request, new AbortController().signal);
    await post.close();
    // Closing ends the thread on purpose: not a loss to report.
    expect(lost).to.deep.equal([]);
    const answer = await post.send(request, new AbortController().signal);
    expect(answer).to.include({ kind: 'failed' });
    expect(Reflect.get(post, 'worker')).to.equal(undefined);
  });
});
