import { pino, type DestinationStream, type Logger } from 'pino';

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

/**
 * The root logger: pino JSON lines on stdout (what log collectors read), or with `pretty` (kassa
 * start on a terminal) the same lines made readable by `prettyLine`.
 */
export function createLogger(level: string, options: { pretty?: boolean } = {}): Logger {
  const settings = {
    level,
    base: { service: 'kassa' },
    redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (!options.pretty) return pino(settings);
  const colour = process.stdout.hasColors?.() === true;
  const terminal: DestinationStream = { write: (line: string) => process.stdout.write(prettyLine(line, colour)) };
  return pino(settings, terminal);
}

const LEVELS: Record<number, { name: string; colour: string }> = {
  10: { name: 'TRACE', colour: '90' },
  20: { name: 'DEBUG', colour: '90' },
  30: { name: 'INFO ', colour: '32' },
  40: { name: 'WARN ', colour: '33' },
  50: { name: 'ERROR', colour: '31' },
  60: { name: 'FATAL', colour: '35' },
};

/** A field's value as a reader writes it: plain words bare, anything else as JSON. */
const shown = (value: unknown): string => (typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value));

/**
 * One pino JSON line as a terminal line: `12:34:56.789 INFO  message key=value …` (the service name,
 * the date and the level number left out), an error's stack indented below it. Not JSON: given back.
 */
export function prettyLine(line: string, colour = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { level, time, msg, service: _service, err, ...fields } = entry;
  const known = LEVELS[level as number];
  const name = known ? (colour ? `\x1b[${known.colour}m${known.name}\x1b[0m` : known.name) : String(level);
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  const rest = Object.entries(fields)
    .map(([key, value]) => `${key}=${shown(value)}`)
    .join(' ');
  const failure = err as { stack?: string; message?: string } | undefined;
  const stack = failure ? `\n    ${String(failure.stack ?? failure.message ?? JSON.stringify(failure)).replace(/\n/g, '\n    ')}` : '';
  return `${clock} ${name} ${msg ?? ''}${rest ? `  ${rest}` : ''}${stack}\n`;
}
