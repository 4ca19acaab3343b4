import { ConfigError, loadConfig } from '../infra/config/config.js';
import { RebuildRefusedError } from './control-client.js';
import { StreamProgress } from './progress.js';
import { NodesRunningError, runRebuild, UnknownReadModelError } from './run.js';

// `npm run rebuild -- [name...]`: rebuild the named read models (default: all), print checksums.
try {
  await runRebuild(loadConfig(), process.argv.slice(2), new StreamProgress(process.stderr), (line) => process.stdout.write(`${line}\n`));
} catch (err) {
  if (err instanceof UnknownReadModelError || err instanceof ConfigError || err instanceof RebuildRefusedError || err instanceof NodesRunningError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
