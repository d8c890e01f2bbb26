// Applies the committed migrations (graphile-migrate) and installs Graphile Worker's schema.
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { Logger as WorkerLogger, runMigrations as installWorkerSchema } from 'graphile-worker';
import type { Logger } from '../log.ts';
import { ExternalFailure } from '../errors.ts';

const MIGRATIONS_FOLDER = path.resolve(import.meta.dirname, '../../migrations');

/** Graphile Worker (and graphile-migrate, same logger family) log through our pino logger. */
export function graphileLogger(log: Logger, quiet = false): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const child = log.child({
      component: scope.label ?? 'graphile',
      ...(scope.taskIdentifier ? { task: scope.taskIdentifier } : {}),
      ...(scope.jobId ? { jobId: scope.jobId } : {}),
    });
    const fields = meta && typeof meta === 'object' && Object.keys(meta).length > 0 ? { meta } : {};
    const failure = meta as { failure?: boolean; error?: unknown; job?: { attempts?: number; max_attempts?: number } } | undefined;
    if (level === 'error' && failure?.failure && failure.error instanceof ExternalFailure) {
      // Not Kassa's fault, and already said in a warn line by the task: no error line, no stack.
      child.debug({ attempt: failure.job?.attempts, maxAttempts: failure.job?.max_attempts }, `job failed, retried by the queue: ${failure.error.message}`);
    } else if (level === 'error') child.error(fields, message);
    else if (level === 'warning') child.warn(fields, message);
    else if (level === 'info' && !quiet) child.info(fields, message);
    else child.debug(fields, message);
  });
}

/**
 * Several Kassa processes may start at once against one database (an API and its workers):
 * graphile-migrate does not wait for another run's lock, it fails ("Failed to get exclusive
 * lock"). So every run first queues on a lock of Kassa's own, held by a separate session for the
 * whole run (closing the session releases it, also when this process dies).
 */
const MIGRATE_LOCK = 'kassa.migrate';
const MIGRATE_LOCK_TIMEOUT = '5min';

/**
 * `databaseUrl` with `statement_timeout = 0` sent at connect, for the migration's own sessions. Behind
 * a pooler the statement timeout is often a role default (`ALTER ROLE kassa SET statement_timeout`,
 * docs/OPERATIONS.md), which would otherwise reach graphile-migrate's and Graphile Worker's schema
 * connections too and cancel a long migration half-way. Migrations only ever run on the session URL,
 * which is never a transaction pooler (`kassa migrate` refuses one), so a startup parameter is safe.
 */
function unboundedStatements(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const options = url.searchParams.get('options');
  url.searchParams.set('options', `${options ? `${options} ` : ''}-c statement_timeout=0`);
  return url.toString();
}

/**
 * A named queue's next job starts as soon as its previous one is done, not at the next poll (issue:
 * an endpoint's burst drained at one delivery a second). Graphile Worker 0.18 frees a queue when its
 * job completes or fails (sql/completeJobs.js, failJobs.js: `update _private_job_queues set
 * locked_at = null`) but tells no one; a runner with a local queue (src/server.ts) fetches again
 * only when a fetch came back full, at its poll interval, or on a `jobs:insert` NOTIFY
 * (localQueue.js `_fetch`, `pulse`). So each queue's jobs ran one per poll interval. This trigger
 * sends that NOTIFY when a queue is freed; PostgreSQL delivers it at commit, when the freed queue is
 * visible, so the runner's next fetch finds the queue's next job. Graphile still runs a queue's jobs
 * one at a time, in order. The function is a committed migration's (000059: the schema is
 * graphile-migrate's); the trigger on Graphile's table is created here, once, after Graphile's schema
 * exists (a later Graphile release that rebuilds the table drops it, and the next start adds it
 * again); the condition lives in the function body, so no column of Graphile's table depends on it.
 */
const WAKE_WORKERS_WHEN_QUEUE_FREED = `
do $$ begin
  if not exists (select from pg_trigger where tgname = 'wake_workers_when_queue_freed' and tgrelid = 'graphile_worker._private_job_queues'::regclass) then
    create trigger wake_workers_when_queue_freed after update on graphile_worker._private_job_queues
      for each row execute function public.wake_workers_when_queue_freed();
  end if;
end $$;
`;

export async function migrate(databaseUrl: string, log: Logger): Promise<void> {
  const lock = new pg.Client({ connectionString: unboundedStatements(databaseUrl) });
  lock.on('error', () => {});
  await lock.connect();
  try {
    await lock.query(`set lock_timeout = '${MIGRATE_LOCK_TIMEOUT}'`);
    await lock.query('select pg_advisory_lock(hashtext($1))', [MIGRATE_LOCK]);
    // Every `kassa` command migrates first, and nearly always finds nothing to do: graphile-migrate,
    // whose loading and checks cost a one-shot command more CPU than its own work, is loaded only
    // when a committed migration is missing (read under the lock, so no other run is half-way).
    if ((await pendingOn(lock)).length > 0) await applyCommitted(unboundedStatements(databaseUrl), log);
    else log.debug({ component: 'graphile-migrate' }, 'every committed migration is applied');
    await installWorkerSchema({ connectionString: unboundedStatements(databaseUrl), logger: graphileLogger(log, true) });
    await lock.query(WAKE_WORKERS_WHEN_QUEUE_FREED);
  } finally {
    await lock.end().catch(() => {});
  }
}

async function applyCommitted(databaseUrl: string, log: Logger): Promise<void> {
  const [{ Logger: MigrateLogger, migrate: graphileMigrate }, { clearAllPools }] = await Promise.all([
    import('graphile-migrate'),
    // graphile-migrate keeps its own pg pool open 200 ms after use and exits the process when that
    // idle pool sees an error (for example when the embedded server stops). Close it right away.
    import('graphile-migrate/dist/pgReal.js'),
  ]);
  await graphileMigrate({
    connectionString: databaseUrl,
    migrationsFolder: MIGRATIONS_FOLDER,
    logger: new MigrateLogger(() => (level, message) => {
      if (level === 'error') log.error({ component: 'graphile-migrate' }, message);
      else if (level === 'warning') log.warn({ component: 'graphile-migrate' }, message);
      else log.debug({ component: 'graphile-migrate' }, message);
    }),
  });
  clearAllPools();
}

/**
 * The committed migrations this database has not had (file names, in order), for `kassa doctor`
 * (and `migrate`, which runs graphile-migrate only when there is one); read from graphile-migrate's
 * own record (`graphile_migrate.migrations`), without changing it. Every one when the database was
 * never migrated.
 */
export async function pendingMigrations(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    return await pendingOn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** `pendingMigrations` on a connection already open. */
async function pendingOn(client: pg.Client): Promise<string[]> {
  const folder = path.join(MIGRATIONS_FOLDER, 'committed');
  const committed = (await fs.readdir(folder)).filter((name) => /^\d{6}(-[-\w]+)?\.sql$/.test(name)).sort();
  const exists = await client.query<{ found: boolean }>(`select to_regclass('graphile_migrate.migrations') is not null as found`);
  const applied = new Set(
    exists.rows[0]?.found ? (await client.query<{ hash: string }>('select hash from graphile_migrate.migrations')).rows.map((row) => row.hash) : [],
  );
  const pending: string[] = [];
  for (const name of committed) {
    const hash = /^--! Hash: (\S+)$/m.exec(await fs.readFile(path.join(folder, name), 'utf8'))?.[1];
    if (hash === undefined || !applied.has(hash)) pending.push(name);
  }
  return pending;
}
