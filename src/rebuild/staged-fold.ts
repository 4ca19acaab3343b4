import { applyUpdate, replacementId, upsertDocument } from '../infra/docstore/embedded/update-apply.js';
import { compileMatcher } from '../infra/docstore/embedded/simple-filter.js';
import type { Document, Filter, WriteOp } from '../infra/docstore/port.js';

/**
 * A read model folded in memory during a rebuild, with the document store's semantics (MongoDB's
 * update operators, as the embedded adapter applies them): a counter bumped by a million events
 * costs a million map updates and one write, not a million transactions. Only the final documents
 * are written, once, into the fresh collections.
 */
export class StagedFold {
  private readonly collections = new Map<string, Map<string, Document>>();

  apply(op: WriteOp): void {
    const docs = this.collection(op.collection);
    switch (op.op) {
      case 'insertOne':
        if (docs.has(op.doc._id)) throw new Error(`duplicate _id ${op.doc._id} in ${op.collection}`);
        docs.set(op.doc._id, op.doc);
        return;
      case 'replaceOne': {
        const current = this.first(docs, op.filter);
        if (current) docs.set(current._id, { ...op.doc, _id: current._id });
        else if (op.upsert) {
          const _id = replacementId(op.doc, op.filter);
          docs.set(_id, { ...op.doc, _id });
        }
        return;
      }
      case 'updateOne': {
        const current = this.first(docs, op.filter);
        if (current) docs.set(current._id, applyUpdate(current, op.update).doc);
        else if (op.upsert) {
          const doc = upsertDocument(op.filter, op.update);
          docs.set(doc._id, doc);
        }
        return;
      }
      case 'updateMany':
        for (const doc of this.matching(docs, op.filter)) docs.set(doc._id, applyUpdate(doc, op.update).doc);
        return;
      case 'deleteOne': {
        const current = this.first(docs, op.filter);
        if (current) docs.delete(current._id);
        return;
      }
      case 'deleteMany':
        for (const doc of this.matching(docs, op.filter)) docs.delete(doc._id);
        return;
    }
  }

  /** The folded documents of `collection` matching `filter`, for a projection that reads (ReadingApply). */
  find(collection: string, filter: Filter): Document[] {
    return this.matching(this.collection(collection), filter);
  }

  /** The folded documents of each collection, to insert into fresh ones. */
  *documents(): Generator<[string, Document]> {
    for (const [name, docs] of this.collections) for (const doc of docs.values()) yield [name, doc];
  }

  private collection(name: string): Map<string, Document> {
    let docs = this.collections.get(name);
    if (!docs) this.collections.set(name, (docs = new Map()));
    return docs;
  }

  /** By _id when the filter names one (every hot write does), else by scanning. */
  private first(docs: Map<string, Document>, filter: Filter): Document | undefined {
    if (typeof filter._id === 'string') {
      const doc = docs.get(filter._id);
      if (!doc) return undefined;
      return Object.keys(filter).length === 1 || compileMatcher(filter)(doc) ? doc : undefined;
    }
    return this.matching(docs, filter)[0];
  }

  private matching(docs: Map<string, Document>, filter: Filter): Document[] {
    if (typeof filter._id === 'string') {
      const doc = this.first(docs, filter);
      return doc ? [doc] : [];
    }
    const test = compileMatcher(filter);
    return [...docs.values()].filter((d) => test(d));
  }
}
