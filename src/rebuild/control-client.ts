import { Value } from '@sinclair/typebox/value';
import { connect } from 'node:net';
import { ControlAnswer, controlSocketPath } from './control.js';
import type { Progress } from './progress.js';
import { UnknownReadModelError } from './read-models.js';
import type { RebuildResult, RebuildStats } from './rebuilder.js';

export class RebuildRefusedError extends Error {}

/**
 * Asks the gateway running on `dataDir` to rebuild the named models, showing its progress here.
 * Answers null when no gateway listens there (no socket, or a dead one's): the caller then
 * rebuilds with the stores itself.
 */
export async function rebuildInGateway(dataDir: string, names: readonly string[], progress: Progress): Promise<{ results: RebuildResult[]; stats: RebuildStats } | null> {
  const socket = connect(controlSocketPath(dataDir));
  const connected = await new Promise<boolean>((resolve, reject) => {
    socket.once('connect', () => resolve(true));
    socket.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' || err.code === 'ECONNREFUSED' ? resolve(false) : reject(err)));
  });
  if (!connected) {
    socket.destroy();
    return null;
  }
  socket.write(`${JSON.stringify({ rebuild: names })}\n`);
  let buffered = '';
  let outcome: { results: RebuildResult[]; stats: RebuildStats } | null = null;
  let refused: Error | null = null;
  const take = (line: string) => {
    const answer: unknown = JSON.parse(line);
    if (!Value.Check(ControlAnswer, answer)) throw new Error(`unexpected answer from the gateway: ${line.slice(0, 200)}`);
    if ('progress' in answer) {
      if (answer.progress === 'start') progress.start(BigInt(answer.head));
      else if (answer.progress === 'advance') progress.advance(BigInt(answer.position), answer.events);
      else progress.end(answer.events, answer.seconds);
    } else if ('error' in answer) refused = answer.unknown ? new UnknownReadModelError(answer.error) : new RebuildRefusedError(answer.error);
    else outcome = answer;
  };
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        try {
          take(line);
        } catch (err) {
          socket.destroy();
          reject(err as Error);
        }
      }
    });
    socket.once('error', reject);
    socket.once('close', () => resolve());
  });
  if (refused) throw refused;
  if (!outcome) throw new RebuildRefusedError('the gateway closed the control socket before the rebuild ended; see its log');
  return outcome;
}
