import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

/** Every `from '...'`, `import '...'`, `import('...')` and `require('...')` specifier of a file. */
export function importedSpecifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [/\bfrom\s+['"]([^'"]+)['"]/g, /\bimport\s+['"]([^'"]+)['"]/g, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g, /\brequire\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) found.push(match[1] as string);
  return found;
}

/** The package a bare specifier names (`@scope/name/sub` -> `@scope/name`); null for relative paths and builtins. */
export function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
  return builtinModules.includes(name) ? null : name;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await sourceFiles(path)));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry.name)) files.push(path);
  }
  return files;
}

describe('declared packages', () => {
  it('reads bare, scoped, type-only and dynamic imports, and leaves builtins aside', () => {
    const source = `import a from 'lru-cache';\nimport type { B } from '@scope/pkg/sub';\nconst c = await import('undici');\nimport './side.js';\nimport { x } from 'node:fs';\nimport p from 'path';`;
    const packages = importedSpecifiers(source).map(packageOf).filter((p) => p !== null);
    expect(packages).to.have.members(['lru-cache', '@scope/pkg', 'undici']);
  });

  it('every package imported under src is declared in package.json dependencies', async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
    // The server may rely only on runtime dependencies: devDependencies are absent from `npm ci --omit=dev`.
    // The web app (src/web) is bundled by the build, so its packages may be build-time ones.
    const runtime = new Set(Object.keys(manifest.dependencies ?? {}));
    const buildTime = new Set([...runtime, ...Object.keys(manifest.devDependencies ?? {})]);
    const undeclared: string[] = [];
    for (const file of await sourceFiles(join(ROOT, 'src'))) {
      const declared = file.startsWith(join(ROOT, 'src/web/')) ? buildTime : runtime;
      for (const specifier of importedSpecifiers(await readFile(file, 'utf8'))) {
        const name = packageOf(specifier);
        if (name !== null && !declared.has(name)) undeclared.push(`${file.slice(ROOT.length)} imports ${name}`);
      }
    }
    expect(undeclared, undeclared.join('\n')).to.deep.equal([]);
  });
});
