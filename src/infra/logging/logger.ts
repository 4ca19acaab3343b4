import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs; credentials are redacted wherever they might appear. Written asynchronously: pino's
 * default writes each line with its own blocking write(2), which under load was a tenth of a
 * request's CPU (the access line); asynchronous, the lines that arrive while one write is under
 * way go out together in the next, and a quiet server's line still goes out at once. pino flushes
 * what is pending synchronously when the process exits.
 */
export function createLogger(level: string): Logger {
  return pino(
    {
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
    },
    pino.destination({ dest: 1, sync: false }),
  );
}
