// The one reader of process.env. Everything else receives a Config.
import path from 'node:path';
import type { RunRecord } from './runState.ts';

/** Telegram's documented public keys (hex, raw Ed25519) for the signature of third-party validation. */
export const TELEGRAM_PUBLIC_KEYS = {
  production: 'e7bf03a2fa4602af4580703d88dda5bb59f32ed8b02a56c187fe7d34caed242d',
  test: '40055058a4ee38156a06562e52eece92a771bcd8346a8c4615cb7376eddf72ec',
} as const;

export type TonNetwork = 'mainnet' | 'testnet' | 'sandbox';

export interface Config {
  /** null: start the embedded PostgreSQL kept in `embeddedPgDir`. DATABASE_URL: request traffic; may be a transaction pooler. */
  databaseUrl: string | null;
  /**
   * DATABASE_SESSION_URL (default: DATABASE_URL): a direct or session-mode connection, for
   * migrations, the worker (Graphile Worker's LISTEN and jobs, the chain reader) and `kassa doctor`.
   * null with DATABASE_URL unset (the embedded database). When it differs from DATABASE_URL, the
   * service's connections to DATABASE_URL send nothing a transaction pooler refuses or keeps
   * (`databasePooled`).
   */
  databaseSessionUrl: string | null;
  /**
   * DATABASE_REPORTING_URL (optional): a streaming replica the reports read (the dashboard's home
   * figures, its CSV export, the Money page's reporting views: src/db/reporting.ts); null: they read
   * DATABASE_URL. Never money, refunds or writes.
   */
  databaseReportingUrl: string | null;
  /**
   * DATABASE_PREPARED_STATEMENTS: the hot statements run as named prepared statements on
   * DATABASE_URL (src/db/pool.ts `prepared`). Default true when DATABASE_URL is the session URL,
   * false when they differ (a transaction pooler must track them: PgBouncer >= 1.21 with
   * max_prepared_statements of 200 or more).
   */
  databasePreparedStatements: boolean;
  /**
   * ALLOW_EMBEDDED_DATABASE: the embedded development PostgreSQL may be used on mainnet or testnet
   * (refused there by default: `databaseProblem`). Always allowed in sandbox.
   */
  allowEmbeddedDatabase: boolean;
  embeddedPgDir: string;
  embeddedPgPort: number;
  port: number;
  host: string;
  baseUrl: string;
  checkoutBaseUrl: string;
  tonNetwork: TonNetwork;
  /**
   * The toncenter API root (`https://toncenter.com`): blocks are read at `/api/v3/…`, get methods
   * called at `/api/v2/jsonRPC`. null in sandbox: the API process serves the emulated chain at
   * BASE_URL/sandbox/toncenter.
   */
  tonApiUrl: string | null;
  tonApiKey: string | null;
  /** Chain API requests per second, across all of this process's chain reads (0: no cap). */
  tonApiRps: number;
  /**
   * READY_MAX_BLOCKS_BEHIND: GET /readyz answers 503 when the chain reader is more than this many
   * masterchain blocks behind the chain's tip (default 50: 20 s of mainnet).
   */
  readyMaxBlocksBehind: number;
  /** null: generated into the database on first start (sandbox only). Only the signer (worker) needs it off sandbox. */
  masterKey: string | null;
  /**
   * KASSA_DEPOSIT_PUBLIC_KEY (64 hex, printed by `kassa keys deposit-public`): all an API process
   * needs to derive deposit addresses. null: derived from the master key.
   */
  depositPublicKey: string | null;
  webhookAllowInsecure: boolean;
  /** Where exchange rates come from: `fixed` (the sandbox table) or `tonapi` (tonapi.io compatible). */
  ratesProvider: 'fixed' | 'tonapi';
  ratesApiUrl: string;
  ratesApiKey: string | null;
  /**
   * The second price source, a CoinGecko-compatible API root (`…/api/v3`, asked `/simple/price`):
   * a live rate prices a payment only when it agrees with this source's. Unused with `fixed`.
   */
  ratesConfirmApiUrl: string;
  ratesConfirmApiKey: string | null;
  /** RATES_MAX_DIVERGENCE_PERCENT: how far apart (in %, of the lower) the two sources may be, a decimal string. */
  ratesMaxDivergencePercent: string;
  rateLimitPerStore: number;
  rateLimitPerClient: number;
  /** Jobs locked by a worker not seen for this long are unlocked (worker__unlock_dead). */
  workerDeadAfterMs: number;
  /**
   * OUTGOING_MESSAGE_TTL_SECONDS: how long a signed transfer out stays valid (the wallet's
   * valid_until). A message not seen on chain by then and LATE_COMMIT_MARGIN_MS (60 s) more is
   * signed again — never before, so a longer life waits longer after a lost broadcast and a shorter
   * one risks expiring in a busy network.
   */
  outgoingMessageTtlSeconds: number;
  /**
   * How many reverse proxies in front of Kassa append to X-Forwarded-For (TRUST_PROXY): the client
   * address is the one the outermost of them saw, `trustProxyHops` entries from the right. 0: the
   * header is ignored and the socket's address is the client's.
   */
  trustProxyHops: number;
  /** Bearer token for GET /metrics; null: only loopback clients may scrape (required with TRUST_PROXY). */
  metricsToken: string | null;
  /** Live-status streams (checkout events) the process holds open at once; beyond, 503. */
  checkoutStreamsMax: number;
  /**
   * TELEGRAM_PUBLIC_KEY: the Ed25519 key (hex) Telegram's init data is checked with (third-party
   * validation, src/telegram/initData.ts); Telegram's production key unless set (its test
   * environment's key, or a test's own pair).
   */
  telegramPublicKey: string;
  /**
   * TELEGRAM_WEB_ORIGINS: the origins that may frame the checkout's Mini App route ({checkout_base_url}/tg,
   * CSP frame-ancestors), so the only parent frames Telegram's script in the page talks to: Telegram's web clients.
   */
  telegramWebOrigins: string[];
  /**
   * SMTP_URL: the SMTP server notifications (and sign-in links) are sent through,
   * `smtp://user:password@host:587` (STARTTLS when the server offers it) or `smtps://…:465`; null: no email.
   * Its password is a secret: never logged, never shown.
   */
  smtpUrl: string | null;
  /** SMTP_FROM: the sender of Kassa's emails (`Kassa <kassa@shop.example>`); required with SMTP_URL. */
  smtpFrom: string | null;
  /**
   * TELEGRAM_API_URL: the Bot API root notifications are sent through (`https://api.telegram.org`,
   * or a local Bot API server, or a test's imitation): POST {root}/bot<token>/sendMessage.
   */
  telegramApiUrl: string;
  /**
   * REFUND_HOLD_DAYS: money in a deposit wallet that is not part of a completed payment's counted
   * amount (overpayments, late money, wrong coins) stays refundable this long, then is swept too.
   */
  refundHoldDays: number;
  /**
   * DATABASE_STATEMENT_TIMEOUT_MS: PostgreSQL's statement_timeout for the service's pool; the client
   * gives up on a statement the server does not answer QUERY_TIMEOUT_MARGIN_MS later (src/db/pool.ts).
   */
  databaseStatementTimeoutMs: number;
  /** KEEP_ALIVE_TIMEOUT_SECONDS: how long the API keeps an idle connection (above the proxies' idle timeouts). */
  keepAliveTimeoutMs: number;
  logLevel: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const DEFAULT_TON_API: Record<TonNetwork, string | null> = {
  mainnet: 'https://toncenter.com',
  testnet: 'https://testnet.toncenter.com',
  sandbox: null,
};

/** TON_API_URL names the API root; the v2/v3 suffixes people paste from toncenter's docs are dropped. */
export function tonApiRoot(url: string): string {
  return url
    .replace(/\/+$/, '')
    .replace(/\/api\/v2\/jsonRPC$/i, '')
    .replace(/\/api\/v[23]$/i, '')
    .replace(/\/+$/, '');
}

function nonEmpty(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function httpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** A percentage greater than 0 and at most `max`, as the decimal string it was written as ("2", "0.5"). */
function percent(env: NodeJS.ProcessEnv, name: string, fallback: string, max: number): string {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (!/^(0|[1-9]\d{0,2})(\.\d{1,6})?$/.test(raw) || Number(raw) <= 0 || Number(raw) > max) {
    throw new ConfigError(`${name} must be a percentage greater than 0 and at most ${max} (for example 2 or 0.5), got "${raw}"`);
  }
  return raw;
}

/** TRUST_PROXY: false/0 (off), true (one proxy) or the number of proxies in front of Kassa. */
function proxyHops(env: NodeJS.ProcessEnv): number {
  const raw = nonEmpty(env, 'TRUST_PROXY');
  if (raw === undefined || raw === 'false' || raw === '0') return 0;
  if (raw === 'true') return 1;
  if (/^\d+$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 10) return Number(raw);
  throw new ConfigError(`TRUST_PROXY must be "false", "true" or the number of proxies in front of Kassa (1 to 10), got "${raw}"`);
}

/** A comma-separated list of origins (scheme://host[:port], nothing else): they go into a CSP header. */
function webOrigins(env: NodeJS.ProcessEnv, name: string, fallback: string[]): string[] {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  return raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      let url: URL | null = null;
      try {
        url = new URL(part);
      } catch {
        url = null;
      }
      if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== part.replace(/\/$/, '') || url.hostname === '') {
        throw new ConfigError(`${name} must be a comma-separated list of origins such as https://web.telegram.org, got "${part.slice(0, 100)}"`);
      }
      return url.origin;
    });
}

