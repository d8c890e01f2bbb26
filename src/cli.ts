// The `kassa` command (CONTRACT §1). Every command but `start` prints one JSON document on stdout;
// every failure is one line on stderr and a non-zero exit.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { openDatabaseServer } from './db/embedded.ts';
import { migrate } from './db/migrate.ts';
import { openPool, isDatabaseUnavailable, type DatabasePool } from './db/pool.ts';
import { createLogger, type Logger } from './log.ts';
import { issueToken, parseDuration, revokeToken, UnknownStoreError } from './auth/tokens.ts';
import { createStore, DEFAULT_METHODS, parseMethodList, parseTreasury, StoreInputError, updateStore, type StoreChanges } from './stores/stores.ts';
import { configuredDepositPublicKey, depositPublicKey } from './payments/deposit.ts';
import { DepositExportError, exportDeposit } from './payments/depositExport.ts';
import { rotateSigningKey } from './webhooks/keys.ts';
import { runUntilSignal, startService } from './server.ts';

class UsageError extends Error {
  override name = 'UsageError';
}

const USAGE = `usage:
  kassa start [--api | --worker]
  kassa migrate
  kassa store create --name NAME [--methods TON/TON,USDT/TON] [--treasury ADDRESS]
  kassa store update ID [--treasury ADDRESS]
  kassa token issue --store ID [--expires-in 30d]
  kassa token revoke JTI
  kassa keys rotate
  kassa keys deposit-public
  kassa deposits export --payment ID [--include-secret]`;

function parse(args: string[], options: Record<string, { type: 'string' | 'boolean' }>, positionals = 0) {
  try {
    const parsed = parseArgs({ args, options, allowPositionals: positionals > 0, strict: true });
    if (parsed.positionals.length !== positionals) {
      throw new UsageError(positionals === 0 ? 'this command takes no arguments' : `expected ${positionals} argument(s)`);
    }
    return parsed;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message.split('\n')[0] ?? 'invalid arguments');
  }
}

function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`${flag} is required`);
  return value;
}

/** Opens the database (embedded when DATABASE_URL is unset), migrates it, runs `work`, closes. */
async function withDatabase<T>(config: Config, log: Logger, work: (pool: DatabasePool) => Promise<T>): Promise<T> {
  const server = await openDatabaseServer(config, log);
  try {
    await migrate(server.url, log);
    const pool = await openPool(server.url, { maxPoolSize: 2 });
    try {
      return await work(pool);
    } finally {
      await pool.end();
    }
  } finally {
    await server.stop();
  }
}

function print(document: unknown): void {
  process.stdout.write(`${JSON.stringify(document)}\n`);
}

export async function main(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  const config = loadConfig();
  if (command === 'start') {
    const { values } = parse(argv.slice(1), { api: { type: 'boolean' }, worker: { type: 'boolean' } });
    if (values.api && values.worker) throw new UsageError('--api and --worker are exclusive (give neither to run both)');
    const log = createLogger(config.logLevel);
    const parts = { api: !values.worker, worker: !values.api };
    const service = await startService(config, parts, log);
    await runUntilSignal(service, log);
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  }
  // Other commands keep stdout for their JSON document; logs go to stderr, warnings and up.
  const verbose = ['debug', 'trace', 'silent'].includes(config.logLevel);
  const log = pino({ level: verbose ? config.logLevel : 'warn' }, pino.destination(2));
  if (command === 'migrate') {
    parse(argv.slice(1), {});
    await withDatabase(config, log, async () => {});
    print({ migrated: true });
    return 0;
  }
  if (command === 'store' && sub === 'create') {
    const { values } = parse(rest, { name: { type: 'string' }, methods: { type: 'string' }, treasury: { type: 'string' } });
    const name = required(values.name, '--name');
    const methods = parseMethodList(typeof values.methods === 'string' ? values.methods : DEFAULT_METHODS);
    const treasury = values.treasury === undefined ? null : parseTreasury(required(values.treasury, '--treasury'), config.tonNetwork);
    print(await withDatabase(config, log, (pool) => createStore(pool, name, methods, { treasury })));
    return 0;
  }
  if (command === 'store' && sub === 'update') {
    // One update command: each option given changes that field, the others stay.
    const { values, positionals } = parse(rest, { treasury: { type: 'string' } }, 1);
    const changes: StoreChanges = {};
    if (values.treasury !== undefined) changes.treasury = parseTreasury(required(values.treasury, '--treasury'), config.tonNetwork);
    if (Object.keys(changes).length === 0) throw new UsageError('nothing to update (give --treasury ADDRESS)');
    print(await withDatabase(config, log, (pool) => updateStore(pool, positionals[0]!, changes)));
    return 0;
  }
  if (command === 'token' && sub === 'issue') {
    const { values } = parse(rest, { store: { type: 'string' }, 'expires-in': { type: 'string' } });
    const storeId = required(values.store, '--store');
    let expiresIn: number | null;
    try {
      expiresIn = typeof values['expires-in'] === 'string' ? parseDuration(values['expires-in']) : null;
    } catch (error) {
      throw new UsageError(`--expires-in: ${(error as Error).message}`);
    }
    print(await withDatabase(config, log, (pool) => issueToken(pool, storeId, expiresIn)));
    return 0;
  }
  if (command === 'token' && sub === 'revoke') {
    const { positionals } = parse(rest, {}, 1);
    const jti = positionals[0]!;
    const revoked = await withDatabase(config, log, (pool) => revokeToken(pool, jti));
    if (!revoked) throw new UsageError(`no token with jti "${jti}"`);
    print({ revoked: jti });
    return 0;
  }
  if (command === 'keys' && sub === 'rotate') {
    parse(rest, {});
    print({ kid: await withDatabase(config, log, (pool) => rotateSigningKey(pool)) });
    return 0;
  }
  if (command === 'keys' && sub === 'deposit-public') {
    parse(rest, {});
    // Set as KASSA_DEPOSIT_PUBLIC_KEY on API processes, which then need no KASSA_MASTER_KEY.
    const key = configuredDepositPublicKey(config) ?? (await withDatabase(config, log, (pool) => depositPublicKey(pool, config)));
    print({ publicKey: key.toString('hex') });
    return 0;
  }
  if (command === 'deposits' && sub === 'export') {
    const { values } = parse(rest, { payment: { type: 'string' }, 'include-secret': { type: 'boolean' } });
    const paymentId = required(values.payment, '--payment');
    print(await withDatabase(config, log, (pool) => exportDeposit(pool, config, paymentId, values['include-secret'] === true)));
    return 0;
  }
  if (command === undefined || command === 'help' || command === '--help') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  throw new UsageError(`unknown command "${[command, sub].filter(Boolean).join(' ')}" (run "kassa help" for the list)`);
}

function oneLine(error: unknown): string {
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof StoreInputError || error instanceof UnknownStoreError || error instanceof DepositExportError) {
    return error.message.split('\n')[0]!;
  }
  if (isDatabaseUnavailable(error)) {
    const detail = error instanceof Error ? error.message.split('\n')[0] : '';
    return `database unavailable${detail ? `: ${detail}` : ''}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n').map((line) => line.trim()).filter(Boolean).join(' ') || 'unexpected error';
}

/** Runs the command line and exits the process with its status. */
export function runCli(argv: string[]): void {
  main(argv).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`kassa: ${oneLine(error)}\n`);
      process.exit(error instanceof UsageError ? 2 : 1);
    },
  );
}

if (import.meta.main) runCli(process.argv.slice(2));
