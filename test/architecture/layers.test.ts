import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const SRC = join(import.meta.dirname, '../../src');

/** Every TypeScript file under src, as a path relative to src ('api/app.ts'). */
function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

/** The files of ours a file imports (relative specifiers only), as paths relative to src. */
function importsOf(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
    const spec = (m[1] ?? m[2]) as string;
    out.push(normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts'));
  }
  return out;
}

const layer = (path: string) => path.split('/')[0] as string;
/** The composition root may wire anything to anything. */
const ROOTS = new Set(['composition-root.ts', 'main.ts']);

/**
 * The layer map of ARCHITECTURE.md: the domain imports only itself; only src/api (and the
 * composition root) imports src/api; infrastructure never imports the domain.
 */
export function forbiddenEdges(files: Map<string, string[]>): string[] {
  const bad: string[] = [];
  for (const [file, imports] of files) {
    for (const target of imports) {
      if (layer(file) === 'domain' && layer(target) !== 'domain') bad.push(`${file} -> ${target} (the domain imports only itself)`);
      if (layer(target) === 'api' && layer(file) !== 'api' && !ROOTS.has(file)) bad.push(`${file} -> ${target} (only src/api knows HTTP)`);
      if (layer(file) === 'infra' && layer(target) === 'domain') bad.push(`${file} -> ${target} (infrastructure does not know the domain)`);
    }
  }
  return bad;
}

/** Folder-to-folder imports among src's top folders (the composition root's files left out). */
export function folderEdges(files: Map<string, string[]>): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const [file, imports] of files) {
    if (ROOTS.has(file)) continue;
    for (const target of imports) {
      const [from, to] = [layer(file), layer(target)];
      if (from === to || ROOTS.has(target)) continue;
      edges.set(from, (edges.get(from) ?? new Set()).add(to));
    }
  }
  return edges;
}

/**
 * Every folder-level cycle, each said once as a path from its alphabetically first folder
 * ('a -> b -> a'): a depth-first walk from each folder that looks only at folders after it.
 */
export function folderCycles(edges: Map<string, Set<string>>): string[] {
  const cycles: string[] = [];
  const walk = (start: string, path: string[]) => {
    for (const next of [...(edges.get(path.at(-1) as string) ?? [])].sort()) {
      if (next === start) cycles.push([...path, start].join(' -> '));
      else if (next > start && !path.includes(next)) walk(start, [...path, next]);
    }
  };
  for (const start of [...edges.keys()].sort()) walk(start, [start]);
  return cycles;
}

describe('the layer map', () => {
  it('has no import across a forbidden edge in src', () => {
    const files = new Map(sources().map((f) => [f, importsOf(f, readFileSync(join(SRC, f), 'utf8'))]));
    expect(files.size).to.be.greaterThan(100);
    expect(forbiddenEdges(files)).to.deep.equal([]);
  });

  it('names each kind of forbidden edge when one is added', () => {
    const added = new Map([
      ['domain/instance/billing.ts', ['infra/clock.ts']],
      ['sessions/networks.ts', ['api/route.ts']],
      ['infra/metrics/metrics.ts', ['domain/errors.ts']],
      ['api/app.ts', ['domain/errors.ts', 'infra/clock.ts']],
      ['composition-root.ts', ['api/app.ts']],
    ]);
    expect(forbiddenEdges(added)).to.deep.equal([
      'domain/instance/billing.ts -> infra/clock.ts (the domain imports only itself)',
      'sessions/networks.ts -> api/route.ts (only src/api knows HTTP)',
      'infra/metrics/metrics.ts -> domain/errors.ts (infrastructure does not know the domain)',
    ]);
  });

  it('has no cycle among the top folders of src', () => {
    const files = new Map(sources().map((f) => [f, importsOf(f, readFileSync(join(SRC, f), 'utf8'))]));
    expect(folderCycles(folderEdges(files))).to.deep.equal([]);
  });

  it('names every folder cycle when an import closes one, the long ones too', () => {
    const files = new Map([
      ['commands/a.ts', ['projections/b.ts', 'domain/e.ts']],
      ['projections/b.ts', ['commands/a.ts', 'webhooks/c.ts']],
      ['webhooks/c.ts', ['billing/d.ts']],
      ['billing/d.ts', ['projections/b.ts']],
      ['composition-root.ts', ['api/app.ts']],
      ['api/app.ts', ['composition-root.ts']],
    ]);
    expect(folderCycles(folderEdges(files))).to.deep.equal(['billing -> projections -> webhooks -> billing', 'commands -> projections -> commands']);
  });

  it('reads static, type-only, re-exported and dynamic imports', () => {
    const text = "import { a } from './x.js';\nimport type { B } from '../y/z.js';\nexport { c } from './w.js';\nconst m = await import('../../api/v.js');";
    expect(importsOf('sessions/sandbox/f.ts', text)).to.deep.equal(['sessions/sandbox/x.ts', 'sessions/y/z.ts', 'sessions/sandbox/w.ts', 'api/v.ts']);
  });
});
