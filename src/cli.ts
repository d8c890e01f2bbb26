// The `kassa` command (README.md). Every command but `start` prints one JSON document on stdout;
// every failure is one line on stderr and a non-zero exit.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { openDatabaseServer } from './db/embedded.ts';
import { migrate } from './db/migrate.ts';
import { openPool, isDatabaseUnavailable, type DatabasePool } from './db/pool.ts';
import { createLogger, type Logger } from './log.ts';
import path from 'node:path';
import { listTokens, parseDuration, UnknownStoreError } from './auth/tokens.ts';
import { isTokenScope, SCOPE_LABELS, TOKEN_SCOPES } from './auth/scopes.ts';
import { issueAuditedToken, revokeAuditedToken } from './dashboard/tokens.ts';
import { createStore, DEFAULT_METHODS, listStores, parseMethodList, parseTreasury, STORE_UPDATE_FLAGS, StoreInputError } from './stores/stores.ts';
import { configuredDepositPublicKey, depositPublicKey, generateMasterKey } from './payments/deposit.ts';
import { readRunRecords, type RunRecord } from './runState.ts';
import { DepositExportError, exportDeposit } from './payments/depositExport.ts';
import { rotateSigningKey } from './webhooks/keys.ts';
import { runUntilSignal, startService } from './server.ts';
import { runOperationsCommand } from './operations/commands.ts';
import { createChainClient } from './chain/client.ts';
import { sharedRequestBudget } from './chain/sharedBudget.ts';
import { SANDBOX_TONCENTER_PATH } from './chain/sandbox/path.ts';
import { gasReport, recordRefundGasPayment } from './treasury/gas.ts';
import { decimalPlaces, isPositiveDecimalString, toBaseUnits } from './money.ts';
import { CLI_ACTOR } from './dashboard/audit.ts';
import { changeStore } from './dashboard/settings.ts';
import { createInvitation, FormProblem, normalizeEmail, ROLES, roleOf, UnknownStoreForInvitation } from './dashboard/people.ts';

class UsageError extends Error {
  override name = 'UsageError';
}

