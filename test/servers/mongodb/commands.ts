import { aggregate } from 'mingo';
import { Double, Long } from 'bson';
import { compileMatcher } from '../../../src/infra/docstore/embedded/simple-filter.js';
import type { Filter, IndexSpec, SortSpec } from '../../../src/infra/docstore/port.js';
import { asCommandError, CommandError, notFound } from './errors.js';
import { MemoryCollection, type Doc } from './memory-collection.js';
import type { Command } from './wire.js';
import { runUpdate, type UpdateStatement } from './writes.js';

/** What a command was sent with, kept for tests that check what the adapter asked for. */
export interface CommandRecord {
  db: string;
  name: string;
  writeConcern?: Doc;
}

const DEFAULT_BATCH = 101;
const MAX_RECORDS = 10_000;

interface Cursor {
  ns: string;
  docs: Doc[];
}

/**
 * The databases and the command set of the test server. It presents itself as a standalone
 * mongod: the adapter must not depend on multi-document transactions (a standalone refuses
 * them, as this server does), and a standalone needs no replica-set topology to imitate.
 */
export class CommandRunner {
  private readonly dbs = new Map<string, Map<string, MemoryCollection>>();
  private readonly cursors = new Map<number, Cursor>();
  private nextCursor = 1;
  private nextConnection = 1;
  readonly log: CommandRecord[] = [];
  /** Commands run, by name and collection ("find messages"), behind the client's appName when it gave one ("node2|find messages"): what a bench's load asked of the store. */
  readonly tally = new Map<string, number>();
  /** The appName each connection's handshake carried. */
  private readonly apps = new Map<number, string>();

  connectionId(): number {
    return this.nextConnection++;
  }

  run(command: Command, connectionId: number): Doc {
    const name = Object.keys(command)[0] ?? '';
    const db = typeof command.$db === 'string' ? command.$db : 'admin';
    this.record({ db, name, ...(isDoc(command.writeConcern) ? { writeConcern: command.writeConcern } : {}) });
    const application = isDoc(command.client) && isDoc(command.client.application) ? command.client.application.name : undefined;
    if (typeof application === 'string') this.apps.set(connectionId, application);
    const target = command[name];
    const app = this.apps.get(connectionId);
    const key = `${app === undefined ? '' : `${app}|`}${typeof target === 'string' ? `${name} ${target}` : name}`;
    this.tally.set(key, (this.tally.get(key) ?? 0) + 1);
    try {
      if (command.txnNumber !== undefined || command.startTransaction !== undefined) {
        throw new CommandError(20, 'IllegalOperation', 'Transaction numbers are only allowed on a replica set member or mongos');
      }
      return { ...this.dispatch(name, db, command, connectionId), ok: new Double(1) };
    } catch (error) {
      const e = asCommandError(error);
      return { ok: new Double(0), errmsg: e.message, code: e.code, codeName: e.codeName, ...e.extra };
    }
  }

  private dispatch(name: string, db: string, c: Command, connectionId: number): Doc {
    switch (name) {
      case 'hello':
      case 'isMaster':
      case 'ismaster':
        return hello(name, connectionId);
      case 'ping':
      case 'endSessions':
        return {};
      case 'buildInfo':
      case 'buildinfo':
        return { version: '7.0.0', versionArray: [7, 0, 0, 0], maxBsonObjectSize: 16 * 1024 * 1024, storageEngines: ['test-memory'] };
      case 'find':
        return this.find(db, c);
      case 'getMore':
        return this.getMore(c);
      case 'killCursors':
        return this.killCursors(c);
      case 'count':
        return { n: this.collection(db, c.count).find({ filter: (c.query ?? {}) as Filter, skip: num(c.skip), limit: num(c.limit) }).length };
      case 'aggregate':
        return this.aggregate(db, c);
      case 'insert':
        return this.insert(db, c);
      case 'update':
        return this.update(db, c);
      case 'delete':
        return this.delete(db, c);
      case 'findAndModify':
      case 'findandmodify':
        return this.findAndModify(db, c);
      case 'createIndexes':
        return this.createIndexes(db, c);
      case 'listIndexes':
        return this.listIndexes(db, c);
      case 'dropIndexes':
        return this.dropIndexes(db, c);
      case 'create':
        this.collection(db, c.create, true);
        return {};
      case 'drop':
        if (!this.dbs.get(db)?.delete(String(c.drop))) throw notFound(`${db}.${String(c.drop)}`);
        return { ns: `${db}.${String(c.drop)}` };
      case 'dropDatabase':
        this.dbs.delete(db);
        return { dropped: db };
      case 'listCollections':
        return cursorReply(`${db}.$cmd.listCollections`, [...(this.dbs.get(db)?.keys() ?? [])].map((n) => ({ name: n, type: 'collection', options: {}, info: { readOnly: false } })));
      case 'commitTransaction':
      case 'abortTransaction':
        throw new CommandError(20, 'IllegalOperation', 'Transaction numbers are only allowed on a replica set member or mongos');
      default:
        throw new CommandError(59, 'CommandNotFound', `no such command: '${name}'`);
    }
  }

