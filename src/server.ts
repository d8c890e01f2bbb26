// `kassa start`: migrate, then serve the API and checkout and/or run the worker, in one process,
// until SIGTERM/SIGINT, then shut down gracefully.
import type http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { run, type Runner } from 'graphile-worker';
import pg from 'pg';
import { configErrorOf, ConfigError, databasePooled, databaseProblem, keyProblems, problemVariable, type Config, withBoundPort } from './config.ts';
import { openDatabaseServer, type DatabaseServer } from './db/embedded.ts';
import { migrate, graphileLogger, pendingMigrations } from './db/migrate.ts';
import { refuseTransactionPooler } from './db/pooling.ts';
import { openPool, type DatabasePool } from './db/pool.ts';
import { createApp, type RouteInstaller } from './http/app.ts';
import { createApiServer } from './http/apiServer.ts';
import { budgetShortfall } from './chain/budget.ts';
import { sharedRequestBudget } from './chain/sharedBudget.ts';
import { createChainClient } from './chain/client.ts';
import { createChainReader } from './reader/reader.ts';
import { toncenterV3Source } from './chain/source.ts';
import { toncenterV3History } from './chain/history.ts';
import { SANDBOX_TONCENTER_PATH } from './chain/sandbox/path.ts';
import { startHeartbeat, type Heartbeat } from './worker/liveness.ts';
import { PatientPool } from './worker/pgPool.ts';
import { MAIN_POOL_CONNECTIONS, RATE_LIMIT_CONNECTIONS, REPORTING_CONNECTIONS, WORKER_CONNECTIONS } from './db/connections.ts';
import { reportingReader } from './db/reporting.ts';
import type { Logger } from './log.ts';
import { CRONTAB, TASKS } from '../tasks/index.ts';
import { taskList } from './worker/tasks.ts';
import { confirmationFor, providerFor, refreshRates } from './rates/rates.ts';
import { depositPublicKey } from './payments/deposit.ts';
import { ensureGasWallet } from './treasury/gas.ts';
import { publicUrlProblems } from './net/addresses.ts';
import { writeRunRecord } from './runState.ts';
import { offerSetup } from './dashboard/setup.ts';
import { DASHBOARD_PATH } from './dashboard/paths.ts';

interface Parts {
  api: boolean;
  worker: boolean;
}

export interface RunningService {
  /** The API's address when it runs (port resolved when PORT=0). */
  url: string | null;
  databaseUrl: string;
  /** The sandbox chain this API serves (TON_NETWORK=sandbox with the API part), for tools such as bench/chain. */
  sandboxChain: SandboxChain | null;
  stop(reason?: string): Promise<void>;
}

type SandboxChain = Awaited<ReturnType<Awaited<ReturnType<typeof loadSandbox>>['startSandbox']>>['chain'];

const SHUTDOWN_GRACE_MS = 25_000;

/** The sandbox chain, loaded only in sandbox: the emulator is a development dependency. */
async function loadSandbox(): Promise<typeof import('./http/routes/sandbox.ts')> {
  try {
    return await import('./http/routes/sandbox.ts');
  } catch (error) {
    // A package missing (not one of our files): the development dependencies are not installed.
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' || !/Cannot find package/.test((error as Error).message)) throw error;
    throw new ConfigError(
      'TON_NETWORK=sandbox needs the sandbox chain (npm packages @ton/sandbox and @ton-community/assets-sdk, development dependencies), which is not installed: set TON_NETWORK=testnet or mainnet (with KASSA_MASTER_KEY and BASE_URL), or run "npm install" in a checkout',
    );
  }
}

/**
 * What the start line names: where the API, checkout, OpenAPI and metrics are, and what to do next —
 * on a Kassa not set up yet, the "Set up Kassa" page and its one-time code (a new one at each start
 * until the setup is done; the code is on this line only, never stored but as its hash).
 */
