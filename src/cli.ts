// The `kassa` command (README.md). Every command but `start` prints one JSON document on stdout;
// every failure is one line on stderr and a non-zero exit.
// Each command imports what it uses when it runs (`kassa --help` loads no database, chain or
// HTTP module): bench/cli.ts measures what that saves.
import module from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, configErrorOf, databaseProblem, readConfig, type Config } from './config.ts';
import type { DatabasePool } from './db/pool.ts';
import type { Logger } from './log.ts';
import { readRunRecords, type RunRecord } from './runState.ts';
import { SCOPE_LABELS, TOKEN_SCOPES } from './auth/scopes.ts';

class UsageError extends Error {
  override name = 'UsageError';
}

/** Each command's help: `kassa help`, `kassa --help`/`-h`, `kassa <command> --help`. */
const COMMANDS: Array<{ name: string; usage: string; summary: string; options?: string[] }> = [
  {
    name: 'start',
    usage: 'kassa start [--api | --worker] [--skip-migrate]',
    summary:
      'Migrates the database (through DATABASE_SESSION_URL), then serves the API and checkout and runs the worker until SIGTERM/SIGINT. Prints logs: one readable line each on a terminal, pino JSON otherwise. Refuses to start with every configuration problem in one message.',
    options: [
      '--api      serve the API and checkout only',
      '--worker   run the worker (chain reader, expiry, webhooks) only',
      '--skip-migrate   do not migrate (kassa migrate is the release step); refuses to start while a migration is not applied',
    ],
  },
  {
    name: 'migrate',
    usage: 'kassa migrate',
    summary:
      'Applies the database migrations through DATABASE_SESSION_URL (DATABASE_URL when unset), the release step before kassa start --skip-migrate; refused when that URL goes through a pooler in transaction mode. Prints {"migrated": true}.',
  },
  {
    name: 'store create',
    usage: 'kassa store create --name NAME [--methods TON/TON,USDT/TON] [--treasury ADDRESS]',
    summary:
      'Creates a store (its refund window 7 days: `store update --refund-window-days`). Prints the store: {"id", "name", "displayName", "logoUrl", "accentColor", "methods": [{"id", "coin", "chain"}], "treasury", "settlement", "refundWindowDays", "telegramBot", "telegramApp", "telegramBotID"}.',
    options: [
      "--name NAME        the store's name (required)",
      '--methods LIST     comma-separated COIN/CHAIN payment methods (default TON/TON,USDT/TON)',
      "--treasury ADDRESS where the store's money is swept (a basechain address of the configured network)",
    ],
  },
  {
    name: 'store update',
    usage:
      'kassa store update ID [--name NAME] [--treasury ADDRESS] [--display-name NAME] [--logo-url https://…] [--accent-color #RRGGBB] [--methods TON/TON,USDT/TON] [--refund-window-days N] [--telegram-bot USERNAME] [--telegram-app SHORT_NAME] [--telegram-bot-id N] [--embed-origins https://shop.example,…] [--settlement deposit|treasury] [--unmatched-dust AMOUNT]',
    summary:
      'Changes a store: its name, treasury, refund window, payment methods, its face on the checkout page, its Telegram Mini App ("" clears a field). Writes the audit log (the dashboard\'s Settings page does the same). Prints the store.',
    options: [
      "--name NAME           the store's name",
      "--treasury ADDRESS    where the store's money is swept",
      '--display-name NAME   the name customers see',
      '--logo-url URL        an https logo',
      "--accent-color #RRGGBB the main button's colour",
      '--methods LIST        the payment methods the store takes from now on (COIN/CHAIN, comma-separated)',
      '--refund-window-days N days (0–90) a completed sale stays refundable from its deposit before it is swept; 0: swept at once (sales completed from now on)',
      "--telegram-bot NAME   the username of the store's Telegram bot: payments carry telegramURL (https://t.me/<bot>/<app>?startapp=<id>)",
      "--telegram-app NAME   the short name of the bot's Mini App (BotFather's /newapp, its URL {checkout_base_url}/tg)",
      "--telegram-bot-id N   the bot's numeric id (the digits before its token's colon): Telegram's init data is checked with it, no token",
      '--embed-origins LIST  origins (https://host[:port], comma-separated) whose pages may embed <kassa-pay>; "" lists none',
      "--settlement MODE     deposit (a deposit wallet per payment, swept to the treasury) or treasury (customers pay the treasury itself with the payment's reference as the comment: no sweep cost, no key; needs --treasury). Payments created from now on take it",
      '--unmatched-dust AMOUNT unmatched money in the treasury below this amount of its coin (default 0.01: 0.01 TON, 0.01 USDT) is listed but raises no alert (no money.unmatched event); 0: every one does',
    ],
  },
  {
    name: 'store list',
    usage: 'kassa store list',
    summary:
      'Lists every store, oldest first. Prints {"data": [{"id", "name", "methods", "treasury", "settlement", "refundWindowDays", "telegramBot", "telegramApp", "telegramBotID", "embedOrigins", "displayName", "logoUrl", "accentColor", "createdAt"}]}.',
  },
  {
    name: 'token issue',
    usage: 'kassa token issue --store ID [--name NAME] [--expires-in 30d] [--scope full|read_only|create_payments]',
    summary:
      'Issues an API token for a store (written to the audit log, actor "cli"). Prints {"token", "jti", "expiresAt", "scope", "name"} (expiresAt null: never expires; name null: none given).',
    options: [
      "--store ID          the store's id (required)",
      '--name NAME         what uses the token, e.g. "shop backend" (at most 100 characters; shown in token lists and the dashboard)',
      '--expires-in TIME   lifetime such as 3600s, 90m, 12h, 30d or never (default: never)',
      `--scope SCOPE       what the token may do: ${TOKEN_SCOPES.map((scope) => `${scope} (${SCOPE_LABELS[scope]})`).join(', ')}; default full`,
    ],
  },
  {
    name: 'token list',
    usage: 'kassa token list --store ID',
    summary:
      'Lists a store\'s tokens, newest first, without secrets. Prints {"data": [{"jti", "name", "issuedAt", "expiresAt", "revokedAt", "lastUsedAt", "scope", "state"}]} (lastUsedAt to the minute; scope full, read_only or create_payments; state active, expired or revoked).',
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
      "Checks a configuration before real money (every configuration problem as a failed check, BASE_URL, TON_API_KEY and the chain API, the database: reachable, migrated, not the embedded one off sandbox, backups; every accepted coin's jetton master on chain, the gas wallet's balance against the jetton sweeps and refunds waiting for gas, the master key). Always prints its checks, one per line; exits 1 when one fails.",
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
      '--reset-password    a password reset for a member of the store: the link (1 hour, replacing older ones) sets a new password, signs them out everywhere and removes their passkeys (their role stays)',
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
    name: 'plan create',
    usage:
      'kassa plan create --store ID --name NAME --currency USD|TON|… --amount PRICE --interval day|week|month|year [--interval-count N] [--trial-days N] [--grace-days N] [--reminder-days N]',
    summary:
      'Creates a subscription plan for the store (POST /v1/plans): its price per period in a currency or a coin, and its period by the calendar. Prints the plan: {"id", "name", "currency", "amount", "interval", "intervalCount", "trialDays", "graceDays", "reminderDays", "active", "createdAt"}.',
    options: [
      "--store ID          the store's id (required)",
      '--name NAME         the name customers see (required)',
      "--currency CODE     the price's currency: a fiat code (USD, EUR…) or a coin (TON, USDT…); the subscriptions' credit is kept in it",
      '--amount PRICE      the price of one period',
      '--interval UNIT     day, week, month or year (Jan 31 + 1 month = the end of February)',
      '--interval-count N  how many units a period lasts (default 1)',
      '--trial-days N      free days before the first period (default 0)',
      '--grace-days N      days a subscription stays past due before it expires (default 3)',
      '--reminder-days N   days before a period ends that the store is told when the credit will not cover it (default 3; 0: none)',
    ],
  },
  { name: 'plan list', usage: 'kassa plan list --store ID', summary: 'Lists the store\'s plans, newest first. Prints {"data": [plan]}.' },
  {
    name: 'plan archive',
    usage: 'kassa plan archive PLAN_ID --store ID',
    summary: 'Archives a plan: no new subscriptions to it; its subscribers go on. Prints the plan ("active": false).',
  },
  {
    name: 'subscription create',
    usage: 'kassa subscription create --store ID --plan PLAN_ID --customer REFERENCE [--email ADDRESS] [--telegram-user-id N] [--trial-days N]',
    summary:
      'Subscribes a customer (POST /v1/subscriptions): trialing, or, without a trial, past due with its first payment open at once (checkoutURL). Prints the subscription: {"id", "status", "planID", "customer", "currentPeriodEnd", "credit", "checkoutURL"?, "telegramURL"?, "portalURL" (shown this once: Kassa keeps only its hash), …}.',
    options: [
      "--store ID            the store's id (required)",
      '--plan PLAN_ID        an active plan of the store (required)',
      "--customer REFERENCE  the shop's own reference for the customer (required)",
      "--email ADDRESS       the customer's email",
      "--telegram-user-id N  the customer's Telegram user id",
      "--trial-days N        free days before the first period, instead of the plan's",
    ],
  },
  {
    name: 'subscription list',
    usage: 'kassa subscription list --store ID [--status trialing|active|past_due|expired|cancelled] [--customer REFERENCE]',
    summary: 'Lists the store\'s subscriptions, newest first (at most 1,000). Prints {"data": [subscription]}.',
  },
  {
    name: 'subscription show',
    usage: 'kassa subscription show SUBSCRIPTION_ID --store ID',
    summary: 'Prints the subscription with its ledger (every credit, charge, adjustment and refund, oldest first) as "ledger".',
  },
  {
    name: 'subscription cancel',
    usage: 'kassa subscription cancel SUBSCRIPTION_ID --store ID [--at-period-end]',
    summary:
      'Cancels a subscription now, or at the end of the period it has (--at-period-end). Written to the audit log (actor "cli"). Prints the subscription.',
  },
  {
    name: 'subscription credit',
    usage: 'kassa subscription credit SUBSCRIPTION_ID --store ID --amount AMOUNT --note WHY',
    summary:
      'Adds credit by hand, in the plan\'s currency (money paid another way, a goodwill gesture): a ledger adjustment (actor "cli", the note) and an audit row; a period due is charged from it at once. Prints the subscription.',
  },
  {
    name: 'subscription portal',
    usage: 'kassa subscription portal SUBSCRIPTION_ID --store ID',
    summary:
      'Gives the customer\'s portal a new secret link (POST /v1/subscriptions/{id}/portal): the old link stops working at once. Written to the audit log (actor "cli"). Prints the subscription with its new "portalURL", shown this once (Kassa keeps only its hash).',
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
async function withDatabase<T>(
  config: Config,
  log: Logger,
  work: (pool: DatabasePool) => Promise<T>,
  running: readonly RunRecord[] = [],
  refusePooler = false,
): Promise<T> {
  const [{ openDatabaseServer }, { migrate }, { openPool }, { refuseTransactionPooler }] = await Promise.all([
    import('./db/embedded.ts'),
    import('./db/migrate.ts'),
    import('./db/pool.ts'),
    import('./db/pooling.ts'),
  ]);
  const refused = databaseProblem(config);
  if (refused !== null) throw configErrorOf([refused]);
  const external = running.find((record) => record.embeddedPgPort === null);
  if (config.databaseUrl === null && external && !running.some((record) => record.embeddedPgPort !== null)) {
    throw new ConfigError(
      `kassa start (pid ${external.pid}) runs from this directory with a DATABASE_URL of its own: set DATABASE_URL to the same database for this command`,
    );
  }
  const server = await openDatabaseServer(config, log);
  try {
    // A one-shot command is an operator's: it migrates and works through the session URL.
    if (refusePooler) await refuseTransactionPooler(server.sessionUrl, 'kassa migrate');
    await migrate(server.sessionUrl, log);
    const pool = await openPool(server.sessionUrl, { maxPoolSize: 2 });
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

async function main(argv: string[]): Promise<number> {
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
    const { generateMasterKey } = await import('./payments/deposit.ts');
    print(generateMasterKey());
    return 0;
  }
  // A second terminal: what `kassa start` recorded in ./.kassa/run fills in what the environment leaves unsaid.
  const running = command === 'start' ? [] : readRunRecords(path.resolve('.kassa'));
  // Every problem of the configuration at once: `start` adds its own before refusing, `doctor`
  // shows them as failed checks, the other commands refuse to run with any.
  const { config, problems } = readConfig(process.env, process.cwd(), running);
  if (problems.length > 0 && command !== 'start' && command !== 'doctor') throw configErrorOf(problems);
  // The one-shot commands' one clock reading, at the CLI's edge: the time the command was given.
  const now = new Date();
  if (command === 'start') {
    const { values } = parse(argv.slice(1), { api: { type: 'boolean' }, worker: { type: 'boolean' }, 'skip-migrate': { type: 'boolean' } });
    if (values.api && values.worker) throw new UsageError('--api and --worker are exclusive (give neither to run both)');
    const [{ createLogger }, { runUntilSignal, startService }] = await Promise.all([import('./log.ts'), import('./server.ts')]);
    // A person at a terminal reads lines; anything else (a pipe, a file, a collector) gets pino JSON.
    const log = createLogger(config.logLevel, { pretty: process.stdout.isTTY === true });
    const parts = { api: !values.worker, worker: !values.api };
    // The service's clock: the wall clock, read by whatever runs (every part takes it from here).
    const service = await startService(config, parts, log, () => new Date(), problems, { migrate: !values['skip-migrate'] });
    await runUntilSignal(service, log);
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  }
  // Other commands keep stdout for their JSON document; logs go to stderr, warnings and up.
  const verbose = ['debug', 'trace', 'silent'].includes(config.logLevel);
  const { pino } = await import('pino');
  const log = pino({ level: verbose ? config.logLevel : 'warn' }, pino.destination(2));
  const database = <T>(work: (pool: DatabasePool) => Promise<T>) => withDatabase(config, log, work, running);
  if (command === 'migrate') {
    parse(argv.slice(1), {});
    await withDatabase(config, log, async () => {}, running, true);
    print({ migrated: true });
    return 0;
  }
  if (command === 'store' && sub === 'create') {
    const { values } = parse(rest, { name: { type: 'string' }, methods: { type: 'string' }, treasury: { type: 'string' } });
    const name = required(values.name, '--name');
    const { createStore, DEFAULT_METHODS, parseMethodList, parseTreasury } = await import('./stores/stores.ts');
    const methods = parseMethodList(typeof values.methods === 'string' ? values.methods : DEFAULT_METHODS);
    const treasury = values.treasury === undefined ? null : parseTreasury(required(values.treasury, '--treasury'), config.tonNetwork);
    print(await database((pool) => createStore(pool, name, methods, { treasury })));
    return 0;
  }
  if (command === 'store' && sub === 'update') {
    const [{ STORE_UPDATE_FLAGS }, { changeStore }, { CLI_ACTOR }] = await Promise.all([
      import('./stores/stores.ts'),
      import('./dashboard/settings.ts'),
      import('./dashboard/audit.ts'),
    ]);
    const { values, positionals } = parse(rest, Object.fromEntries(STORE_UPDATE_FLAGS.map((flag) => [flag, { type: 'string' as const }])), 1);
    const given = Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    const change = (pool: DatabasePool) =>
      changeStore(pool, { storeId: positionals[0]!, given, network: config.tonNetwork, actor: CLI_ACTOR, now }).then((changed) => changed.store);
    print(await database(change));
    return 0;
  }
  if (command === 'store' && sub === 'list') {
    parse(rest, {});
    const { listStores } = await import('./stores/stores.ts');
    print(await database((pool) => listStores(pool)));
    return 0;
  }
  if (command === 'token' && sub === 'issue') {
    const { values } = parse(rest, { store: { type: 'string' }, name: { type: 'string' }, 'expires-in': { type: 'string' }, scope: { type: 'string' } });
    const storeId = required(values.store, '--store');
    const scope = values.scope === undefined ? 'full' : values.scope;
    const [{ isTokenScope }, { parseDuration, tokenName }, { issueAuditedToken }, { CLI_ACTOR }] = await Promise.all([
      import('./auth/scopes.ts'),
      import('./auth/tokens.ts'),
      import('./dashboard/tokens.ts'),
      import('./dashboard/audit.ts'),
    ]);
    if (!isTokenScope(scope)) throw new UsageError(`--scope must be one of ${TOKEN_SCOPES.join(', ')}`);
    let expiresIn: number | null;
    let name: string | null;
    try {
      expiresIn = typeof values['expires-in'] === 'string' ? parseDuration(values['expires-in']) : null;
    } catch (error) {
      throw new UsageError(`--expires-in: ${(error as Error).message}`);
    }
    try {
      name = values.name === undefined ? null : tokenName(required(values.name, '--name'));
    } catch (error) {
      throw new UsageError(`--name: ${(error as Error).message}`);
    }
    print(await database((pool) => issueAuditedToken(pool, { storeId, expiresInSeconds: expiresIn, scope, name }, CLI_ACTOR, now)));
    return 0;
  }
  if (command === 'token' && sub === 'list') {
    const { values } = parse(rest, { store: { type: 'string' } });
    const storeId = required(values.store, '--store');
    const { listTokens } = await import('./auth/tokens.ts');
    print({ data: await database((pool) => listTokens(pool, storeId, now)) });
    return 0;
  }
  if (command === 'token' && sub === 'revoke') {
    const { positionals } = parse(rest, {}, 1);
    const jti = positionals[0]!;
    const [{ revokeAuditedToken }, { CLI_ACTOR }] = await Promise.all([import('./dashboard/tokens.ts'), import('./dashboard/audit.ts')]);
    const revoked = await database((pool) => revokeAuditedToken(pool, jti, CLI_ACTOR, now));
    // A well-formed command naming no token: not a usage error (exit 1).
    if (!revoked) throw new Error(`no token with jti "${jti}"`);
    print({ revoked: jti });
    return 0;
  }
  if (command === 'keys' && sub === 'rotate') {
    parse(rest, {});
    const { rotateSigningKey } = await import('./webhooks/keys.ts');
    print({ kid: await database((pool) => rotateSigningKey(pool, now)) });
    return 0;
  }
  if (command === 'keys' && sub === 'deposit-public') {
    parse(rest, {});
    const { configuredDepositPublicKey, depositPublicKey } = await import('./payments/deposit.ts');
    // Set as KASSA_DEPOSIT_PUBLIC_KEY on API processes, which then need no KASSA_MASTER_KEY.
    const key = configuredDepositPublicKey(config) ?? (await database((pool) => depositPublicKey(pool, config)));
    print({ publicKey: key.toString('hex') });
    return 0;
  }
  if (command === 'gas' && sub === 'paid') {
    const { values } = parse(rest, { store: { type: 'string' }, amount: { type: 'string' }, note: { type: 'string' } });
    const storeId = required(values.store, '--store');
    const amount = required(values.amount, '--amount').trim();
    const [{ decimalPlaces, isPositiveDecimalString, toBaseUnits }, { recordRefundGasPayment }] = await Promise.all([
      import('./money.ts'),
      import('./treasury/gas.ts'),
    ]);
    const negative = amount.startsWith('-');
    if (!isPositiveDecimalString(negative ? amount.slice(1) : amount) || decimalPlaces(amount.replace('-', '')) > 9)
      throw new UsageError('--amount must be an amount of TON, e.g. 1 or 0.5 (at most 9 decimals; negative to correct)');
    const units = toBaseUnits(negative ? amount.slice(1) : amount, 9);
    const note = typeof values.note === 'string' ? values.note : null;
    print(await database((pool) => recordRefundGasPayment(pool, { storeId, amountBaseUnits: negative ? -units : units, note, now })));
    return 0;
  }
  if (command === 'gas') {
    parse(argv.slice(1), {});
    const [{ createChainClient }, { sharedRequestBudget }, { SANDBOX_TONCENTER_PATH }, { gasReport }] = await Promise.all([
      import('./chain/client.ts'),
      import('./chain/sharedBudget.ts'),
      import('./chain/sandbox/path.ts'),
      import('./treasury/gas.ts'),
    ]);
    const apiRoot = config.tonApiUrl ?? `${config.baseUrl}${SANDBOX_TONCENTER_PATH}`;
    // Through the deployment's shared chain budget, like the service.
    print(
      await database((pool) => {
        const budget = sharedRequestBudget(pool, { apiRoot, apiKey: config.tonApiKey, rps: config.tonApiRps });
        return gasReport(pool, config, createChainClient({ endpoint: `${apiRoot}/api/v2/jsonRPC`, apiKey: config.tonApiKey, timeoutMs: 10_000, budget }));
      }),
    );
    return 0;
  }
  if (command === 'deposits' && sub === 'export') {
    const { values } = parse(rest, { payment: { type: 'string' }, 'include-secret': { type: 'boolean' } });
    const paymentId = required(values.payment, '--payment');
    const { exportDeposit } = await import('./payments/depositExport.ts');
    print(await database((pool) => exportDeposit(pool, config, paymentId, values['include-secret'] === true)));
    return 0;
  }
  if (command === 'dashboard' && sub === 'invite') {
    const { values } = parse(rest, { store: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' }, 'reset-password': { type: 'boolean' } });
    const storeId = required(values.store, '--store');
    const resetsPassword = values['reset-password'] === true;
    const email = required(values.email, '--email');
    const [{ createInvitation }, { normalizeEmail }, { ROLES, roleOf }, { CLI_ACTOR }] = await Promise.all([
      import('./dashboard/invitations.ts'),
      import('./dashboard/forms.ts'),
      import('./dashboard/roles.ts'),
      import('./dashboard/audit.ts'),
    ]);
    const role = roleOf(values.role ?? 'owner');
    if (role === null) throw new UsageError(`--role is ${ROLES.join(' or ')}`);
    if (normalizeEmail(email) === null) throw new UsageError(`--email: "${email}" is not an email address`);
    const invitation = await database((pool) =>
      createInvitation(pool, { storeId, email, role, resetsPassword, baseUrl: config.baseUrl, actor: CLI_ACTOR, now }),
    );
    print({ url: invitation.url, storeId: invitation.storeId, email: invitation.email, role: invitation.role, expiresAt: invitation.expiresAt.toISOString() });
    return 0;
  }
  if (command === 'plan' || command === 'subscription') {
    const { runSubscriptionCommand } = await import('./operations/subscriptions.ts');
    const done = await runSubscriptionCommand(argv, { config, now, parse, withDatabase: database, usage: (message) => new UsageError(message), print });
    if (done !== undefined) return done;
  }
  if (command === 'doctor' || command === 'coins') {
    const { runOperationsCommand } = await import('./operations/commands.ts');
    const operations = await runOperationsCommand(argv, {
      config,
      configProblems: problems,
      log,
      parse,
      withDatabase: database,
      usage: (message) => new UsageError(message),
      print,
    });
    if (operations !== undefined) return operations;
  }
  throw new UsageError(`unknown command "${[command, sub].filter(Boolean).join(' ')}" (run "kassa help" for the list)`);
}

/** Errors whose message is already the one line to print (their classes live in the modules each command loads). */
const ONE_LINE_ERRORS = new Set(['UsageError', 'ConfigError', 'FormProblem', 'DoctorFailed', 'PoolerRefusedError']);

async function oneLine(error: unknown): Promise<string> {
  if (error instanceof Error && ONE_LINE_ERRORS.has(error.name)) return error.message.split('\n')[0]!;
  const { isDatabaseUnavailable } = await import('./db/pool.ts');
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
    async (error: unknown) => {
      process.stderr.write(`kassa: ${await oneLine(error)}\n`);
      process.exit(error instanceof UsageError ? 2 : 1);
    },
  );
}

if (import.meta.main) {
  // Node keeps what it compiled (and the TypeScript it stripped) in its compile cache: a command's
  // next run skips that work (bench/cli.ts). The modules each command imports come after this.
  module.enableCompileCache?.();
  runCli(process.argv.slice(2));
}
