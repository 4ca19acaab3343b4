import { availableParallelism, totalmem } from 'node:os';

/** What the V8 settings of a rebuild are chosen from. */
export interface Machine {
  cores: number;
  memoryBytes: number;
}

const GIB = 1024 ** 3;

/** The cores this process may use, and its memory: the container's limit when it has one. */
export function thisMachine(): Machine {
  const limit = process.constrainedMemory?.() ?? 0;
  const total = totalmem();
  return { cores: availableParallelism(), memoryBytes: limit > 0 && limit < total ? limit : total };
}

/**
 * V8 settings for the process `npm run rebuild` runs in (launch.ts): only node's command line can
 * give them, and a rebuild is a burst of allocation unlike a serving gateway's.
 * - On two cores or fewer, garbage is collected on the thread that made it: both cores fold (the
 *   rebuild's own thread beside this one), and V8's parallel collector threads only took turns
 *   with them (8% faster measured on two cores). With more cores they have idle ones to run on.
 * - With 2 GiB or more, each thread's heap starts at 256 MB: the folded models grow to a few
 *   hundred megabytes, and a heap grown from a few megabytes is collected whole many times on
 *   the way (5% faster). Each of the two threads may then hold up to that before it first
 *   collects: not on a smaller machine.
 */
export function rebuildNodeFlags(machine: Machine = thisMachine()): string[] {
  const flags: string[] = [];
  if (machine.cores <= 2) flags.push('--single-threaded-gc');
  if (machine.memoryBytes >= 2 * GIB) flags.push('--initial-heap-size=256');
  return flags;
}
