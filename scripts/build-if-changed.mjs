import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `npm start` (and bench, rebuild) build only when what the build reads changed since the last
 * build: a restart of a built tree went through the whole build (tsc, the thread bundle, the web
 * app) every time, a 20 s outage. The stamp is a hash of the paths and contents of every input,
 * written into dist/ after a build that succeeded, so a checkout, an edit or a new lock file
 * rebuilds and a deleted dist/ does too. Plain JavaScript: it runs before anything is compiled.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const STAMP = join(ROOT, 'dist', '.build-stamp');
const INPUTS = ['src', 'scripts/bundle-main.ts', 'scripts/bundle-thread.ts', 'tsconfig.json', 'tsconfig.build.json', 'vite.config.ts', 'package.json', 'package-lock.json'];

function files(entry) {
  const path = join(ROOT, entry);
  if (!existsSync(path)) return [];
  try {
    return readdirSync(path, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath ?? e.path, e.name).slice(ROOT.length));
  } catch {
    return [entry];
  }
}

export function sourceHash() {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap(files).sort()) {
    hash.update(file).update('\0').update(readFileSync(join(ROOT, file))).update('\0');
  }
  return hash.digest('hex');
}

const wanted = sourceHash();
const built = existsSync(STAMP) ? readFileSync(STAMP, 'utf8').trim() : '';
if (built !== wanted) {
  // A build stopped halfway leaves no stamp behind, whatever the sources are next time.
  rmSync(STAMP, { force: true });
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  writeFileSync(STAMP, `${wanted}\n`);
}
