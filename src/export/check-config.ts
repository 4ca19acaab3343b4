import { ConfigError, type Config } from '../infra/config/config.js';

/**
 * The broker URLs are checked before anything starts: a URL that does not parse is a clear error
 * at start, never a connection retried for ever. The message never repeats the URL (it may hold a
 * password).
 */
export function checkExportConfig(config: Pick<Config, 'EXPORT_AMQP_URL' | 'EXPORT_NATS_URL'>): void {
  const problems: string[] = [];
  if (config.EXPORT_AMQP_URL !== undefined) {
    const problem = urlProblem(config.EXPORT_AMQP_URL, ['amqp:', 'amqps:']);
    if (problem) problems.push(`EXPORT_AMQP_URL ${problem} (expected amqp://user:password@host:5672/vhost or amqps://...)`);
  }
  if (config.EXPORT_NATS_URL !== undefined) {
    const parts = config.EXPORT_NATS_URL.split(',').map((s) => s.trim());
    const problem = parts.some((p) => p === '') ? 'has an empty server in its list' : parts.map((p) => urlProblem(p, ['nats:', 'tls:'])).find(Boolean);
    if (problem) problems.push(`EXPORT_NATS_URL ${problem} (expected nats://[user:password@]host:4222, several separated by commas)`);
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
}

function urlProblem(text: string, protocols: string[]): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'does not parse as a URL';
  }
  if (!protocols.includes(url.protocol)) return `has the scheme '${url.protocol.replace(/:$/, '')}', not ${protocols.map((p) => p.replace(/:$/, '')).join(' or ')}`;
  if (url.hostname === '') return 'names no host';
  if (url.port !== '' && (Number(url.port) < 1 || Number(url.port) > 65535)) return 'has a port out of range';
  return null;
}
