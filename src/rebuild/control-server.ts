import { Value } from '@sinclair/typebox/value';
import { chmod, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { AliasedDocumentStore } from '../infra/docstore/aliased-document-store.js';
import type { EventStore } from '../infra/eventstore/port.js';
import { controlSocketPath, MAX_REQUEST_BYTES, RebuildRequest, type ControlAnswer } from './control.js';
import type { Progress } from './progress.js';
import { Rebuilder, type LiveProjections } from './rebuilder.js';
import type { EmbeddedStorePaths } from './thread.js';
import { selectReadModels, UnknownReadModelError } from './read-models.js';

export interface RebuildControlDeps {
  dataDir: string;
  events: EventStore;
  /** The gateway's own store: the swap moves its readers and its projections' writes. */
  docs: AliasedDocumentStore;
  live: LiveProjections;
  logger: Logger;
  /** Grace before the old collections are emptied (requests in flight may still read them). */
  dropAfterMs?: number;
  /** The embedded stores' directories, when both are: the costliest fold then runs on a thread. */
  embedded?: EmbeddedStorePaths;
}

export interface RebuildControl {
  /** Stops listening; waits for a rebuild under way. */
  close(): Promise<void>;
}

/**
 * The gateway's end of the control socket (see control.ts): one rebuild at a time, run in this
 * process against the stores it holds, while it keeps serving.
 */
export async function serveRebuilds(deps: RebuildControlDeps): Promise<RebuildControl> {
  const path = controlSocketPath(deps.dataDir);
  // This process holds the data-dir lock: a socket file here is a dead gateway's.
  await rm(path, { force: true });
  let running: Promise<unknown> | null = null;
  const sockets = new Set<Socket>();

  const serve = async (socket: Socket, line: string): Promise<void> => {
    const send = (answer: ControlAnswer) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(answer)}\n`);
    };
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch {
      return void send({ error: 'not a JSON request' });
    }
    if (!Value.Check(RebuildRequest, request)) return void send({ error: 'expected {"rebuild": [read model names]}' });
    let models;
    try {
      models = selectReadModels(request.rebuild);
    } catch (err) {
      if (err instanceof UnknownReadModelError) return void send({ error: err.message, unknown: true });
      throw err;
    }
    if (running) return void send({ error: 'a rebuild is already running in this gateway' });
    const progress: Progress = {
      start: (head) => send({ progress: 'start', head: head.toString() }),
      advance: (position, events) => send({ progress: 'advance', position: position.toString(), events }),
      end: (events, seconds) => send({ progress: 'end', events, seconds }),
    };
    const rebuilder = new Rebuilder(deps.events, deps.docs, progress, {
      live: deps.live,
      ...(deps.embedded ? { thread: deps.embedded } : {}),
      dropAfterMs: deps.dropAfterMs ?? 2_000,
      malformed: (event, reason) => deps.logger.error({ eventId: event.id, type: event.type, streamId: event.streamId, reason }, 'malformed stored event skipped'),
    });
    deps.logger.info({ models: models.map((m) => m.name) }, 'rebuild started');
    const work = rebuilder.rebuild(models);
    running = work;
    try {
      const outcome = await work;
      deps.logger.info({ results: outcome.results, stats: outcome.stats }, 'rebuild swapped in');
      send(outcome);
    } catch (err) {
      deps.logger.error({ err }, 'rebuild failed; the old read models still serve');
      send({ error: `rebuild failed: ${(err as Error).message}` });
    } finally {
      running = null;
    }
  };

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const end = buffered.indexOf('\n');
      if (end < 0 && buffered.length <= MAX_REQUEST_BYTES) return;
      socket.off('data', onData);
      const line = end < 0 ? '' : buffered.slice(0, end);
      serve(socket, end < 0 ? '\0' : line)
        .catch((err: unknown) => deps.logger.error({ err }, 'rebuild request failed'))
        .finally(() => socket.end());
    };
    socket.on('data', onData);
  });
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', (err) => {
      // A data directory whose path is too long for a socket, say: the gateway serves on, and
      // `npm run rebuild` says it cannot reach it.
      deps.logger.warn({ err, path }, 'rebuild control socket not available');
      resolve(false);
    });
    server.listen(path, () => resolve(true));
  });
  if (listening) await chmod(path, 0o600);
  return {
    async close() {
      const closed = listening ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
      for (const socket of sockets) socket.destroy();
      await closed;
      await running?.catch(() => undefined);
      await rm(path, { force: true }).catch(() => undefined);
    },
  };
}
