import { applySimpleInPlace, applyUpdate, replacementId, upsertDocument } from '../infra/docstore/embedded/update-apply.js';
import { DuplicateKeyError, type Document, type Filter, type Update, type WriteOp } from '../infra/docstore/port.js';
import { FoldedCollection } from './folded-collection.js';

/**
 * A read model folded in memory during a rebuild, with the document store's semantics (MongoDB's
 * update operators, as the embedded adapter applies them): a counter bumped by a million events
 * costs a million map updates and one write, not a million transactions. Only the final documents
 * are written, once, into the fresh collections.
 */
export class StagedFold {
  private readonly folded = new Map<string, FoldedCollection>();

  apply(op: WriteOp): void {
    const docs = this.collection(op.collection);
    switch (op.op) {
      case 'insertOne':
        this.insert(op.collection, docs, op.doc);
        return;
      case 'replaceOne': {
        const [current] = docs.matching(op.filter);
        if (current) docs.set({ ...op.doc, _id: current._id });
        else if (op.upsert) this.insert(op.collection, docs, { ...op.doc, _id: replacementId(op.doc, op.filter) });
        return;
      }
      case 'updateOne': {
        const [current] = docs.matching(op.filter);
        if (current) this.update(docs, current, op.update);
        else if (op.upsert) this.insert(op.collection, docs, upsertDocument(op.filter, op.update));
        return;
      }
      case 'updateMany':
        for (const doc of docs.matching(op.filter)) this.update(docs, doc, op.update);
        return;
      case 'deleteOne': {
        const [current] = docs.matching(op.filter);
        if (current) docs.delete(current._id);
        return;
      }
      case 'deleteMany':
        for (const doc of docs.matching(op.filter)) docs.delete(doc._id);
        return;
    }
  }

  /**
   * The fold owns its documents: an update of fields no hash index keys on is made in place
   * (a chat is not copied per message); one that moves an indexed field goes through set, which
   * moves its index entries. Both apply the store's own rules (update-apply.ts).
   */
  private update(docs: FoldedCollection, doc: Document, update: Update): void {
    if (!docs.indexesAny(update) && applySimpleInPlace(doc, update)) return;
    docs.set(applyUpdate(doc, update).doc);
  }

  /** The folded documents of `collection` matching `filter`, for a projection that reads (ReadingApply). */
  find(collection: string, filter: Filter): Document[] {
    return this.collection(collection).matching(filter);
  }

  /** As the store: an insert (an upsert's too) of an _id that is there fails. */
  private insert(collection: string, docs: FoldedCollection, doc: Document): void {
    if (docs.get(doc._id)) throw new DuplicateKeyError(collection, doc._id);
    docs.set(doc);
  }

  /** The folded documents of each collection, to insert into fresh ones. */
  *collections(): Generator<[string, Iterable<Document>]> {
    for (const [name, docs] of this.folded) yield [name, docs.values()];
  }

  private collection(name: string): FoldedCollection {
    let docs = this.folded.get(name);
    if (!docs) this.folded.set(name, (docs = new FoldedCollection()));
    return docs;
  }
}