function startUrls(config: Config, listening: string, setup: { code: string; expiresAt: Date } | null): Record<string, string> {
  const urls = {
    apiUrl: config.baseUrl,
    checkoutUrl: `${config.checkoutBaseUrl}/{payment id}`,
    openapiUrl: `${config.baseUrl}/openapi.json`,
    metricsUrl: `${listening}/metrics`,
  };
  if (setup === null) return { ...urls, next: 'npm run -s kassa -- store create --name "My shop"' };
  const setupUrl = `${config.baseUrl}${DASHBOARD_PATH}/setup`;
  return {
    ...urls,
    setupUrl,
    setupCode: setup.code,
    setupCodeExpiresAt: setup.expiresAt.toISOString(),
    next: `open ${setupUrl} in a browser and type the setup code ${setup.code} to make your store and your account`,
  };
}

/**
 * Off sandbox, BASE_URL and CHECKOUT_BASE_URL are what customers open and merchants' receivers
 * fetch keys from: an address that is not https on a public host (0.0.0.0, loopback, a private
 * range, localhost) refuses the start on mainnet (returned) and is a warning on testnet (logged)
 * (README, Configuration). A CHECKOUT_BASE_URL derived from a refused BASE_URL is not named again.
 */
export function checkPublicUrls(config: Config, log: Logger): string[] {
  if (config.tonNetwork === 'sandbox') return [];
  const refused: string[] = [];
  for (const [name, url] of [
    ['BASE_URL', config.baseUrl],
    ['CHECKOUT_BASE_URL', config.checkoutBaseUrl],
  ] as const) {
    const problems = publicUrlProblems(url);
    if (problems.length === 0) continue;
    if (name === 'CHECKOUT_BASE_URL' && refused.length > 0 && url === `${config.baseUrl}/pay`) continue;
    const line = `${name}=${url} is not a public https:// address (${problems.join('; ')}): customers' checkout links and webhook key URLs are built from it`;
    if (config.tonNetwork === 'mainnet') refused.push(`${line}; set ${name} to the public https:// address`);
    else log.warn({ [name]: url }, `${line} (refused on mainnet)`);
  }
  return refused;
}

/**
 * What `kassa start` needs beyond a valid configuration, for the parts it runs: the keys, public
 * addresses on mainnet, a chain budget that can follow the chain, a database of the operator's off
 * sandbox. `reported`: the problems already found in the configuration (a variable named there is
 * not named again). Returns every problem; the caller refuses the start with all of them at once.
 */
function startProblems(config: Config, parts: Parts, log: Logger, reported: readonly string[] = []): string[] {
  const named = new Set(reported.map(problemVariable));
  const found = [...keyProblems(config, parts), ...checkPublicUrls(config, log)];
  // A budget that cannot follow the chain would leave payments unseen.
  const shortfall = budgetShortfall(config.tonNetwork, config.tonApiRps, config.tonApiKey !== null);
  if (shortfall !== null) found.push(shortfall);
  const database = databaseProblem(config);
  if (database !== null) found.push(database);
  return found.filter((problem) => !named.has(problemVariable(problem)) && !reported.includes(problem));
}

/**
 * `configProblems`: what reading the configuration found wrong (config.ts `readConfig`); the start
 * is refused with those and its own (`startProblems`) in one message.
 */