function bool(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return false;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be "true" or "false", got "${raw}"`);
}

function databaseUrl(raw: string, name = 'DATABASE_URL'): string {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new Error('protocol');
  } catch {
    throw new ConfigError(`${name} must be a postgres:// connection URL`);
  }
  return raw;
}

/**
 * Whether DATABASE_URL is treated as a transaction pooler: it differs from DATABASE_SESSION_URL.
 * The service's connections to it then send no statement_timeout at connect (PgBouncer refuses the
 * parameter: the role's default applies, checked by `kassa doctor`) and, unless
 * DATABASE_PREPARED_STATEMENTS=true, no named prepared statements.
 */
export function databasePooled(config: Pick<Config, 'databaseUrl' | 'databaseSessionUrl'>): boolean {
  return config.databaseUrl !== null && config.databaseSessionUrl !== null && config.databaseSessionUrl !== config.databaseUrl;
}

/** The variable a configuration problem names first (`BASE_URL is required…` → BASE_URL). */
export const problemVariable = (problem: string): string | undefined => /^([A-Z][A-Z0-9_]+)/.exec(problem)?.[1];

/** Every problem of a configuration in one line: `invalid configuration: a; b; c`. */
export function configErrorOf(problems: readonly string[]): ConfigError {
  return new ConfigError(`invalid configuration: ${problems.join('; ')}`);
}

