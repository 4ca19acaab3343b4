import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { open, type RootDatabase } from 'lmdb';
import type { Document } from '../../../src/infra/docstore/port.js';
import { openStorage } from '../../../src/infra/docstore/embedded/embedded-document-store.js';
import type { Storage, Written } from '../../../src/infra/docstore/embedded/storage.js';

/** The memo of committed documents that later write transactions read (Storage's `recent`). */
describe('document storage: what later writers read', () => {
  let dir: string;
  let root: RootDatabase;
  let storage: Storage;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'storage-recent-'));
    root = open({ path: dir });
    storage = openStorage(root);
  });
  afterEach(async () => {
    await root.close();
    await rm(dir, { recursive: true, force: true });
  });

  const write = (work: () => void): Written =>
    root.transactionSync(() => {
      storage.beginWrite();
      work();
      return storage.endWrite();
    });
  const readAsWriter = (): Document | undefined => {
    storage.beginWrite();
    try {
      return storage.getDoc('c', 'k');
    } finally {
      storage.endWrite();
    }
  };

  it('keeps the last writer of a key, whatever order the commits settle in', () => {
    const first = write(() => storage.insertDoc('c', { _id: 'k', v: 1 }));
    const second = write(() => storage.replaceDoc('c', { _id: 'k', v: 1 }, { _id: 'k', v: 2 }));
    expect(readAsWriter(), 'nothing settled yet: read from LMDB').to.deep.equal({ _id: 'k', v: 2 });
    storage.settle(second, true);
    storage.settle(first, true);
    expect(readAsWriter()).to.deep.equal({ _id: 'k', v: 2 });
  });

  it('serves nothing a failed commit wrote, and nothing while a write of the key is unsettled', () => {
    storage.settle(write(() => storage.insertDoc('c', { _id: 'k', v: 1 })), true);
    expect(readAsWriter()).to.deep.equal({ _id: 'k', v: 1 });
    const failed = write(() => storage.replaceDoc('c', { _id: 'k', v: 1 }, { _id: 'k', v: 5 }));
    expect(readAsWriter(), 'unsettled: read from LMDB').to.deep.equal({ _id: 'k', v: 5 });
    // (LMDB kept v: 5 here; a real failure would have rolled it back.) Reported as failed, the memo
    // takes nothing, so the next writer still reads LMDB.
    storage.settle(failed, false);
    expect(readAsWriter()).to.deep.equal({ _id: 'k', v: 5 });
    storage.settle(write(() => storage.replaceDoc('c', { _id: 'k', v: 5 }, { _id: 'k', v: 6 })), true);
    expect(readAsWriter()).to.deep.equal({ _id: 'k', v: 6 });
  });
});