export async function startService(
  config: Config,
  parts: Parts,
  log: Logger,
  now: () => Date,
  configProblems: readonly string[] = [],
  options: { migrate?: boolean } = {},
): Promise<RunningService> {
  const problems = [...configProblems, ...startProblems(config, parts, log, configProblems)];
  if (problems.length > 0) throw configErrorOf(problems);
  const database: DatabaseServer = await openDatabaseServer(config, log);
  let pool: DatabasePool | null = null;
  /** The worker's pool, on the session URL: `pool` itself unless the API's goes through a pooler. */
  let sessionPool: DatabasePool | null = null;
  /** The replica's pool for reports (DATABASE_REPORTING_URL), in an API process. */
  let reportingPool: DatabasePool | null = null;
  let server: http.Server | null = null;
  let runner: Runner | null = null;
  let sandboxChain: SandboxChain | null = null;
  /** Saves the sandbox chain beside the books at shutdown (the sandbox's own stop). */
  let stopSandbox: (() => Promise<void>) | null = null;
  let url: string | null = null;
  let heartbeat: Heartbeat | null = null;
  let workerPool: PatientPool | null = null;
  let webhookRunner: Runner | null = null;
  /** The rate limits' shared counters (src/http/rateLimit.ts): a few connections of the API's own. */
  let rateLimitStore: pg.Pool | null = null;
  const readerStop = new AbortController();
  let readerDone: Promise<void> = Promise.resolve();
  /** `config` with the API's bound port in its derived URLs (withBoundPort). */
  let bound = config;
  /** The setup code this start made (a Kassa not set up yet), shown on the start line only. */
  let setup: { code: string; expiresAt: Date } | null = null;
  try {
    // Before anything is migrated: a missing sandbox is a configuration problem, said in one line.
    const sandboxModule = parts.api && config.tonNetwork === 'sandbox' ? await loadSandbox() : null;
    // Migrations go through the session URL (never a transaction pooler: their lock is a session's).
    // `--skip-migrate` (API containers; `kassa migrate` is the release step) only checks.
    if (options.migrate === false) {
      const pending = await pendingMigrations(database.sessionUrl);
      if (pending.length > 0) {
        throw new ConfigError(`${pending.length} migration(s) not applied (up to ${pending.at(-1)}) and --skip-migrate was given: run kassa migrate first`);
      }
    } else {
      await refuseTransactionPooler(database.sessionUrl, 'kassa start (which migrates first)');
      await migrate(database.sessionUrl, log);
    }
    // Request traffic goes through DATABASE_URL (perhaps a transaction pooler); a process with the
    // worker only goes through the session URL, and one with both gives the worker a pool of its own
    // there when the URLs differ.
    const pooled = databasePooled(config);
    const poolOptions = (onPooler: boolean) => ({
      maxPoolSize: MAIN_POOL_CONNECTIONS,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      pooled: onPooler,
      preparedStatements: onPooler ? config.databasePreparedStatements : true,
    });
    pool = parts.api ? await openPool(database.url, poolOptions(pooled)) : await openPool(database.sessionUrl, poolOptions(false));
    sessionPool = parts.api && parts.worker && pooled ? await openPool(database.sessionUrl, poolOptions(false)) : pool;
    // Reports (the dashboard's home figures, CSV export, Money page) may read a streaming replica:
    // a few connections of their own there, sending nothing at connect (it may be a pooler too);
    // db/reporting.ts sets the statement timeout and read-only mode per transaction.
    // A replica that cannot be reached at start does not keep the API from serving: its reports
    // read the primary until the next start (said in the log; kassa doctor fails its check).
    if (parts.api && config.databaseReportingUrl !== null) {
      reportingPool = await openPool(config.databaseReportingUrl, {
        maxPoolSize: REPORTING_CONNECTIONS,
        statementTimeoutMs: config.databaseStatementTimeoutMs,
        pooled: true,
        preparedStatements: false,
      }).catch((error: unknown) => {
        log.warn(
          { err: error },
          'DATABASE_REPORTING_URL could not be opened: the reports read DATABASE_URL until the next start (kassa doctor: database replica for reports)',
        );
        return null;
      });
    }
    const reporting = reportingReader(reportingPool ?? pool, { replica: reportingPool !== null, statementTimeoutMs: config.databaseStatementTimeoutMs });
    const deps = { config, pool, log, now };
    const workerDeps = { config, pool: sessionPool, log, now };
    // Deposit addresses need the deposit public key; a wrong one is refused before any is made.
    if (parts.api) await depositPublicKey(pool, config);
    // The gas wallet (derived from the same key) is recorded for the planners and the reader.
    const gas = await ensureGasWallet(pool, config);
    // Prices are needed from the first request on; the worker refreshes them every minute.
    await refreshRates(pool, providerFor(config), config.tonNetwork, now(), log, confirmationFor(config, { now })).catch((error: unknown) => {
      log.warn({ err: error }, 'exchange rates could not be refreshed at start; fiat payments answer rate_unavailable until they are');
    });

    const extraRoutes: RouteInstaller[] = [];
    if (sandboxModule) {
      // The sandbox funds the gas wallet, so jetton payments are swept with no one acting.
      const sandbox = await sandboxModule.startSandbox(pool, log, { blockClock: true, fund: [gas.raw] });
      extraRoutes.push(sandbox.routes);
      sandboxChain = sandbox.chain;
      stopSandbox = sandbox.stop;
    }
    if (config.tonNetwork !== 'sandbox' && !config.tonApiKey && config.tonApiUrl !== null && /(^|\.)toncenter\.com$/.test(new URL(config.tonApiUrl).hostname)) {
      log.warn(
        { network: config.tonNetwork, rps: config.tonApiRps },
        `TON_API_KEY is not set: toncenter allows ${config.tonApiRps} request/s without a key, too few to follow ${config.tonNetwork} (about 2.5 blocks/s): payments will be seen late and the reader will fall behind. Get a key (https://t.me/toncenter) and set TON_API_KEY.`,
      );
    }
    if (parts.api) {
      // The app is made once the port is bound: with PORT=0 and BASE_URL unset, the public URLs it
      // derives (checkout links, the OpenAPI document's servers, the start line) carry that port.
      // `handle` is set right after listen resolves, before the event loop accepts a connection.
      let handle: http.RequestListener | null = null;
      server = createApiServer((req, res) => handle!(req, res), { keepAliveTimeoutMs: config.keepAliveTimeoutMs });
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(config.port, config.host, () => resolve());
      });
      bound = withBoundPort(config, (server.address() as AddressInfo).port);
      deps.config = bound;
      // Reconciled in the background (src/http/rateLimit.ts): a statement bounded at 1 s by the server
      // and 2 s by the client, so a database that stopped answering never holds a connection long.
      rateLimitStore = new pg.Pool({
        connectionString: database.url,
        max: RATE_LIMIT_CONNECTIONS,
        connectionTimeoutMillis: 2_000,
        // Not at connect through a pooler (refused there): the client's 2 s bound remains.
        ...(databasePooled(config) ? {} : { statement_timeout: 1_000 }),
        query_timeout: 2_000,
      });
      rateLimitStore.on('error', (error) => log.warn({ err: error }, 'rate-limit store connection failed'));
      handle = createApp({ ...deps, rateLimitStore, reporting }, extraRoutes).callback();
      // A Kassa with no store and no dashboard account: a new one-time setup code for the dashboard's
      // "Set up Kassa" page, printed once, on the start line (dashboard/setup.ts).
      setup = await offerSetup(pool, now());
    }
    const address = server?.address() as AddressInfo | null;
    url = address ? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` : null;

    // The chain API: toncenter (or TON_API_URL); in sandbox the emulated chain served by the API
    // process (this one, or BASE_URL's when this process runs only the worker). One request
    // budget per API key for every chain read of every process of the deployment (shared through
    // the database: chain/sharedBudget.ts).
    const apiRoot = config.tonApiUrl ?? `${parts.api && url ? url : config.baseUrl}${SANDBOX_TONCENTER_PATH}`;
    const budget = sharedRequestBudget(pool, { apiRoot, apiKey: config.tonApiKey, rps: config.tonApiRps });
    const client = createChainClient({ endpoint: `${apiRoot}/api/v2/jsonRPC`, apiKey: config.tonApiKey, budget });
    const source = toncenterV3Source({ baseUrl: apiRoot, apiKey: config.tonApiKey, budget });
    const history = toncenterV3History({ baseUrl: apiRoot, apiKey: config.tonApiKey, budget });

    if (parts.worker) {
      // The chain reader (and the expiry it drives) runs in its own loop, never behind jobs.
      const reader = createChainReader({ pool: sessionPool, config, source, client, log: log.child({ component: 'chain-reader' }), now });
      readerDone = reader.run(readerStop.signal);
      heartbeat = startHeartbeat(sessionPool, log, now);
      // Graphile Worker's own connections wait out a database restart (see worker/pgPool.ts).
      // Enough connections for both runners (4 + 20 slots) and their bookkeeping.
      workerPool = new PatientPool({ connectionString: database.sessionUrl, max: WORKER_CONNECTIONS, connectionTimeoutMillis: 5_000 }, log);
      // Two runners: webhook deliveries (which may wait on slow receivers) have slots of their own,
      // so they never hold up the other jobs; each store's webhookURL deliveries use at most
      // DELIVERY_QUEUES_PER_STORE queues (worker/jobs.ts), and a store's attempts in flight, of
      // both kinds, are at most STORE_DELIVERY_SLOTS (webhooks/deliver.ts).
      const { webhook__deliver: deliver, ...others } = TASKS;
      // Each runner's pool fetches jobs for all its workers (Graphile's local queue): one `get_jobs`
      // per poll per runner when idle, not one per worker; new jobs still wake it by NOTIFY.
      const runnerOptions = (concurrency: number) => ({
        events: heartbeat!.events,
        pgPool: workerPool!,
        concurrency,
        pollInterval: 1000,
        preset: { worker: { localQueue: { size: concurrency } } },
        noHandleSignals: true,
        logger: graphileLogger(log, true),
      });
      runner = await run({ ...runnerOptions(4), taskList: taskList({ ...workerDeps, chain: client, history }, others), crontab: CRONTAB });
      webhookRunner = await run({ ...runnerOptions(20), taskList: taskList(workerDeps, { webhook__deliver: deliver! }) });
    }
  } catch (error) {
    readerStop.abort();
    await readerDone.catch(() => {});
    await webhookRunner?.stop().catch(() => {});
    await runner?.stop().catch(() => {});
    await workerPool?.end().catch(() => {});
    await rateLimitStore?.end().catch(() => {});
    await stopSandbox?.().catch(() => {});
    if (sessionPool !== pool) await sessionPool?.end().catch(() => {});
    await reportingPool?.end().catch(() => {});
    await pool?.end().catch(() => {});
    await database.stop().catch(() => {});
    throw error;
  }

  // The other commands run from this directory (a second terminal) find the embedded PostgreSQL's
  // port and the API's URL here (runState.ts); removed again at a clean shutdown.
  const removeRunRecord = writeRunRecord(path.dirname(config.embeddedPgDir), {
    pid: process.pid,
    startedAt: now().toISOString(),
    api: parts.api,
    worker: parts.worker,
    network: config.tonNetwork,
    url,
    baseUrl: bound.baseUrl,
    checkoutBaseUrl: bound.checkoutBaseUrl,
    embeddedPgPort: config.databaseUrl === null ? config.embeddedPgPort : null,
  });
  log.info({ url, api: parts.api, worker: parts.worker, network: config.tonNetwork, ...(url ? startUrls(bound, url, setup) : {}) }, 'kassa started');

  let stopping: Promise<void> | null = null;
  const stop = (reason = 'stop'): Promise<void> => {
    stopping ??= (async () => {
      log.info({ reason }, 'shutting down: no new requests, finishing in-flight requests and jobs');
      removeRunRecord();
      const closed = server
        ? new Promise<void>((resolve) => {
            server!.close(() => resolve());
            server!.closeIdleConnections();
          })
        : Promise.resolve();
      readerStop.abort();
      await Promise.all([closed, runner?.stop(reason), webhookRunner?.stop(reason), readerDone]);
      await heartbeat?.stop();
      await workerPool?.end();
      await rateLimitStore?.end();
      // Once nothing sends on it any more: the sandbox chain's state, kept beside the books.
      await stopSandbox?.();
      if (sessionPool !== pool) await sessionPool?.end();
      await reportingPool?.end();
      await pool!.end();
      await database.stop();
      log.info('shut down');
    })();
    return stopping;
  };
  return { url, databaseUrl: database.url, sandboxChain, stop };
}

/** Runs until a signal, then stops gracefully (forced after 25 s). */
export async function runUntilSignal(service: RunningService, log: Logger): Promise<void> {
  await new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.removeListener('SIGTERM', onSignal);
      process.removeListener('SIGINT', onSignal);
      const force = setTimeout(() => {
        log.error('graceful shutdown took too long; exiting');
        process.exit(1);
      }, SHUTDOWN_GRACE_MS);
      force.unref();
      service.stop(signal).then(resolve, (error: unknown) => {
        log.error({ err: error }, 'error during shutdown');
        process.exitCode = 1;
        resolve();
      });
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
