import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** Children started by the broker helpers: killed with their process groups should the test process end first. */
const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of started) if (child.pid !== undefined && child.exitCode === null) killGroup(child, 'SIGKILL');
});

/** Runs a server in its own process group (it may start children of its own), its output kept for errors. */
export function spawnServer(command: string, args: string[], env: Record<string, string>, cwd: string): { child: ChildProcess; output: string[]; exited: Promise<void> } {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString('utf8'));
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = once(child, 'exit').then(() => {
    started.delete(child);
  });
  return { child, output, exited };
}

export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** Stops a server's process group: SIGTERM, then SIGKILL if it has not gone within `graceMs`. */
export async function stopGroup(child: ChildProcess, exited: Promise<void>, graceMs = 30_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  killGroup(child, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
  if ((await Promise.race([exited, late])) === 'late') {
    killGroup(child, 'SIGKILL');
    await exited;
  }
  clearTimeout(timer);
}

/** Polls `ready` until it holds; fails early when the server exits, and after `timeoutMs`. */
export async function waitUntilReady(what: string, ready: () => Promise<boolean>, server: { child: ChildProcess; output: string[] }, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`${what} exited before it was ready:\n${server.output.join('').slice(-4000)}`);
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} was not ready within ${timeoutMs} ms:\n${server.output.join('').slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
