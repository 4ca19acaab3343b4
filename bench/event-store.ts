import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { open } from 'lmdb';
import type { EventData } from '../src/infra/eventstore/port.js';
import { EmbeddedEventStore } from '../src/infra/eventstore/embedded/embedded-event-store.js';
import { report } from './lib.js';

const WRITERS = 50;
const SINGLE_MS = 2000;
const CONCURRENT_MS = 3000;
const TARGET_PER_SECOND = 20_000;

/** A message-received event of about 300 bytes of JSON, like the high-volume session streams. */
function messageEvent(): EventData {
  return {
    id: randomUUID(),
    type: 'MessageReceived',
    data: {
      messageId: randomUUID(),
      from: '5511987654321@s.whatsapp.net',
      text: 'Hello, this is a benchmark message of a typical chat length.',
      timestamp: Date.now(),
    },
    metadata: { instanceId: 'inst-0001', accountId: 'acct-0001', correlationId: randomUUID() },
  };
}

/** Runs `writers` loops until `ms` elapse; returns completed operations per second. */
async function throughput(writers: number, ms: number, operation: (writer: number) => Promise<void>): Promise<number> {
  let done = 0;
  const start = performance.now();
  const deadline = start + ms;
  await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      while (performance.now() < deadline) {
        await operation(writer);
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

async function withTempDir<T>(run: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-event-store-'));
  try {
    return await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function storeThroughput(writers: number, ms: number): Promise<number> {
  return withTempDir(async (path) => {
    const store = await EmbeddedEventStore.open({ path });
    const heads = Array.from({ length: writers }, () => -1n);
    try {
      return await throughput(writers, ms, async (writer) => {
        const head = heads[writer] ?? -1n;
        const expected = head < 0n ? 'no_stream' : head;
        heads[writer] = (await store.append(`session-bench-${writer}`, [messageEvent()], expected)).nextRevision;
      });
    } finally {
      await store.close();
    }
  });
}

/** The floor under the store: lmdb's own batched puts, acknowledged after the flush as well. */
async function rawLmdbThroughput(writers: number, ms: number): Promise<number> {
  return withTempDir(async (path) => {
    const env = open({ path });
    let key = 0;
    try {
      return await throughput(writers, ms, async () => {
        await env.put(key++, messageEvent());
        await env.flushed;
      });
    } finally {
      await env.close();
    }
  });
}

/**
 * Durable appends per second through the port, each beside raw lmdb doing the same number of
 * writers' put + flushed loop in the same run: one writer shows the cost of a flush per append,
 * fifty show how well group commit shares flushes (the target) and what the store adds on top of
 * lmdb's own batching (the ratio).
 */
export async function benchEventStore(): Promise<void> {
  const rawSingle = await rawLmdbThroughput(1, SINGLE_MS);
  const single = await storeThroughput(1, SINGLE_MS);
  report({
    name: 'embedded event store durable appends, 1 writer',
    value: single,
    unit: 'appends/s',
    baseline: { name: 'raw lmdb put + flushed, 1 writer', value: rawSingle },
  });
  const rawConcurrent = await rawLmdbThroughput(WRITERS, CONCURRENT_MS);
  const concurrent = await storeThroughput(WRITERS, CONCURRENT_MS);
  report({
    name: `embedded event store durable appends, ${WRITERS} writers`,
    value: concurrent,
    unit: 'appends/s',
    baseline: { name: `raw lmdb put + flushed, ${WRITERS} writers`, value: rawConcurrent },
    target: `>= ${TARGET_PER_SECOND}/s`,
    met: concurrent >= TARGET_PER_SECOND,
  });
  report({
    name: `group commit: ${WRITERS} writers`,
    value: concurrent,
    unit: 'appends/s',
    baseline: { name: 'the store with 1 writer', value: single },
  });
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) await benchEventStore();