/** Each command's help: `kassa help`, `kassa --help`/`-h`, `kassa <command> --help`. */
const COMMANDS: Array<{ name: string; usage: string; summary: string; options?: string[] }> = [
  {
    name: 'start',
    usage: 'kassa start [--api | --worker]',
    summary: 'Migrates the database, then serves the API and checkout and runs the worker until SIGTERM/SIGINT. Prints logs (pino JSON).',
    options: ['--api      serve the API and checkout only', '--worker   run the worker (chain reader, expiry, webhooks) only'],
  },
  { name: 'migrate', usage: 'kassa migrate', summary: 'Applies the database migrations. Prints {"migrated": true}.' },
  {
    name: 'store create',
    usage: 'kassa store create --name NAME [--methods TON/TON,USDT/TON] [--treasury ADDRESS]',
    summary: 'Creates a store. Prints the store: {"id", "name", "displayName", "logoUrl", "accentColor", "methods": [{"id", "coin", "chain"}], "treasury"}.',
    options: [
      "--name NAME        the store's name (required)",
      '--methods LIST     comma-separated COIN/CHAIN payment methods (default TON/TON,USDT/TON)',
      "--treasury ADDRESS where the store's money is swept (a basechain address of the configured network)",
    ],
  },
  {
    name: 'store update',
    usage:
      'kassa store update ID [--name NAME] [--treasury ADDRESS] [--display-name NAME] [--logo-url https://…] [--accent-color #RRGGBB] [--methods TON/TON,USDT/TON]',
    summary:
      'Changes a store: its name, treasury, payment methods, its face on the checkout page ("" clears a field). Writes the audit log (the dashboard\'s Settings page does the same). Prints the store.',
    options: [
      "--name NAME           the store's name",
      "--treasury ADDRESS    where the store's money is swept",
      '--display-name NAME   the name customers see',
      '--logo-url URL        an https logo',
      "--accent-color #RRGGBB the main button's colour",
      '--methods LIST        the payment methods the store takes from now on (COIN/CHAIN, comma-separated)',
    ],
  },
  {
    name: 'store list',
    usage: 'kassa store list',
    summary: 'Lists every store, oldest first. Prints {"data": [{"id", "name", "methods", "treasury", "displayName", "logoUrl", "accentColor", "createdAt"}]}.',
  },
  {
    name: 'token issue',
    usage: 'kassa token issue --store ID [--expires-in 30d] [--scope full|read_only|create_payments]',
    summary:
      'Issues an API token for a store (written to the audit log, actor "cli"). Prints {"token", "jti", "expiresAt", "scope"} (expiresAt null: never expires).',
    options: [
      "--store ID          the store's id (required)",
      '--expires-in TIME   lifetime such as 3600s, 90m, 12h, 30d or never (default: never)',
      `--scope SCOPE       what the token may do: ${TOKEN_SCOPES.map((scope) => `${scope} (${SCOPE_LABELS[scope]})`).join(', ')}; default full`,
    ],
  },
  {
    name: 'token list',
    usage: 'kassa token list --store ID',
    summary:
      'Lists a store\'s tokens, newest first, without secrets. Prints {"data": [{"jti", "issuedAt", "expiresAt", "revokedAt", "lastUsedAt", "scope", "state"}]} (lastUsedAt to the minute; scope full, read_only or create_payments; state active, expired or revoked).',
    options: ["--store ID          the store's id (required)"],
  },
  {
    name: 'token revoke',
    usage: 'kassa token revoke JTI',
    summary: 'Revokes a token at once by its jti (written to the audit log, actor "cli"). Prints {"revoked": "JTI"}; an unknown jti exits 1.',
  },
  {
    name: 'keys rotate',
    usage: 'kassa keys rotate',
    summary: 'Makes a new webhook signing key active; the old one stays published for 24 hours. Prints {"kid"}.',
  },
  {
    name: 'keys generate',
    usage: 'kassa keys generate',
    summary:
      'Makes a new deposit master key (no database needed). Prints {"masterKey", "depositPublicKey", "keep"}: set masterKey as KASSA_MASTER_KEY where the worker runs and depositPublicKey as KASSA_DEPOSIT_PUBLIC_KEY on API-only processes.',
  },
  {
    name: 'keys deposit-public',
    usage: 'kassa keys deposit-public',
    summary: 'Prints {"publicKey"}: set it as KASSA_DEPOSIT_PUBLIC_KEY on API processes, which then need no KASSA_MASTER_KEY.',
  },
  {
    name: 'deposits export',
    usage: 'kassa deposits export --payment ID [--include-secret]',
    summary:
      "Prints what a person needs to move a deposit's money with a standard wallet tool (wallet version, id, public key; the private key only with --include-secret).",
    options: ['--payment ID        the payment (required)', '--include-secret    include the private key'],
  },
  {
    name: 'gas',
    usage: 'kassa gas',
    summary:
      'Prints the gas wallet (it pays the TON jetton transfers out of deposits need): {"address", "addressRaw", "network", "balance"} (balance in TON, null with "balanceError" when the chain API cannot be asked). Fund it at that address; the sandbox funds it at start.',
  },
  {
    name: 'gas paid',
    usage: 'kassa gas paid --store ID --amount TON [--note TEXT]',
    summary:
      'Records TON a store paid for its jetton refunds\' gas (they are paid from the shared gas wallet; a store\'s jetton refund is refused unless what it paid covers it; a negative amount corrects). Prints the store\'s account {"storeId", "paid", "spent", "available"} in TON.',
    options: ['--store ID        the store (required)', '--amount TON      TON paid, e.g. 1 (required)', '--note TEXT       e.g. the transaction that paid it'],
  },
  {
    name: 'doctor',
    usage: 'kassa doctor',
    summary:
      "Checks a configuration before real money (BASE_URL, TON_API_KEY and the chain API, every accepted coin's jetton master on chain, the gas wallet's balance against the jetton sweeps and refunds waiting for gas, the master key). Prints one check per line; exits 1 when one fails.",
  },
  {
    name: 'dashboard invite',
    usage: 'kassa dashboard invite --store STORE_ID --email EMAIL [--role owner|viewer] [--reset-password]',
    summary:
      'Makes a one-time sign-in link to the dashboard for that person in that store (valid 24 hours, single use). Prints {"url", "storeId", "email", "role", "expiresAt"}.',
    options: [
      "--store ID          the store's id (required)",
      '--email EMAIL       who is invited (required)',
      '--role ROLE         owner (everything) or viewer (read-only); default owner',
      '--reset-password    a password reset for a member of the store: the link sets a new password and signs them out everywhere (their role stays)',
    ],
  },
  { name: 'coins list', usage: 'kassa coins list', summary: 'Lists the coins with their decimals and jetton masters per network.' },
  {
    name: 'coins set-master',
    usage: 'kassa coins set-master COIN --network mainnet|testnet|sandbox ADDRESS',
    summary: "Sets a coin's jetton master on the configured network, after verifying it on chain (get_jetton_data).",
    options: ['--network NETWORK   must be the configured TON_NETWORK'],
  },
  {
    name: 'coins set-price-id',
    usage: 'kassa coins set-price-id COIN ID|none',
    summary:
      "Sets the coin's CoinGecko id (coins.coingecko_id), by which the second price source confirms its rates; none clears it. A coin without one is never priced from another currency.",
  },
];

