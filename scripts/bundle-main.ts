import { build, type Plugin } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const CHUNKS = 'chunks';

/**
 * Loaded from node_modules as they are: native addons (lmdb, sharp), packages that read files
 * beside their own (re2-wasm's WebAssembly, swagger-ui-dist's assets), and those loaded only on
 * first use (Baileys, the EventStoreDB and MongoDB clients, the broker and billing clients, mingo),
 * which bundled would be parsed at every start. The rest is bundled: loaded file by file, koa,
 * undici, axios, pino, prom-client and their dependencies took half of a restart's CPU time.
 */
const EXTERNAL = ['lmdb', 'sharp', 're2-wasm', 'swagger-ui-dist', '@whiskeysockets/baileys', '@eventstore/db-client', 'mongodb', 'amqplib', 'nats', 'stripe', 'mingo'];

/**
 * The gateway's entry (dist/main.js) as one file with the modules it imports: a restart of a
 * built tree spent most of its time loading some 400 of our modules and as many of the packages'
 * one by one (resolving, reading, compiling each), and `npm start` promises /ready in under 2 s.
 * Bundled in place after tsc: the rest of dist/ stays as compiled, since the worker threads, the
 * rebuild and the tests start from files there.
 */
export async function bundleMain(entry: string, outfile: string): Promise<void> {
  const outdir = dirname(outfile);
  // Chunks of an earlier build would pile up: their names carry a content hash.
  await rm(join(outdir, CHUNKS), { recursive: true, force: true });
  await build({
    entryPoints: { [basename(outfile, '.js')]: entry },
    // What is imported on first use (the Baileys driver, the EventStoreDB and MongoDB adapters)
    // goes to chunks of its own: in one file, the packages those import would load at start.
    splitting: true,
    chunkNames: `${CHUNKS}/[name]-[hash]`,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    // Packages bundled from CommonJS ask for Node's own modules with require, which an ES module
    // does not have.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    plugins: [ownModuleUrls(outdir)],
    sourcemap: true,
    allowOverwrite: true,
    outdir,
    logLevel: 'warning',
  });
}

/**
 * A bundled module keeps the `import.meta.url` of the file it was compiled to: several find files
 * beside themselves (worker entries, the web app, packages loaded on first use through
 * createRequire), and in the bundle every module would otherwise see dist/main.js.
 */
function ownModuleUrls(outDir: string): Plugin {
  return {
    name: 'own-module-urls',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, async ({ path }) => {
        const contents = await readFile(path, 'utf8');
        if (!contents.includes('import.meta.url')) return undefined;
        const own = relative(outDir, path).split(sep).join('/');
        const url = `new URL(${JSON.stringify(own.startsWith('.') ? own : `./${own}`)}, import.meta.url).href`;
        return { contents: contents.replaceAll('import.meta.url', url), loader: 'js', resolveDir: dirname(path) };
      });
    },
  };
}

// Run as a script (npm run build:main), not imported: node resolves links in import.meta.url,
// not in argv.
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const built = fileURLToPath(new URL('../dist/main.js', import.meta.url));
  await bundleMain(built, built);
}
