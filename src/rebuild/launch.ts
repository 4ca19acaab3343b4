import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { rebuildNodeFlags } from './node-flags.js';

// `npm run rebuild`: main.js in a node process given the rebuild's V8 settings (node-flags.ts),
// which only node's command line can set (from the sources, through the same loader: tests). Its
// exit is this one's.
const child = spawn(process.execPath, [...process.execArgv, ...rebuildNodeFlags(), fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './main.ts' : './main.js', import.meta.url)), ...process.argv.slice(2)], {
  stdio: 'inherit',
});
// A signal sent to this process is passed on. A terminal's interrupt reaches both, so the child
// gets it twice: it has no handler, and the first ends it.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
child.on('error', (err) => {
  process.stderr.write(`could not start the rebuild: ${err.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