/**
 * Reads and validates the configuration; throws ConfigError with every bad value in one line.
 * `running`: the records of `kassa start` processes running from `cwd` (runState.ts, read by the
 * other commands): where the environment says nothing, their embedded PostgreSQL's port and their
 * API's URLs are used, so a second terminal needs no environment.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd(), running: readonly RunRecord[] = []): Config {
  const { config, problems } = readConfig(env, cwd, running);
  if (problems.length > 0) throw configErrorOf(problems);
  return config;
}

/**
 * The configuration with every bad value listed rather than thrown (`kassa start` adds what the
 * parts it runs need before it refuses, in one message; `kassa doctor` shows them as failed
 * checks). A bad value is replaced by its default in `config`.
 */
export function readConfig(
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
  running: readonly RunRecord[] = [],
): { config: Config; problems: string[] } {
  // Every bad value is reported, not only the first one.
  const problems: string[] = [];
  const check = <T>(read: () => T, fallback: T): T => {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(error.message);
      return fallback;
    }
  };
  const rawDb = nonEmpty(env, 'DATABASE_URL');
  const dbUrl = check(() => (rawDb === undefined ? null : databaseUrl(rawDb)), null);
  const rawSessionDb = nonEmpty(env, 'DATABASE_SESSION_URL');
  if (rawSessionDb !== undefined && rawDb === undefined) {
    problems.push('DATABASE_SESSION_URL is set without DATABASE_URL: set DATABASE_URL too (the embedded database needs neither)');
  }
  const sessionDbUrl = check(() => (rawSessionDb === undefined || dbUrl === null ? dbUrl : databaseUrl(rawSessionDb, 'DATABASE_SESSION_URL')), dbUrl);
  const rawReportingDb = nonEmpty(env, 'DATABASE_REPORTING_URL');
  if (rawReportingDb !== undefined && rawDb === undefined) {
    problems.push('DATABASE_REPORTING_URL is set without DATABASE_URL: set DATABASE_URL too (the replica copies a primary the embedded database is not)');
  }
  const reportingDbUrl = check(() => (rawReportingDb === undefined || dbUrl === null ? null : databaseUrl(rawReportingDb, 'DATABASE_REPORTING_URL')), null);
  const preparedDefault = dbUrl === null || sessionDbUrl === dbUrl;
  const preparedStatements =
    nonEmpty(env, 'DATABASE_PREPARED_STATEMENTS') === undefined ? preparedDefault : check(() => bool(env, 'DATABASE_PREPARED_STATEMENTS'), preparedDefault);
  const port = check(() => integer(env, 'PORT', 3000, 0, 65535), 3000);
  const host = nonEmpty(env, 'HOST') ?? '127.0.0.1';
  const network = check((): TonNetwork => {
    const value = nonEmpty(env, 'TON_NETWORK') ?? 'sandbox';
    if (value !== 'mainnet' && value !== 'testnet' && value !== 'sandbox') {
      throw new ConfigError(`TON_NETWORK must be mainnet, testnet or sandbox, got "${value}"`);
    }
    return value;
  }, 'sandbox');
  const rawBaseUrl = nonEmpty(env, 'BASE_URL');
  if (rawBaseUrl === undefined && network !== 'sandbox') {
    // Customers' checkout links and webhook key URLs are built from it; the bind address is no public address.
    problems.push(
      `BASE_URL is required when TON_NETWORK=${network}: the public https address customers and webhooks reach Kassa at (e.g. https://pay.example.com)`,
    );
  }
  // A running API's URLs, when the environment names no address of its own.
  const runningApi = ['BASE_URL', 'PORT', 'HOST'].some((name) => nonEmpty(env, name) !== undefined) ? undefined : running.find((record) => record.url !== null);
  const baseUrl = check(
    () => httpUrl('BASE_URL', rawBaseUrl ?? runningApi?.baseUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`),
    'http://127.0.0.1:3000',
  );
  const checkoutBaseUrl = check(
    () =>
      httpUrl(
        'CHECKOUT_BASE_URL',
        nonEmpty(env, 'CHECKOUT_BASE_URL') ?? (rawBaseUrl === undefined ? runningApi?.checkoutBaseUrl : undefined) ?? `${baseUrl}/pay`,
      ),
    `${baseUrl}/pay`,
  );
  const runningPgPort = running.find((record) => record.embeddedPgPort !== null)?.embeddedPgPort ?? 54329;
  const rawApi = nonEmpty(env, 'TON_API_URL');
  const tonApiUrl = check(() => (rawApi ? tonApiRoot(httpUrl('TON_API_URL', rawApi)) : DEFAULT_TON_API[network]), null);
  const tonApiKey = nonEmpty(env, 'TON_API_KEY') ?? null;
  // toncenter's plans: 1 request/s without a key, 10 with a free key (25 and 100 on paid plans).
  const defaultRps = network === 'sandbox' ? 0 : tonApiKey ? 10 : 1;
  const tonApiRps = check(() => integer(env, 'TON_API_RPS', defaultRps, 0, 100_000), defaultRps);
  const masterKey = nonEmpty(env, 'KASSA_MASTER_KEY') ?? null;
  if (masterKey !== null && !/^[0-9a-fA-F]{64}$/.test(masterKey)) {
    problems.push('KASSA_MASTER_KEY must be 64 hex characters (32 bytes)');
  }
  const depositPublicKey = nonEmpty(env, 'KASSA_DEPOSIT_PUBLIC_KEY')?.toLowerCase() ?? null;
  if (depositPublicKey !== null && !/^[0-9a-f]{64}$/.test(depositPublicKey)) {
    problems.push('KASSA_DEPOSIT_PUBLIC_KEY must be 64 hex characters (32 bytes)');
  }
  if (masterKey === null && depositPublicKey === null && network !== 'sandbox') {
    problems.push(`KASSA_MASTER_KEY (or, for an API-only process, KASSA_DEPOSIT_PUBLIC_KEY) is required when TON_NETWORK=${network}`);
  }
  const webhookAllowInsecure = check(() => bool(env, 'WEBHOOK_ALLOW_INSECURE'), false);
  if (webhookAllowInsecure && network === 'mainnet') {
    problems.push('WEBHOOK_ALLOW_INSECURE=true is refused when TON_NETWORK=mainnet');
  }
  const ratesProvider = check((): Config['ratesProvider'] => {
    const value = nonEmpty(env, 'RATES_PROVIDER') ?? (network === 'sandbox' ? 'fixed' : 'tonapi');
    if (value !== 'fixed' && value !== 'tonapi') throw new ConfigError(`RATES_PROVIDER must be fixed or tonapi, got "${value}"`);
    if (value === 'fixed' && network === 'mainnet') throw new ConfigError('RATES_PROVIDER=fixed (the sandbox table) is refused when TON_NETWORK=mainnet');
    return value;
  }, 'fixed');
  const ratesApiUrl = check(() => httpUrl('RATES_API_URL', nonEmpty(env, 'RATES_API_URL') ?? 'https://tonapi.io'), 'https://tonapi.io');
  const ratesConfirmApiUrl = check(
    () => httpUrl('RATES_CONFIRM_API_URL', nonEmpty(env, 'RATES_CONFIRM_API_URL') ?? 'https://api.coingecko.com/api/v3'),
    'https://api.coingecko.com/api/v3',
  );
  const ratesMaxDivergencePercent = check(() => percent(env, 'RATES_MAX_DIVERGENCE_PERCENT', '2', 50), '2');
  const trustProxyHops = check(() => proxyHops(env), 0);
  const metricsToken = nonEmpty(env, 'METRICS_TOKEN') ?? null;
  // Behind a proxy every request arrives from the proxy's address, loopback included: the
  // loopback rule of /metrics cannot tell a local scraper from the public there.
  if (trustProxyHops > 0 && metricsToken === null) {
    problems.push('METRICS_TOKEN is required when TRUST_PROXY is on (behind a proxy, /metrics cannot tell a local scraper from the public by address)');
  }
  const telegramPublicKey = (nonEmpty(env, 'TELEGRAM_PUBLIC_KEY') ?? TELEGRAM_PUBLIC_KEYS.production).toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(telegramPublicKey)) problems.push('TELEGRAM_PUBLIC_KEY must be 64 hex characters (an Ed25519 public key)');
  const telegramWebOrigins = check(() => webOrigins(env, 'TELEGRAM_WEB_ORIGINS', ['https://web.telegram.org']), ['https://web.telegram.org']);
  const smtpUrl = check(() => {
    const raw = nonEmpty(env, 'SMTP_URL');
    if (raw === undefined) return null;
    let url: URL | null = null;
    try {
      url = new URL(raw);
    } catch {
      url = null;
    }
    // The URL holds the SMTP password: never repeated in a message.
    if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '') {
      throw new ConfigError('SMTP_URL must be smtp://[user:password@]host[:port] or smtps://…');
    }
    return raw;
  }, null);
  const smtpFrom = nonEmpty(env, 'SMTP_FROM') ?? null;
  if (smtpUrl !== null && (smtpFrom === null || !/@/.test(smtpFrom))) {
    problems.push('SMTP_FROM is required with SMTP_URL: the sender of Kassa\'s emails, such as "Kassa <kassa@shop.example>"');
  }
  const telegramApiUrl = check(() => httpUrl('TELEGRAM_API_URL', nonEmpty(env, 'TELEGRAM_API_URL') ?? 'https://api.telegram.org'), 'https://api.telegram.org');
  const rawLogLevel = nonEmpty(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(rawLogLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${rawLogLevel}"`);
  }
  const logLevel = LOG_LEVELS.includes(rawLogLevel) ? rawLogLevel : 'info';
  const config: Config = {
    databaseUrl: dbUrl,
    databaseSessionUrl: sessionDbUrl,
    databaseReportingUrl: reportingDbUrl,
    databasePreparedStatements: preparedStatements,
    allowEmbeddedDatabase: check(() => bool(env, 'ALLOW_EMBEDDED_DATABASE'), false),
    embeddedPgDir: path.resolve(cwd, '.kassa/pg'),
    embeddedPgPort: check(() => integer(env, 'KASSA_EMBEDDED_PG_PORT', runningPgPort, 1, 65535), runningPgPort),
    port,
    host,
    baseUrl,
    checkoutBaseUrl,
    tonNetwork: network,
    tonApiUrl,
    tonApiKey,
    tonApiRps,
    readyMaxBlocksBehind: check(() => integer(env, 'READY_MAX_BLOCKS_BEHIND', 50, 1, 1_000_000), 50),
    masterKey,
    depositPublicKey,
    webhookAllowInsecure,
    ratesProvider,
    ratesApiUrl,
    ratesApiKey: nonEmpty(env, 'RATES_API_KEY') ?? null,
    ratesConfirmApiUrl,
    ratesConfirmApiKey: nonEmpty(env, 'RATES_CONFIRM_API_KEY') ?? null,
    ratesMaxDivergencePercent,
    rateLimitPerStore: check(() => integer(env, 'RATE_LIMIT_PER_STORE', 100, 0, 1_000_000), 100),
    metricsToken,
    trustProxyHops,
    checkoutStreamsMax: check(() => integer(env, 'CHECKOUT_STREAMS_MAX', 500, 1, 1_000_000), 500),
    telegramPublicKey: /^[0-9a-f]{64}$/.test(telegramPublicKey) ? telegramPublicKey : TELEGRAM_PUBLIC_KEYS.production,
    telegramWebOrigins,
    smtpUrl,
    smtpFrom,
    telegramApiUrl,
    refundHoldDays: check(() => integer(env, 'REFUND_HOLD_DAYS', 30, 0, 3650), 30),
    databaseStatementTimeoutMs: check(() => integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5_000, 100, 600_000), 5_000),
    keepAliveTimeoutMs: check(() => integer(env, 'KEEP_ALIVE_TIMEOUT_SECONDS', 65, 1, 3600), 65) * 1000,
    workerDeadAfterMs: check(() => integer(env, 'WORKER_DEAD_AFTER_SECONDS', 120, 5, 86_400), 120) * 1000,
    outgoingMessageTtlSeconds: check(() => integer(env, 'OUTGOING_MESSAGE_TTL_SECONDS', 60, 10, 3600), 60),
    rateLimitPerClient: check(() => integer(env, 'RATE_LIMIT_PER_CLIENT', 10, 0, 1_000_000), 10),
    logLevel,
  };
  return { config, problems };
}

