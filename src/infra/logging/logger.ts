import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON logs; credentials are redacted wherever they might appear. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-instance-token"]',
        'req.headers["x-client-token"]',
        '*.password',
        '*.client_secret',
        '*.token',
      ],
      censor: '[redacted]',
    },
  });
}