const USAGE = `usage:\n${COMMANDS.map((command) => `  ${command.usage}`).join('\n')}\n\nkassa help COMMAND (or kassa COMMAND --help) describes a command.`;

function fullHelp(): string {
  const body = COMMANDS.map((command) =>
    [`  ${command.usage}`, `      ${command.summary}`, ...(command.options ?? []).map((option) => `      ${option}`)].join('\n'),
  );
  return [
    'kassa: a self-hosted crypto payment service.',
    'Every command but start prints one JSON document on stdout; a failure is one line on stderr and',
    'exit 1 (2 for usage errors). Configuration comes from the environment (see README).',
    '',
    'commands:',
    body.join('\n\n'),
  ].join('\n');
}

function commandHelp(name: string): string | null {
  const command = COMMANDS.find((candidate) => candidate.name === name) ?? null;
  if (command === null) return null;
  return [`usage: ${command.usage}`, '', command.summary, ...(command.options ? ['', 'options:', ...command.options.map((option) => `  ${option}`)] : [])].join(
    '\n',
  );
}

const HELP_FLAGS = ['--help', '-h'];

/** The help asked for, if any: `help [COMMAND]`, `--help`, `-h`, or `COMMAND … --help`. */
function helpFor(argv: string[]): string | null {
  const [command, ...rest] = argv;
  if (command === 'help' || (command !== undefined && HELP_FLAGS.includes(command))) {
    if (rest.length === 0) return fullHelp();
    const named = commandHelp(rest.join(' '));
    if (named === null) throw new UsageError(`unknown command "${rest.join(' ')}" (run "kassa help" for the list)`);
    return named;
  }
  if (!argv.some((arg) => HELP_FLAGS.includes(arg))) return null;
  const words = argv.filter((arg) => !arg.startsWith('-'));
  return commandHelp(words.slice(0, 2).join(' ')) ?? commandHelp(words.slice(0, 1).join(' ')) ?? fullHelp();
}

/**
 * `--option -1:…` as `--option=-1:…`: a value of a string option may begin with one dash (a
 * masterchain address, so that its check can refuse it properly); Kassa has no one-dash options.
 */
function joinDashValues(args: string[], options: Record<string, { type: 'string' | 'boolean' }>): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    const next = args[i + 1];
    if (arg.startsWith('--') && options[arg.slice(2)]?.type === 'string' && next !== undefined && /^-(?!-)/.test(next)) {
      joined.push(`${arg}=${next}`);
      i += 1;
    } else joined.push(arg);
    if (arg === '--') {
      joined.push(...args.slice(i + 1));
      break;
    }
  }
  return joined;
}

