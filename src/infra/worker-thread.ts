import { Worker } from 'node:worker_threads';

/**
 * A worker thread running `entry` (a path beside `moduleUrl`, the caller's import.meta.url, without
 * extension): the built JavaScript as is; from the TypeScript sources (tests, bench) through tsx,
 * which a thread does not inherit from the process that loaded it.
 */
export function startWorker(moduleUrl: string, entry: string, workerData: unknown): Worker {
  if (!new URL(moduleUrl).pathname.endsWith('.ts')) return new Worker(new URL(`${entry}.js`, moduleUrl), { workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  const source = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(new URL(`${entry}.ts`, moduleUrl).href)}); });`;
  return new Worker(source, { eval: true, workerData });
}
