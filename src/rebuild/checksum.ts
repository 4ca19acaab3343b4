import { createHash, type Hash } from 'node:crypto';
import type { Document, DocumentStore } from '../infra/docstore/port.js';
import { APPLIED } from '../projections/idempotent-writes.js';

/** Documents read per query: a model of millions is hashed in pages, never held whole. */
const PAGE = 5_000;

/**
 * Keys sorted at every depth (`leaveOut` skipped at the top, without copying the document): two
 * stores that hold the same documents print the same text.
 * Written with loops rather than entries, map and join: a rebuild hashes every document of a
 * model twice (before and after), and the intermediate arrays were most of that time.
 */
function canonical(value: unknown, leaveOut?: string): string {
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + canonical(value[i]);
    return `${out}]`;
  }
  if (value !== null && typeof value === 'object') {
    // Own enumerable string keys, in code-unit order: what Object.entries and a < b sorted.
    const keys = Object.keys(value).sort();
    let out = '{';
    let first = true;
    for (const key of keys) {
      if (key === leaveOut) continue;
      out += `${first ? '' : ','}${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`;
      first = false;
    }
    return `${out}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function hashDocument(hash: Hash, doc: Document): void {
  // The runner's marks of applied writes (MongoDB, see idempotent-writes.ts) are its
  // bookkeeping, not the model: a rebuilt document has none until the next write.
  hash.update(canonical(doc, APPLIED));
  hash.update('\n');
}

/** SHA-256 over the collections' documents in _id order, with their count. */
export async function checksum(docs: DocumentStore, collections: readonly string[]): Promise<{ sha256: string; documents: number }> {
  const hash = createHash('sha256');
  let documents = 0;
  for (const name of collections) {
    hash.update(`\0${name}\0`);
    const collection = docs.collection(name);
    let after: string | undefined;
    for (;;) {
      const page = await collection.find(after === undefined ? {} : { _id: { $gt: after } }, { sort: { _id: 1 }, limit: PAGE });
      for (const doc of page) hashDocument(hash, doc);
      documents += page.length;
      if (page.length < PAGE) break;
      after = (page[page.length - 1] as Document)._id;
    }
  }
  return { sha256: hash.digest('hex'), documents };
}