/**
 * Off the sandbox the books of real money need a PostgreSQL of the operator's (with backups): the
 * embedded development database in ./.kassa/pg is refused unless ALLOW_EMBEDDED_DATABASE=true, by
 * `kassa start` (with every other problem) and by every command that would open it.
 */
export function databaseProblem(config: Pick<Config, 'databaseUrl' | 'tonNetwork' | 'allowEmbeddedDatabase'>): string | null {
  if (config.databaseUrl !== null || config.tonNetwork === 'sandbox' || config.allowEmbeddedDatabase) return null;
  return `DATABASE_URL is required when TON_NETWORK=${config.tonNetwork}: without it Kassa would keep the books in the embedded development database (./.kassa/pg); set DATABASE_URL to your PostgreSQL (ALLOW_EMBEDDED_DATABASE=true accepts the embedded one)`;
}

/**
 * The keys a process needs for what it runs: the API derives deposit addresses (the master key or
 * only KASSA_DEPOSIT_PUBLIC_KEY); the worker signs, so off sandbox it needs KASSA_MASTER_KEY.
 * Returns what is missing (nothing: []).
 */
export function keyProblems(config: Config, parts: { api: boolean; worker: boolean }): string[] {
  if (config.tonNetwork === 'sandbox') return [];
  if (parts.worker && config.masterKey === null) {
    return [
      `KASSA_MASTER_KEY is required to run the worker when TON_NETWORK=${config.tonNetwork} (an API-only process, kassa start --api, needs only KASSA_DEPOSIT_PUBLIC_KEY)`,
    ];
  }
  if (parts.api && config.masterKey === null && config.depositPublicKey === null) {
    return [`KASSA_MASTER_KEY or KASSA_DEPOSIT_PUBLIC_KEY is required when TON_NETWORK=${config.tonNetwork}`];
  }
  return [];
}

/**
 * The configuration once the API's port is bound: with PORT=0 and BASE_URL (and CHECKOUT_BASE_URL)
 * unset, the URLs derived from HOST:PORT name the port the system chose instead of `:0`.
 */
export function withBoundPort(config: Config, port: number): Config {
  if (config.port !== 0) return config;
  const bound = (url: string) => url.replace(/^(https?:\/\/[^/]+):0(?=\/|$)/, `$1:${port}`);
  return { ...config, baseUrl: bound(config.baseUrl), checkoutBaseUrl: bound(config.checkoutBaseUrl) };
}
