// Mocha reporter: the spec reporter's output, then each test file's wall time (its root suite's
// begin to end, hooks included), slowest first, so CI time can be spent where it goes.
'use strict';
const Mocha = require('mocha');
const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_RUN_END } = Mocha.Runner.constants;

class FileTimes extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const began = new Map();
    const took = new Map();
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.file && !began.has(suite.file)) began.set(suite.file, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      if (suite.file && began.has(suite.file)) took.set(suite.file, Date.now() - began.get(suite.file));
    });
    runner.once(EVENT_RUN_END, () => {
      const rows = [...took].sort((a, b) => b[1] - a[1]);
      console.log('\n  file times (s):');
      for (const [file, ms] of rows) console.log(`  ${(ms / 1000).toFixed(1).padStart(7)}  ${file.replace(process.cwd() + '/', '')}`);
    });
  }
}
module.exports = FileTimes;
