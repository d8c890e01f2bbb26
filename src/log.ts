import { pino, type Logger } from 'pino';

export type { Logger };

/** Paths that must never reach a log line: tokens, keys, signatures. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'token',
  'secretKey',
  'secret_key',
  'masterKey',
  'privateKey',
  '*.token',
  '*.secretKey',
  '*.privateKey',
];

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'kassa' },
    redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
