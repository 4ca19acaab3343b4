import { loadConfig } from './infra/config/config.js';
import { createLogger } from './infra/logging/logger.js';
import { startGateway } from './composition-root.js';

const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL);

try {
  const gateway = await startGateway(config, { logger });
  let signals = 0;
  const shutdown = (signal: string) => {
    if (++signals > 1) return;
    logger.info({ signal }, 'shutting down');
    gateway.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
} catch (err) {
  logger.fatal({ err }, 'gateway failed to start');
  process.exit(1);
}
