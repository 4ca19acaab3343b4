import { build } from 'esbuild';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The rebuild's worker thread (src/rebuild/thread-entry.ts) as one file with what it imports,
 * lmdb aside (a native addon): loading some 280 modules one by one (TypeBox alone is 218) took a
 * thread twice as long to start as one file does, and the rebuild waits for the thread's folds.
 * `npm run build` bundles the compiled entry in place; the tests bundle the sources.
 */
export async function bundleThread(entry: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    external: ['lmdb'],
    sourcemap: true,
    allowOverwrite: true,
    outfile,
    logLevel: 'warning',
  });
}

// Run as a script (npm run build:thread), not imported: node resolves links in import.meta.url,
// not in argv.
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const built = fileURLToPath(new URL('../dist/rebuild/thread-entry.js', import.meta.url));
  await bundleThread(built, built);
}