  private find(db: string, c: Command): Doc {
    const coll = this.existing(db, c.find);
    const docs = coll ? coll.find({ filter: (c.filter ?? {}) as Filter, sort: c.sort as SortSpec, skip: num(c.skip), limit: num(c.limit) }) : [];
    const projected = isDoc(c.projection) && Object.keys(c.projection).length > 0 ? project(docs, c.projection) : docs;
    return this.openCursor(`${db}.${String(c.find)}`, projected, num(c.batchSize) || DEFAULT_BATCH, c.singleBatch === true);
  }

  private aggregate(db: string, c: Command): Doc {
    const pipeline = Array.isArray(c.pipeline) ? (c.pipeline as Doc[]) : [];
    const coll = this.existing(db, c.aggregate);
    let docs = coll ? coll.find({}) : [];
    // $match first goes through the same matcher as find, so counts agree with finds.
    const [first, ...rest] = pipeline;
    if (first && isDoc(first.$match)) {
      // $text needs the collection's text index: find knows it.
      if ('$text' in first.$match) docs = coll ? coll.find({ filter: first.$match as Filter }) : [];
      else {
        const test = compileMatcher(first.$match);
        docs = docs.filter((d) => test(d));
      }
      docs = rest.length > 0 ? (aggregate(docs, rest) as Doc[]) : docs;
    } else if (pipeline.length > 0) {
      docs = aggregate(docs, pipeline) as Doc[];
    }
    const cursor = isDoc(c.cursor) ? c.cursor : {};
    return this.openCursor(`${db}.${String(c.aggregate)}`, docs, num(cursor.batchSize) || DEFAULT_BATCH, false);
  }

  private openCursor(ns: string, docs: Doc[], batchSize: number, singleBatch: boolean): Doc {
    const first = docs.slice(0, batchSize);
    let id = 0;
    if (!singleBatch && docs.length > batchSize) {
      id = this.nextCursor++;
      this.cursors.set(id, { ns, docs: docs.slice(batchSize) });
    }
    return { cursor: { firstBatch: first, id: Long.fromNumber(id), ns } };
  }

  private getMore(c: Command): Doc {
    const id = Number(c.getMore);
    const cursor = this.cursors.get(id);
    if (!cursor) throw new CommandError(43, 'CursorNotFound', `cursor id ${id} not found`);
    const size = num(c.batchSize) || cursor.docs.length;
    const batch = cursor.docs.splice(0, size);
    if (cursor.docs.length === 0) this.cursors.delete(id);
    return { cursor: { nextBatch: batch, id: Long.fromNumber(this.cursors.has(id) ? id : 0), ns: cursor.ns } };
  }

  private killCursors(c: Command): Doc {
    const ids = (Array.isArray(c.cursors) ? c.cursors : []).map(Number);
    const killed = ids.filter((id) => this.cursors.delete(id));
    const unknown = ids.filter((id) => !killed.includes(id));
    return { cursorsKilled: killed.map((id) => Long.fromNumber(id)), cursorsNotFound: unknown.map((id) => Long.fromNumber(id)), cursorsAlive: [], cursorsUnknown: [] };
  }

  /** Write commands run their statements in order and stop at the first error unless `ordered: false`. */
  private writeStatements<S>(statements: unknown, ordered: unknown, each: (statement: S, index: number) => void): Doc {
    const writeErrors: Doc[] = [];
    const list = Array.isArray(statements) ? (statements as S[]) : [];
    for (let i = 0; i < list.length; i++) {
      try {
        each(list[i] as S, i);
      } catch (error) {
        const e = asCommandError(error);
        writeErrors.push({ index: i, code: e.code, errmsg: e.message, ...e.extra });
        if (ordered !== false) break;
      }
    }
    return writeErrors.length > 0 ? { writeErrors } : {};
  }

  private insert(db: string, c: Command): Doc {
    const coll = this.collection(db, c.insert, true);
    let n = 0;
    const errors = this.writeStatements<Doc>(c.documents, c.ordered, (doc) => {
      coll.insert(doc);
      n++;
    });
    return { n, ...errors };
  }

  private update(db: string, c: Command): Doc {
    const coll = this.collection(db, c.update, true);
    let n = 0;
    let nModified = 0;
    const upserted: Doc[] = [];
    const errors = this.writeStatements<UpdateStatement>(c.updates, c.ordered, (statement, index) => {
      const outcome = runUpdate(coll, statement);
      n += outcome.matched;
      nModified += outcome.modified;
      if (outcome.upsertedId !== undefined) {
        n++;
        upserted.push({ index, _id: outcome.upsertedId });
      }
    });
    return { n, nModified, ...(upserted.length > 0 ? { upserted } : {}), ...errors };
  }

  private delete(db: string, c: Command): Doc {
    const coll = this.existing(db, c.delete);
    let n = 0;
    const errors = this.writeStatements<{ q: Filter; limit: number }>(c.deletes, c.ordered, (statement) => {
      if (!coll) return;
      for (const doc of coll.find({ filter: statement.q, limit: statement.limit === 1 ? 1 : 0 })) {
        coll.remove(doc);
        n++;
      }
    });
    return { n, ...errors };
  }

