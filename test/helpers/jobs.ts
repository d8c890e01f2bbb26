// Graphile Worker's runOnce for tests, on a pool of our own that is ended — awaited — before it
// returns. Graphile's own pool is ended without being awaited (lib.js makeNewPool's releaser) and
// its error handler is removed first, so a test file that drops its database right after a run
// could see an idle client's "terminating connection due to administrator command" as an
// uncaught exception; pg-pool's end() also waits for a job's last completion query.
import { runOnce, type RunnerOptions } from 'graphile-worker';
import pg from 'pg';

export async function runJobsOnce(options: RunnerOptions & { connectionString: string }): Promise<void> {
  const { connectionString, ...rest } = options;
  const pgPool = new pg.Pool({ connectionString, max: 10 });
  // A client ended by the server (idle, or checked out: pg raises it on the next query): nothing
  // more to do — Graphile asks for both handlers (https://err.red/wpeh).
  pgPool.on('error', () => {});
  pgPool.on('connect', (client) => client.on('error', () => {}));
  try {
    await runOnce({ ...rest, pgPool });
  } finally {
    await pgPool.end();
  }
}
