import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The web app (src/web) is built into dist/web and served by the gateway under /app.
export default defineConfig({
  root: fileURLToPath(new URL('./src/web', import.meta.url)),
  base: '/app/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('./dist/web', import.meta.url)),
    emptyOutDir: true,
    // Same origin, strict CSP: no inline scripts, no module-preload polyfill.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