  private findAndModify(db: string, c: Command): Doc {
    const coll = this.collection(db, c.findAndModify ?? c.findandmodify, true);
    const query = (c.query ?? {}) as Filter;
    const sort = isDoc(c.sort) ? (c.sort as SortSpec) : undefined;
    let value: Doc | null = null;
    let lastErrorObject: Doc;
    if (c.remove === true) {
      const [doc] = coll.find({ filter: query, ...(sort ? { sort } : {}), limit: 1 });
      if (doc) coll.remove(doc);
      value = doc ?? null;
      lastErrorObject = { n: doc ? 1 : 0 };
    } else {
      const outcome = runUpdate(coll, { q: query, u: c.update, upsert: c.upsert === true, ...(sort ? { sort } : {}), arrayFilters: c.arrayFilters as Filter[] });
      value = (c.new === true ? outcome.after : outcome.before) ?? null;
      lastErrorObject = { n: outcome.matched > 0 || outcome.upsertedId !== undefined ? 1 : 0, updatedExisting: outcome.matched > 0, ...(outcome.upsertedId !== undefined ? { upserted: outcome.upsertedId } : {}) };
    }
    if (value && isDoc(c.fields) && Object.keys(c.fields).length > 0) value = project([value], c.fields)[0] ?? null;
    return { lastErrorObject, value };
  }

  private createIndexes(db: string, c: Command): Doc {
    const coll = this.collection(db, c.createIndexes, true);
    const before = coll.indexList().length;
    const specs = Array.isArray(c.indexes) ? (c.indexes as Doc[]) : [];
    for (const spec of specs) {
      if (typeof spec.name !== 'string' || !isDoc(spec.key)) throw new CommandError(9, 'FailedToParse', 'index specification needs a name and a key');
      if (Object.values(spec.key).includes('text')) {
        coll.createTextIndex(spec.name, spec.key);
        continue;
      }
      const index: IndexSpec = { name: spec.name, keys: spec.key as SortSpec };
      if (spec.unique === true) index.unique = true;
      if (spec.partialFilterExpression !== undefined) index.partialFilterExpression = spec.partialFilterExpression as Filter;
      coll.createIndex(index);
    }
    return { numIndexesBefore: before, numIndexesAfter: coll.indexList().length, createdCollectionAutomatically: false };
  }

  private listIndexes(db: string, c: Command): Doc {
    const coll = this.existing(db, c.listIndexes);
    if (!coll) throw notFound(`${db}.${String(c.listIndexes)}`);
    return cursorReply(`${db}.${String(c.listIndexes)}`, coll.indexList());
  }

  private dropIndexes(db: string, c: Command): Doc {
    const coll = this.existing(db, c.dropIndexes);
    if (!coll) throw notFound(`${db}.${String(c.dropIndexes)}`);
    const names = c.index === '*' ? coll.indexList().map((i) => String(i.name)).filter((n) => n !== '_id_') : [String(c.index)];
    for (const name of names) {
      if (!coll.dropIndex(name)) throw new CommandError(27, 'IndexNotFound', `index not found with name [${name}]`);
    }
    return { nIndexesWas: coll.indexList().length + names.length };
  }

  private existing(db: string, name: unknown): MemoryCollection | undefined {
    return this.dbs.get(db)?.get(String(name));
  }

  private collection(db: string, name: unknown, create = false): MemoryCollection {
    if (typeof name !== 'string' || name === '') throw new CommandError(73, 'InvalidNamespace', `invalid collection name ${String(name)}`);
    let collections = this.dbs.get(db);
    if (!collections) {
      collections = new Map();
      this.dbs.set(db, collections);
    }
    let coll = collections.get(name);
    if (!coll) {
      coll = new MemoryCollection(`${db}.${name}`);
      if (create) collections.set(name, coll);
    }
    return coll;
  }

  private record(entry: CommandRecord): void {
    this.log.push(entry);
    if (this.log.length > MAX_RECORDS) this.log.splice(0, this.log.length - MAX_RECORDS);
  }
}

function hello(name: string, connectionId: number): Doc {
  return {
    // Answered under the name asked: legacy `isMaster` callers read `ismaster`.
    ...(name === 'hello' ? { isWritablePrimary: true } : { ismaster: true }),
    helloOk: true,
    maxBsonObjectSize: 16 * 1024 * 1024,
    maxMessageSizeBytes: 48_000_000,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    // Reporting a session timeout makes the driver send lsid and endSessions, as with mongod.
    logicalSessionTimeoutMinutes: 30,
    connectionId,
    minWireVersion: 0,
    maxWireVersion: 21,
    readOnly: false,
  };
}

function cursorReply(ns: string, docs: Doc[]): Doc {
  return { cursor: { firstBatch: docs, id: Long.fromNumber(0), ns } };
}

/** Inclusion or exclusion of top-level and dotted fields, as `find` and `findAndModify` take them. */
function project(docs: Doc[], projection: Doc): Doc[] {
  return aggregate(docs, [{ $project: projection }]) as Doc[];
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function isDoc(value: unknown): value is Doc {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
