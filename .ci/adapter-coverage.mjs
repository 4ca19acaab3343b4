// Which test files the adapters' pass needs, chosen by what they exercise rather than by guess:
// V8's block coverage (NODE_V8_COVERAGE) of the MongoDB and EventStoreDB adapters, of the test
// servers that speak their protocols, and of mingo (the query operators the MongoDB test server
// evaluates, so a query shape that only one suite sends counts too), and of the code that runs
// another way on a node among many (both stores on servers), whichever suite drives it.
//
//   select <dir>          coverage of a full pass taken per test file (.ci/file-coverage.cjs):
//                         the fewest files, greedily, that run every byte some file runs
//   compare <all> <some>  two passes' coverage: what the first ran and the second did not
//                         (exit code 1 if anything)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const WATCHED = [
  /\/src\/infra\/docstore\/mongodb\//,
  /\/src\/infra\/eventstore\/esdb\//,
  /\/test\/servers\/mongodb\//,
  /\/test\/servers\/eventstore\//,
  /\/node_modules\/mingo\//,
  // Code that runs another way when both stores are on servers (a node among many: leases, claims,
  // checkpoints every batch, idempotent writes), whichever suite drives it.
  /\/src\/cluster\//,
  /\/src\/sessions\/ownership\//,
  /\/src\/infra\/doc-claims\.ts$/,
  /\/src\/projections\/(runner|idempotent-writes)\.ts$/,
  /\/src\/webhooks\/dispatch\/(dispatcher|lane-claims|retry-loader)\.ts$/,
  /\/src\/webhooks\/deliveries\/documents\.ts$/,
  /\/src\/(bots\/runner|bots\/jobs|helpdesk\/bridge\/bridge|helpdesk\/bridge\/jobs|export\/index)\.ts$/,
  /\/src\/commands\/(send-pacing\/queued-sends|sending\/scheduled-sends)\.ts$/,
  /\/src\/(composition-root|rebuild\/run|rebuild\/checksum)\.ts$/,
];

/** Adds to `into` (url → bitmap of byte offsets run at least once) what one coverage file shows. */
function addCoverage(path, into) {
  const { result } = JSON.parse(readFileSync(path, 'utf8'));
  for (const script of result) {
    if (!WATCHED.some((re) => re.test(script.url))) continue;
    const url = script.url.replace(/^file:\/\/.*?\/(src|test|node_modules)\//, '$1/');
    for (const fn of script.functions) {
      // Ranges come outermost first; an inner range overrides its parent's count.
      const [outer, ...inner] = fn.ranges;
      if (outer.count === 0) continue;
      let bits = into.get(url);
      if (!bits || bits.length < outer.endOffset) {
        const grown = new Uint8Array(Math.max(outer.endOffset, (bits?.length ?? 0) * 2));
        if (bits) grown.set(bits);
        into.set(url, (bits = grown));
      }
      const run = new Uint8Array(outer.endOffset - outer.startOffset).fill(1);
      for (const r of inner) run.fill(r.count > 0 ? 1 : 0, r.startOffset - outer.startOffset, r.endOffset - outer.startOffset);
      for (let i = 0; i < run.length; i++) if (run[i]) bits[outer.startOffset + i] = 1;
    }
  }
}

const count = (bits) => bits.reduce((n, b) => n + b, 0);

/** Bytes of `a` not in `b`, per url. */
function missing(a, b) {
  const out = new Map();
  for (const [url, bits] of a) {
    const other = b.get(url);
    let n = 0;
    for (let i = 0; i < bits.length; i++) if (bits[i] && !(other && other[i])) n++;
    if (n) out.set(url, n);
  }
  return out;
}

function union(maps) {
  const out = new Map();
  for (const m of maps)
    for (const [url, bits] of m) {
      let into = out.get(url);
      if (!into || into.length < bits.length) {
        const grown = new Uint8Array(bits.length);
        if (into) grown.set(into);
        out.set(url, (into = grown));
      }
      for (let i = 0; i < bits.length; i++) if (bits[i]) into[i] = 1;
    }
  return out;
}

const whole = (dir) => {
  const into = new Map();
  for (const f of readdirSync(dir)) if (f.endsWith('.json')) addCoverage(join(dir, f), into);
  return into;
};

const [mode, a, b] = process.argv.slice(2);
if (mode === 'select' && a) {
  const byFile = new Map();
  const everyFile = new Map();
  let between = new Map();
  for (const f of readdirSync(a).sort()) {
    const m = /^file-(.+?)-coverage-/.exec(f);
    const key = m ? m[1].replaceAll('__', '/') : null;
    // SELECT_EXCLUDE=<file>,<file>: files too slow on the adapters to pick; others must cover them.
    if (key) { const all = everyFile.get(key) ?? new Map(); addCoverage(join(a, f), all); everyFile.set(key, all); }
    if (key && (process.env.SELECT_EXCLUDE ?? '').split(',').includes(key)) continue;
    const into = key ? (byFile.get(key) ?? new Map()) : between;
    addCoverage(join(a, f), into);
    if (key) byFile.set(key, into);
  }
  const all = union([...byFile.values()]);
  const total = [...all.values()].reduce((n, bits) => n + count(bits), 0);
  console.log(`${byFile.size} test files run ${total} watched bytes; between files (loading, child processes): ${[...missing(between, all).values()].reduce((x, y) => x + y, 0)} more`);
  const chosen = [];
  let covered = new Map();
  const uncovered = missing(union([...everyFile.values()]), union([...byFile.values()]));
  for (const [url, n] of uncovered) console.log(`  ${n} bytes only the excluded files run: ${url}`);
  for (;;) {
    let best = null;
    let bestGain = 0;
    for (const [file, cov] of byFile) {
      if (chosen.includes(file)) continue;
      const gain = [...missing(cov, covered).values()].reduce((x, y) => x + y, 0);
      if (gain > bestGain) [best, bestGain] = [file, gain];
    }
    if (!best) break;
    chosen.push(best);
    covered = union([covered, byFile.get(best)]);
    console.log(`${String(bestGain).padStart(7)}  ${best}`);
  }
} else if (mode === 'compare' && a && b) {
  const lost = missing(whole(a), whole(b));
  for (const [url, n] of lost) console.log(`${String(n).padStart(7)} bytes not run  ${url}`);
  console.log(lost.size ? `\n${lost.size} file(s) run less by the second pass` : 'the second pass runs everything the first one does');
  process.exit(lost.size ? 1 : 0);
} else {
  console.error('usage: node .ci/adapter-coverage.mjs select <dir> | compare <dir> <dir>');
  process.exit(2);
}
