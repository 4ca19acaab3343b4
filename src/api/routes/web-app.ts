import { readdir, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';
import { DOCS_INIT_SCRIPT } from './docs-page.js';

/** Both from src/api/routes (tsx) and dist/api/routes (built): three levels up is the package. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Where `npm run build:web` (Vite) writes the web app. */
export const WEB_APP_DIST = join(PACKAGE_ROOT, 'dist', 'web');

/** Only what the docs page loads: the rest of the package (maps, presets) is not served. */
const SWAGGER_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png'];

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
};

/**
 * Same origin only: scripts and styles from this server, images also as data URLs (the QR).
 * Swagger UI sets inline styles, hence 'unsafe-inline' for styles and never for scripts.
 */
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const APP_PAGE = /^\/app(\/[A-Za-z0-9_-]+)*\/?$/;

interface StaticFile {
  body: Buffer;
  type: string;
  /** Vite names assets by their content hash: those can be cached for good. */
  immutable: boolean;
}

/**
 * Serves `/docs/assets/*` and the web app under `/app`. The set of files is fixed when the
 * gateway starts (a lookup in a map, never a path joined from the request), so no request can
 * reach a file outside it.
 */
export async function webAppFiles(): Promise<Middleware> {
  const files = new Map<string, StaticFile>();
  const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  for (const name of SWAGGER_FILES) {
    files.set(`/docs/assets/${name}`, { body: await readFile(join(swaggerDir, name)), type: typeOf(name), immutable: false });
  }
  files.set('/docs/assets/docs-init.js', { body: Buffer.from(DOCS_INIT_SCRIPT), type: typeOf('.js'), immutable: false });

  for (const path of await filesUnder(WEB_APP_DIST)) {
    const url = '/app/' + relative(WEB_APP_DIST, path).split(sep).join('/');
    files.set(url, { body: await readFile(path), type: typeOf(path), immutable: url.startsWith('/app/assets/') });
  }
  const index = files.get('/app/index.html') ?? {
    body: Buffer.from('<!doctype html><title>Web app not built</title><p>Run <code>npm run build</code> to build the web app.</p>'),
    type: typeOf('.html'),
    immutable: false,
  };

  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    // The root is where a person types the gateway's address: the web app is what they want.
    if (ctx.path === '/') {
      ctx.status = 302;
      ctx.redirect('/app');
      return;
    }
    // The app routes by path: every page path under /app (no file extension) is its one page.
    const file = files.get(ctx.path) ?? (APP_PAGE.test(ctx.path) ? index : undefined);
    if (!file) return next();
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.type = file.type;
    ctx.body = file.body;
  };
}

function typeOf(path: string): string {
  return TYPES[extname(path) || path] ?? 'application/octet-stream';
}

async function filesUnder(dir: string): Promise<string[]> {
  const exists = await stat(dir).then((s) => s.isDirectory(), () => false);
  if (!exists) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}
