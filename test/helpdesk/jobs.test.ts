import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { conversationKey, ensureBridgeIndexes, HELPDESK_JOBS, type JobDoc } from '../../src/helpdesk/bridge/jobs.js';
import { openDocumentStore } from '../../src/infra/docstore/open-document-store.js';
import type { DocumentStore } from '../../src/infra/docstore/port.js';
import { testBackendsFor } from '../support/gateway.js';

describe('helpdesk jobs: the conversation key of jobs written before it', function () {
  this.timeout(30_000);
  let dir: string;
  let docs: DocumentStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-helpdesk-jobs-'));
    docs = await openDocumentStore({ DATA_DIR: dir, MONGODB_URL: (await testBackendsFor(dir)).MONGODB_URL ?? '' });
  });
  after(async () => {
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('gives every pending job written without a key its key at start, so a seek finds its conversation', async () => {
    const job = (id: string, pos: number, state: JobDoc['state'], work: JobDoc['work']): JobDoc => ({ _id: id, instance_id: 'i1', pos, state, attempts: 0, due_ms: 0, last_error: null, work });
    const jobs = docs.collection<JobDoc>(HELPDESK_JOBS);
    await jobs.insertMany([
      job('seen', 1, 'pending', { kind: 'seen', chat: '5511@s.whatsapp.net', message_ids: ['m1'] }),
      job('import', 2, 'pending', { kind: 'import', stream: 'session-i1', revision: 3 }),
      job('done', 3, 'done', { kind: 'seen', chat: '5522@s.whatsapp.net', message_ids: ['m2'] }),
    ]);
    await ensureBridgeIndexes(docs);
    const keys = Object.fromEntries((await jobs.find({})).map((j) => [j._id, j.conversation_key]));
    expect(keys).to.deep.equal({ seen: 'i1:in:5511@s.whatsapp.net', import: 'i1:in:', done: undefined });
    const [first] = await jobs.find({ state: 'pending', conversation_key: { $gt: 'i1:in:' } }, { sort: { conversation_key: 1, pos: 1 }, limit: 1 });
    expect(first?._id).to.equal('seen');
    expect(conversationKey({ instance_id: 'i1', work: { kind: 'seen', chat: 'x', message_ids: [] } })).to.equal('i1:in:x');
  });
});
