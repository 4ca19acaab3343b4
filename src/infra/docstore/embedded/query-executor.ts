import type { Document, Filter, FindOptions } from '../port.js';
import { planQuery, type Plan } from './query-planner.js';
import { compileMatcher as matcher } from './simple-filter.js';
import { sortDocuments } from './sort.js';
import { withTextSearch } from './text-search.js';
import type { KeyRange, Storage } from './storage.js';

/** What a query did: lets tests (and curious operators) check that an index did the work. */
export interface Explanation {
  plan: Plan['kind'];
  index?: string;
  /** Candidates arrived in sort order: execution stopped after skip + limit matches. */
  ordered: boolean;
  /** The index ranges were the whole filter: no document was decoded just to be tested. */
  covered: boolean;
  docsExamined: number;
  returned: number;
}

interface Stats {
  docsExamined: number;
}

export function findDocuments(storage: Storage, collection: string, filter: Filter, options: FindOptions = {}): Document[] {
  return find(storage, collection, filter, options, { docsExamined: 0 }).docs;
}

export function countDocuments(storage: Storage, collection: string, given: Filter): number {
  const filter = withTextSearch(given, storage.catalog.ready(collection));
  const plan = planQuery(filter, undefined, storage.catalog.ready(collection));
  if (plan.covered && plan.kind === 'scan') return storage.countDocs(collection);
  if (plan.covered && plan.kind === 'index') return plan.ranges.reduce((n, range) => n + storage.countIndex(range), 0);
  const query = matcher(filter);
  let n = 0;
  for (const doc of candidates(storage, collection, plan, { docsExamined: 0 })) if (query(doc)) n++;
  return n;
}

export function explainFind(storage: Storage, collection: string, filter: Filter, options: FindOptions = {}): Explanation {
  const stats = { docsExamined: 0 };
  const { plan, docs } = find(storage, collection, filter, options, stats);
  return {
    plan: plan.kind,
    ...(plan.kind === 'index' || plan.kind === 'groups' ? { index: plan.index.name } : {}),
    ordered: plan.ordered,
    covered: plan.covered,
    docsExamined: stats.docsExamined,
    returned: docs.length,
  };
}

function find(
  storage: Storage,
  collection: string,
  given: Filter,
  options: FindOptions,
  stats: Stats,
): { plan: Plan; docs: Document[] } {
  const filter = withTextSearch(given, storage.catalog.ready(collection));
  const skip = Math.max(0, options.skip ?? 0);
  // As in MongoDB, limit 0 means no limit and a negative limit means its absolute value.
  const limit = options.limit ? Math.abs(options.limit) : Infinity;

  // The hottest query of all (every authenticated request loads its instance): `{_id: "..."}`.
  // The key lookup is the whole match, so neither a plan nor a query engine is built for it.
  const id = soleId(filter);
  if (id !== undefined) {
    const doc = skip === 0 ? fetch(storage, collection, id, stats) : undefined;
    return { plan: ID_PLAN, docs: doc ? [doc] : [] };
  }

  const plan = planQuery(filter, options.sort, storage.catalog.ready(collection));

  if (plan.ordered && plan.covered && plan.kind === 'index' && plan.ranges.length === 1) {
    const ids = storage.scanIndex(plan.index, plan.ranges[0] as KeyRange, plan.reverse, skip, Number.isFinite(limit) ? limit : undefined);
    return { plan, docs: fetchAll(storage, collection, ids, stats) };
  }

  const query = matcher(filter);
  if (plan.ordered) {
    const docs: Document[] = [];
    let skipped = 0;
    for (const doc of candidates(storage, collection, plan, stats)) {
      if (!query(doc)) continue;
      if (skipped < skip) skipped++;
      else if (docs.push(doc) >= limit) break;
    }
    return { plan, docs };
  }

  const matches: Document[] = [];
  for (const doc of candidates(storage, collection, plan, stats)) if (query(doc)) matches.push(doc);
  const sorted = options.sort ? sortDocuments(matches, options.sort) : matches;
  return { plan, docs: sorted.slice(skip, skip + limit) };
}

const ID_PLAN: Plan = { kind: 'ids', ids: [], ordered: true, covered: false };

function soleId(filter: Filter): string | undefined {
  let id: unknown;
  let keys = 0;
  for (const key in filter) {
    if (++keys > 1 || key !== '_id') return undefined;
    id = filter[key];
  }
  return typeof id === 'string' ? id : undefined;
}

function* candidates(storage: Storage, collection: string, plan: Plan, stats: Stats): Generator<Document> {
  switch (plan.kind) {
    case 'ids':
      for (const id of new Set(plan.ids)) {
        const doc = fetch(storage, collection, id, stats);
        if (doc) yield doc;
      }
      return;
    case 'scan':
      for (const doc of storage.scanDocs(collection, plan.reverse, plan.ids)) {
        stats.docsExamined++;
        yield doc;
      }
      return;
    case 'groups':
      for (const id of groupIds(storage, plan)) {
        const doc = fetch(storage, collection, id, stats);
        if (doc) yield doc;
      }
      return;
    case 'index': {
      // Only a multikey index can list a document twice (once per array element).
      const seen = plan.index.multikey ? new Set<string>() : undefined;
      for (const range of plan.ranges) {
        for (const id of storage.scanIndex(plan.index, range, plan.reverse)) {
          if (seen?.has(id)) continue;
          seen?.add(id);
          const doc = fetch(storage, collection, id, stats);
          if (doc) yield doc;
        }
      }
    }
  }
}

/**
 * A groups plan's _ids: one group streamed. Every word of a search (`all`): the group of fewest
 * runs streamed, the other words left to the filter (it holds them as $all) on the documents
 * read, which stop at the page; reading a common word's whole run cost more than that. Any of
 * several groups (a chat under two names, bare words): read whole, merged in _id order.
 */
function groupIds(storage: Storage, plan: Extract<Plan, { kind: 'groups' }>): Iterable<string> {
  const [only] = plan.groups;
  if (plan.groups.length === 1 && only) return storage.scanGroup(only, plan.reverse, plan.ids);
  if (plan.all) {
    const runs = plan.groups.map((group) => storage.countGroupRuns(group));
    const fewest = plan.groups[runs.indexOf(Math.min(...runs))] as Buffer;
    return storage.scanGroup(fewest, plan.reverse, plan.ids);
  }
  const ids = [...new Set(plan.groups.flatMap((group) => [...storage.scanGroup(group, false, plan.ids)]))].sort(byBytes);
  return plan.reverse ? ids.reverse() : ids;
}

/** The order of _ids in a group: their UTF-8 bytes. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

function fetchAll(storage: Storage, collection: string, ids: Iterable<string>, stats: Stats): Document[] {
  const docs: Document[] = [];
  for (const id of ids) {
    const doc = fetch(storage, collection, id, stats);
    if (doc) docs.push(doc);
  }
  return docs;
}

function fetch(storage: Storage, collection: string, id: string, stats: Stats): Document | undefined {
  stats.docsExamined++;
  return storage.getDoc(collection, id);
}
