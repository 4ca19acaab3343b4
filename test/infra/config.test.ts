import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/infra/config/config.js';

describe('configuration', () => {
  it('lists every bad setting at once, naming each', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', LOG_LEVEL: 'chatty', RATE_LIMIT_ACCOUNT_PER_S: '-1', WEBHOOK_ORDERED: 'perhaps', SEND_JITTER_MS: '1.5' });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['PORT', 'LOG_LEVEL', 'RATE_LIMIT_ACCOUNT_PER_S', 'WEBHOOK_ORDERED', 'SEND_JITTER_MS']) expect(message).to.include(name);
  });

  it('takes the defaults of CONTRACT.md when nothing is set', () => {
    const config = loadConfig({});
    expect(config).to.include({ PORT: 8080, HOST: '0.0.0.0', DATA_DIR: './data', MESSAGING_NETWORK: 'baileys', RATE_LIMIT_ACCOUNT_PER_S: 50, RATE_LIMIT_INSTANCE_PER_S: 20, SEND_JITTER_MS: 1500 });
    expect(config.PUBLIC_URL).to.equal('http://localhost:8080');
  });
});
