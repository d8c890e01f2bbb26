// Recurring (cron) jobs are never left failed: the next tick is a recurring task's retry, so a task
// that fails through an outage (its provider or database gone) ends its job instead of being
// retried with backoff for days beside one more job every minute, then kept permanently failed.
// A job interrupted by a crashed worker is taken again once the worker is known dead.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { parseCrontab, type ParsedCronItem, type RunnerOptions } from 'graphile-worker';
import { runJobsOnce as runJobs } from '../helpers/jobs.ts';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { openPool, sql, z } from '../../src/db/pool.ts';
import { unlockDeadWorkers } from '../../src/worker/liveness.ts';
import { taskList } from '../../src/worker/tasks.ts';
import { CRONTAB, TASKS } from '../../tasks/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

// A database per test: no worker of one test can take another's jobs.
let db: TestDatabase;
beforeEach(async () => {
  db = await createTestDatabase();
});
afterEach(() => db.drop());

const ITEMS = parseCrontab(CRONTAB);
const RECURRING = Object.fromEntries(ITEMS.map((item) => [item.task, TASKS[item.task]!]));

/** One cron tick of `item`: the add_job call Graphile Worker's cron makes (graphile-worker/dist/cron.js). */
async function tick(item: ParsedCronItem): Promise<void> {
  await db.pool.query(sql.unsafe`
    select graphile_worker.add_job(${item.task}, ${JSON.stringify({ _cron: { ts: new Date().toISOString(), backfilled: false } })}::json,
      ${item.options.queueName ?? null}::text, now(), ${item.options.maxAttempts ?? null}::int, ${item.options.jobKey ?? null}::text,
      ${item.options.priority ?? null}::int, null, ${item.options.jobKeyMode ?? null}::text)
  `);
}

const jobs = () =>
  db.pool.any(sql.type(
    z.object({ task: z.string(), attempts: z.number(), max_attempts: z.number(), locked_by: z.string().nullable(), last_error: z.string().nullable() }),
  )`
    select t.identifier as task, j.attempts::int, j.max_attempts::int, j.locked_by, j.last_error
    from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
  `);

/**
 * Graphile Worker's runOnce, then until its last completion is written: runOnce resolves as soon
 * as its workers stop, and a worker does not await its last job's completion (worker.js).
 */
async function runOnce(options: RunnerOptions & { connectionString: string }): Promise<void> {
  await runJobs(options);
  for (let waited = 0; waited < 5000; waited += 20) {
    const locked = await db.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from graphile_worker._private_jobs where locked_by is not null`,
    );
    if (locked === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function capturingLog() {
  const lines: any[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { log, lines };
}

describe('recurring jobs', () => {
  it('rates__refresh with its provider down: the job ends with the error logged, and the next tick is the retry', async () => {
    const item = ITEMS.find((candidate) => candidate.task === 'rates__refresh')!;
    const { log, lines } = capturingLog();
    const config = loadConfig({
      DATABASE_URL: db.url,
      RATES_PROVIDER: 'tonapi',
      RATES_API_URL: 'http://127.0.0.1:9',
      RATES_CONFIRM_API_URL: 'http://127.0.0.1:9/api/v3',
    });
    const tasks = taskList({ config, pool: db.pool, log, now: () => new Date() }, RECURRING);
    for (let minute = 0; minute < 3; minute += 1) {
      await tick(item);
      await runOnce({ connectionString: db.url, taskList: tasks, noHandleSignals: true });
      assert.deepEqual(await jobs(), [], `after tick ${minute + 1}: no job left to retry or to keep failed`);
    }
    const failures = lines.filter((line) => line.msg === 'recurring task failed; its next run retries it');
    assert.equal(failures.length, 3);
    assert.equal(failures[0].task, 'rates__refresh');
    assert.match(failures[0].err.message, /tonapi rates: request failed/);
  });

  it('every recurring task whose work fails (its database pool gone) leaves no job behind', async () => {
    const closed = await openPool(db.url, { maxPoolSize: 1 });
    await closed.end();
    const { log, lines } = capturingLog();
    const config = loadConfig({ DATABASE_URL: db.url });
    const tasks = taskList({ config, pool: closed, log, now: () => new Date() }, RECURRING);
    for (const item of ITEMS) await tick(item);
    await runOnce({ connectionString: db.url, taskList: tasks, noHandleSignals: true });
    assert.deepEqual(await jobs(), []);
    assert.deepEqual(
      lines
        .filter((line) => line.msg === 'recurring task failed; its next run retries it')
        .map((line) => line.task)
        .sort(),
      ITEMS.map((item) => item.task).sort(),
    );
  });

  it('a recurring job held by a crashed worker is taken again once the worker is known dead, and ends', async () => {
    const config = loadConfig({ DATABASE_URL: db.url });
    const tasks = taskList({ config, pool: db.pool, log: pino({ level: 'silent' }), now: () => new Date() }, RECURRING);
    for (const item of ITEMS) await tick(item);
    // As if a worker that has since been killed had locked them (attempt 1) ten minutes ago.
    await db.pool.query(
      sql.unsafe`update graphile_worker._private_jobs set locked_by = 'worker-killed', locked_at = now() - interval '10 minutes', attempts = 1`,
    );
    assert.deepEqual(await unlockDeadWorkers(db.pool, new Date()), ['worker-killed']);
    await runOnce({ connectionString: db.url, taskList: tasks, noHandleSignals: true });
    assert.deepEqual(await jobs(), []);
  });
});
