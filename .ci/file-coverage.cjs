// Mocha reporter: file times (./file-times.cjs), and with NODE_V8_COVERAGE set, the coverage of
// each test file written on its own (v8.takeCoverage after its root suite ends, which also resets
// the counters) as <NODE_V8_COVERAGE>/<test file path with / as __>.json, so
// .ci/adapter-coverage.mjs can tell which files exercise which adapter code.
'use strict';
const { readdirSync, renameSync } = require('node:fs');
const { join } = require('node:path');
const v8 = require('node:v8');
const Mocha = require('mocha');
const FileTimes = require('./file-times.cjs');
const { EVENT_SUITE_BEGIN, EVENT_SUITE_END } = Mocha.Runner.constants;

class FileCoverage extends FileTimes {
  constructor(runner, options) {
    super(runner, options);
    const dir = process.env.NODE_V8_COVERAGE;
    if (!dir) return;
    const taken = () => {
      const before = new Set(readdirSync(dir));
      v8.takeCoverage();
      return readdirSync(dir).filter((f) => f.startsWith('coverage-') && !before.has(f));
    };
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      // What ran between files (loading, a previous file's stragglers) is kept apart as `between`.
      if (suite.file && suite.parent?.root) for (const f of taken()) renameSync(join(dir, f), join(dir, `between-${f}`));
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      if (!suite.file || !suite.parent?.root) return;
      const name = suite.file.replace(process.cwd() + '/', '').replaceAll('/', '__');
      for (const f of taken()) renameSync(join(dir, f), join(dir, `file-${name}-${f}`));
    });
  }
}
module.exports = FileCoverage;