function parse(args: string[], options: Record<string, { type: 'string' | 'boolean' }>, positionals = 0) {
  try {
    const parsed = parseArgs({ args: joinDashValues(args, options), options, allowPositionals: positionals > 0, strict: true });
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

/**
 * Opens the database (embedded when DATABASE_URL is unset), migrates it, runs `work`, closes.
 * `running`: the `kassa start` processes of this directory; one that uses a DATABASE_URL of its
 * own while this command has none would otherwise send the command to another, empty database.
 */
async function withDatabase<T>(config: Config, log: Logger, work: (pool: DatabasePool) => Promise<T>, running: readonly RunRecord[] = []): Promise<T> {
  const external = running.find((record) => record.embeddedPgPort === null);
  if (config.databaseUrl === null && external && !running.some((record) => record.embeddedPgPort !== null)) {
    throw new ConfigError(
      `kassa start (pid ${external.pid}) runs from this directory with a DATABASE_URL of its own: set DATABASE_URL to the same database for this command`,
    );
  }
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
  const help = helpFor(argv);
  if (help !== null) {
    process.stdout.write(`${help}\n`);
    return 0;
  }
  if (command === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  if (command === 'keys' && sub === 'generate') {
    parse(rest, {});
    // Needs no configuration and no database: a key made for another machine.
    print(generateMasterKey());
    return 0;
  }
  // A second terminal: what `kassa start` recorded in ./.kassa/run fills in what the environment leaves unsaid.
  const running = command === 'start' ? [] : readRunRecords(path.resolve('.kassa'));
  const config = loadConfig(process.env, process.cwd(), running);
  // The one-shot commands' one clock reading, at the CLI's edge: the time the command was given.
  const now = new Date();
  if (command === 'start') {
    const { values } = parse(argv.slice(1), { api: { type: 'boolean' }, worker: { type: 'boolean' } });
    if (values.api && values.worker) throw new UsageError('--api and --worker are exclusive (give neither to run both)');
    const log = createLogger(config.logLevel);
    const parts = { api: !values.worker, worker: !values.api };
    // The service's clock: the wall clock, read by whatever runs (every part takes it from here).
    const service = await startService(config, parts, log, () => new Date());
    await runUntilSignal(service, log);
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  }
  // Other commands keep stdout for their JSON document; logs go to stderr, warnings and up.
  const verbose = ['debug', 'trace', 'silent'].includes(config.logLevel);
  const log = pino({ level: verbose ? config.logLevel : 'warn' }, pino.destination(2));
  if (command === 'migrate') {
    parse(argv.slice(1), {});
    await withDatabase(config, log, async () => {}, running);
    print({ migrated: true });
    return 0;
  }
  if (command === 'store' && sub === 'create') {
    const { values } = parse(rest, { name: { type: 'string' }, methods: { type: 'string' }, treasury: { type: 'string' } });
    const name = required(values.name, '--name');
    const methods = parseMethodList(typeof values.methods === 'string' ? values.methods : DEFAULT_METHODS);
    const treasury = values.treasury === undefined ? null : parseTreasury(required(values.treasury, '--treasury'), config.tonNetwork);
    print(await withDatabase(config, log, (pool) => createStore(pool, name, methods, { treasury }), running));
    return 0;
  }
  if (command === 'store' && sub === 'update') {
    const { values, positionals } = parse(rest, Object.fromEntries(STORE_UPDATE_FLAGS.map((flag) => [flag, { type: 'string' as const }])), 1);
    const given = Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    const change = (pool: DatabasePool) =>
      changeStore(pool, { storeId: positionals[0]!, given, network: config.tonNetwork, actor: CLI_ACTOR, now }).then((changed) => changed.store);
    print(await withDatabase(config, log, change, running));
    return 0;
  }
  if (command === 'token' && sub === 'issue') {
    const { values } = parse(rest, { store: { type: 'string' }, 'expires-in': { type: 'string' }, scope: { type: 'string' } });
    const storeId = required(values.store, '--store');
    const scope = values.scope === undefined ? 'full' : values.scope;
    if (!isTokenScope(scope)) throw new UsageError(`--scope must be one of ${TOKEN_SCOPES.join(', ')}`);
    let expiresIn: number | null;
    try {
      expiresIn = typeof values['expires-in'] === 'string' ? parseDuration(values['expires-in']) : null;
    } catch (error) {
      throw new UsageError(`--expires-in: ${(error as Error).message}`);
    }
    print(await withDatabase(config, log, (pool) => issueAuditedToken(pool, { storeId, expiresInSeconds: expiresIn, scope }, CLI_ACTOR, now), running));
    return 0;
  }
  if (command === 'store' && sub === 'list') {
    parse(rest, {});
    print(await withDatabase(config, log, (pool) => listStores(pool), running));
    return 0;
  }
  if (command === 'token' && sub === 'list') {
    const { values } = parse(rest, { store: { type: 'string' } });
    const storeId = required(values.store, '--store');
    print({ data: await withDatabase(config, log, (pool) => listTokens(pool, storeId, now), running) });
    return 0;
  }
  if (command === 'token' && sub === 'revoke') {
    const { positionals } = parse(rest, {}, 1);
    const jti = positionals[0]!;
    const revoked = await withDatabase(config, log, (pool) => revokeAuditedToken(pool, jti, CLI_ACTOR, now), running);
    // A well-formed command naming no token: not a usage error (exit 1).
    if (!revoked) throw new Error(`no token with jti "${jti}"`);
    print({ revoked: jti });
    return 0;
  }
  if (command === 'keys' && sub === 'rotate') {
    parse(rest, {});
    print({ kid: await withDatabase(config, log, (pool) => rotateSigningKey(pool, now), running) });
    return 0;
  }
  if (command === 'keys' && sub === 'deposit-public') {
    parse(rest, {});
    // Set as KASSA_DEPOSIT_PUBLIC_KEY on API processes, which then need no KASSA_MASTER_KEY.
    const key = configuredDepositPublicKey(config) ?? (await withDatabase(config, log, (pool) => depositPublicKey(pool, config), running));
    print({ publicKey: key.toString('hex') });
    return 0;
  }
  if (command === 'gas' && sub === 'paid') {
    const { values } = parse(rest, { store: { type: 'string' }, amount: { type: 'string' }, note: { type: 'string' } });
    const storeId = required(values.store, '--store');
    const amount = required(values.amount, '--amount').trim();
    const negative = amount.startsWith('-');
    if (!isPositiveDecimalString(negative ? amount.slice(1) : amount) || decimalPlaces(amount.replace('-', '')) > 9)
      throw new UsageError('--amount must be an amount of TON, e.g. 1 or 0.5 (at most 9 decimals; negative to correct)');
    const units = toBaseUnits(negative ? amount.slice(1) : amount, 9);
    print(
      await withDatabase(
        config,
        log,
        (pool) =>
          recordRefundGasPayment(pool, {
            storeId,
            amountBaseUnits: negative ? -units : units,
            note: typeof values.note === 'string' ? values.note : null,
            now,
          }),
        running,
      ),
    );
    return 0;
  }
  if (command === 'gas') {
    parse(argv.slice(1), {});
    const apiRoot = config.tonApiUrl ?? `${config.baseUrl}${SANDBOX_TONCENTER_PATH}`;
    // Through the deployment's shared chain budget, like the service.
    print(
      await withDatabase(
        config,
        log,
        (pool) => {
          const budget = sharedRequestBudget(pool, { apiRoot, apiKey: config.tonApiKey, rps: config.tonApiRps });
          return gasReport(pool, config, createChainClient({ endpoint: `${apiRoot}/api/v2/jsonRPC`, apiKey: config.tonApiKey, timeoutMs: 10_000, budget }));
        },
        running,
      ),
    );
    return 0;
  }
  if (command === 'deposits' && sub === 'export') {
    const { values } = parse(rest, { payment: { type: 'string' }, 'include-secret': { type: 'boolean' } });
    const paymentId = required(values.payment, '--payment');
    print(await withDatabase(config, log, (pool) => exportDeposit(pool, config, paymentId, values['include-secret'] === true), running));
    return 0;
  }
  if (command === 'dashboard' && sub === 'invite') {
    const { values } = parse(rest, { store: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' }, 'reset-password': { type: 'boolean' } });
    const storeId = required(values.store, '--store');
    const resetsPassword = values['reset-password'] === true;
    const email = required(values.email, '--email');
    const role = roleOf(values.role ?? 'owner');
    if (role === null) throw new UsageError(`--role is ${ROLES.join(' or ')}`);
    if (normalizeEmail(email) === null) throw new UsageError(`--email: "${email}" is not an email address`);
    const invitation = await withDatabase(
      config,
      log,
      (pool) => createInvitation(pool, { storeId, email, role, resetsPassword, baseUrl: config.baseUrl, actor: CLI_ACTOR, now }),
      running,
    );
    print({ url: invitation.url, storeId: invitation.storeId, email: invitation.email, role: invitation.role, expiresAt: invitation.expiresAt.toISOString() });
    return 0;
  }
  const operations = await runOperationsCommand(argv, {
    config,
    parse,
    withDatabase: (work) => withDatabase(config, log, work, running),
    usage: (message) => new UsageError(message),
    print,
  });
  if (operations !== undefined) return operations;
  throw new UsageError(`unknown command "${[command, sub].filter(Boolean).join(' ')}" (run "kassa help" for the list)`);
}

function oneLine(error: unknown): string {
  if (
    error instanceof UsageError ||
    error instanceof ConfigError ||
    error instanceof StoreInputError ||
    error instanceof UnknownStoreError ||
    error instanceof DepositExportError ||
    error instanceof UnknownStoreForInvitation ||
    error instanceof FormProblem
  ) {
    return error.message.split('\n')[0]!;
  }
  if (isDatabaseUnavailable(error)) {
    const detail = error instanceof Error ? error.message.split('\n')[0] : '';
    return `database unavailable${detail ? `: ${detail}` : ''}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return (
    message
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .join(' ') || 'unexpected error'
  );
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
