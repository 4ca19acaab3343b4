import { createRequire } from 'node:module';

type Mingo = typeof import('mingo');

let loaded: Mingo | undefined;

/**
 * mingo, loaded on first use. Its entry point loads every operator it has (some 50 ms); the
 * store decides simple filters and updates without it, and a rebuild's thread, which starts
 * while the rebuild waits for it, may never need it at all. The same module an import gets:
 * both resolve the package's `node` build.
 */
export function mingo(): Mingo {
  return (loaded ??= createRequire(import.meta.url)('mingo') as Mingo);
}
