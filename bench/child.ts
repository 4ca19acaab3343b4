import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

export interface Child {
  origin: string;
  /** CPU seconds (user + system, every thread) the process has used so far; null where /proc is missing. */
  cpuSeconds(): number | null;
  /** CPU seconds so far by thread name (the main thread is the process's own name); null where /proc is missing. */
  threadCpuSeconds(): Map<string, number> | null;
  /** Resident memory of the process now, in bytes; null where /proc is missing. */
  rssBytes(): number | null;
  stop(): Promise<void>;
}

/** Clock ticks per second of /proc/<pid>/stat: USER_HZ, 100 on every Linux port that runs Node. */
const TICKS_PER_SECOND = 100;

function rssOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}

function cpuSecondsOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    return statCpu(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** utime + stime of a /proc stat line, in seconds. */
function statCpu(stat: string): number {
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Threads of the same name (libuv's pool, V8's workers) are added up; a thread that ended meanwhile is left out. */
function threadCpuOf(pid: number | undefined): Map<string, number> | null {
  if (pid === undefined) return null;
  const byName = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).trim();
        byName.set(name, (byName.get(name) ?? 0) + statCpu(stat));
      } catch {
        // Ended between the listing and the read.
      }
    }
  } catch {
    return null;
  }
  return byName;
}

/** A port the OS just handed out. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Runs a TypeScript entry point in its own process on a free port and waits until it answers
 * HTTP. Servers run in a separate process from the load generator so neither steals the other's
 * event loop. Readiness is polled, not read from logs, so any LOG_LEVEL works.
 */
/**
 * Benchmarks load one account and one instance far past the request limits (RATE_LIMIT_*), as an
 * operator who raised them would: they measure the work of a request, not the 429s. The limits
 * have tests of their own.
 */
export const UNTHROTTLED = { RATE_LIMIT_ACCOUNT_PER_S: '1000000000', RATE_LIMIT_INSTANCE_PER_S: '1000000000' };

export async function startChild(entry: string, env: Record<string, string>): Promise<Child> {
  // A port found free can be taken before the child binds it: a child that exits early gets another.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startChildOnce(entry, env);
    } catch (error) {
      if (attempt >= 3 || !(error instanceof ExitedEarly)) throw error;
    }
  }
}

class ExitedEarly extends Error {}

async function startChildOnce(entry: string, env: Record<string, string>): Promise<Child> {
  const port = await freePort();
  // Built JavaScript runs as production does (`npm start`); TypeScript fixtures go through tsx.
  const args = entry.endsWith('.ts') ? ['--import', 'tsx', entry] : [entry];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: `http://127.0.0.1:${port}`, ...UNTHROTTLED, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exited = false;
  proc.once('exit', () => (exited = true));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new ExitedEarly(`${entry} exited before answering`);
    if (Date.now() > deadline) throw new Error(`${entry} did not answer within 60 s`);
    try {
      await fetch(`${origin}/health`);
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    origin,
    cpuSeconds: () => cpuSecondsOf(proc.pid),
    threadCpuSeconds: () => threadCpuOf(proc.pid),
    rssBytes: () => rssOf(proc.pid),
    async stop() {
      if (exited) return;
      proc.kill('SIGTERM');
      await once(proc, 'exit');
    },
  };
}
