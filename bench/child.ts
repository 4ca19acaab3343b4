import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

export interface Child {
  origin: string;
  stop(): Promise<void>;
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
export async function startChild(entry: string, env: Record<string, string>): Promise<Child> {
  const port = await freePort();
  // Built JavaScript runs as production does (`npm start`); TypeScript fixtures go through tsx.
  const args = entry.endsWith('.ts') ? ['--import', 'tsx', entry] : [entry];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: `http://127.0.0.1:${port}`, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exited = false;
  proc.once('exit', () => (exited = true));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`${entry} exited before answering`);
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
    async stop() {
      if (exited) return;
      proc.kill('SIGTERM');
      await once(proc, 'exit');
    },
  };
}
