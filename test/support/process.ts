import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { testBackendsFor } from './gateway.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  logs: string[];
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/**
 * Runs the real entry point as a child process, the way `npm start` does: src/main.ts, or the
 * build when GATEWAY_ENTRY names it (`npm run build && GATEWAY_ENTRY=dist/main.js npx mocha ...`).
 */
export async function spawnGateway(env: Record<string, string>): Promise<GatewayProcess> {
  const entry = process.env.GATEWAY_ENTRY ?? 'src/main.ts';
  // The backends a test gateway on this DATA_DIR would get (TEST_DOCSTORE / TEST_EVENTSTORE; the
  // test servers run in this process), else embedded even when this shell has EVENTSTORE_URL set.
  const backends = { EVENTSTORE_URL: '', MONGODB_URL: '', ...(env.DATA_DIR ? await testBackendsFor(env.DATA_DIR, env) : {}) };
  const child = spawn(process.execPath, entry.endsWith('.ts') ? ['--import', 'tsx', entry] : [entry], {
    cwd: ROOT,
    // A set WHATSAPP_VERSION: the child never asks web.whatsapp.com for the current one (CI has no internet).
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SCRYPT_LOG_N: '10', RATE_LIMIT_ACCOUNT_PER_S: '100000', RATE_LIMIT_INSTANCE_PER_S: '100000', WHATSAPP_VERSION: '2.3000.1', ...backends, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        logs.push(line);
        try {
          const entry = JSON.parse(line) as { msg?: string; port?: number };
          if (entry.msg === 'gateway listening') resolve(`http://127.0.0.1:${entry.port}`);
        } catch {
          // not a log line
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')));
    void exited.then((code) => reject(new Error(`gateway exited with ${code} before listening:\n${logs.join('\n')}`)));
  });
  return { child, url, logs, exited };
}
