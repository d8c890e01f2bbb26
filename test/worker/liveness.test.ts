// Worker liveness: heartbeats of running workers, and unlocking the jobs of dead ones.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from 'graphile-worker';
import { pino } from 'pino';
import { sql, z } from '../../src/db/pool.ts';
import { DEAD_AFTER_MS, startHeartbeat, unlockDeadWorkers } from '../../src/worker/liveness.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
const log = pino({ level: 'silent' });
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

async function lockedJob(lockedBy: string, lockedAgoMs: number): Promise<string> {
  const id = await db.pool.oneFirst(sql.type(z.object({ id: z.string() }))`
    select (graphile_worker.add_job('idempotency__purge', '{}'::json, job_key := ${`test:${lockedBy}`})).id::text as id
  `);
  await db.pool.query(sql.unsafe`
    update graphile_worker._private_jobs set locked_by = ${lockedBy}, locked_at = now() - ${`${lockedAgoMs} milliseconds`}::interval where id = ${id}
  `);
  return id;
}

const lockOf = (id: string) =>
  db.pool.oneFirst(sql.type(z.object({ locked_by: z.string().nullable() }))`select locked_by from graphile_worker._private_jobs where id = ${id}`);

describe('worker liveness', () => {
  it('records the ids of running Graphile workers and removes them on stop', async () => {
    const heartbeat = startHeartbeat(db.pool, log, () => new Date());
    const runner = await run({ connectionString: db.url, concurrency: 2, noHandleSignals: true, taskList: {}, events: heartbeat.events, pollInterval: 60_000 });
    try {
      let ids: readonly string[] = [];
      for (let i = 0; i < 50 && ids.length < 3; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        ids = await db.pool.anyFirst(sql.type(z.object({ worker_id: z.string() }))`select worker_id from worker_heartbeats`);
      }
      assert.equal(ids.filter((id) => id.startsWith('pool-')).length, 1, 'the pool (which locks the jobs)');
      assert.equal(ids.filter((id) => id.startsWith('worker-')).length, 2, 'and each of its workers');
    } finally {
      await runner.stop();
      await heartbeat.stop();
    }
    assert.equal(await db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from worker_heartbeats`), 0);
  });

  it('a job locked by a live worker pool keeps its lock', async () => {
    const heartbeat = startHeartbeat(db.pool, log, () => new Date());
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const runner = await run({
      connectionString: db.url,
      concurrency: 1,
      noHandleSignals: true,
      events: heartbeat.events,
      pollInterval: 100,
      taskList: { hold: async () => held },
    });
    try {
      const id = await db.pool.oneFirst(sql.type(z.object({ id: z.string() }))`select (graphile_worker.add_job('hold')).id::text as id`);
      let lockedBy: string | null = null;
      for (let i = 0; i < 100 && lockedBy === null; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        lockedBy = await lockOf(id);
      }
      assert.ok(lockedBy, 'the job was taken');
      // Long after the lock was taken, a worker that keeps beating keeps it.
      await db.pool.query(sql.unsafe`update graphile_worker._private_jobs set locked_at = now() - interval '1 hour' where id = ${id}`);
      assert.deepEqual(await unlockDeadWorkers(db.pool, new Date()), [], 'its heartbeat is fresh');
      assert.equal(await lockOf(id), lockedBy);
    } finally {
      release();
      await runner.stop();
      await heartbeat.stop();
    }
  });

  it('unlocks the jobs of workers not seen for two minutes, and only those', async () => {
    const now = new Date();
    await db.pool.query(sql.unsafe`
      insert into worker_heartbeats (worker_id, process, last_seen_at) values
        ('worker-alive', 'test', now()), ('worker-stale', 'test', now() - interval '10 minutes')
    `);
    const alive = await lockedJob('worker-alive', DEAD_AFTER_MS * 3);
    const stale = await lockedJob('worker-stale', DEAD_AFTER_MS * 3);
    const unknownOld = await lockedJob('worker-unknown-old', DEAD_AFTER_MS * 3);
    const unknownNew = await lockedJob('worker-unknown-new', 1000);
    const unlocked = await unlockDeadWorkers(db.pool, now);
    assert.deepEqual([...unlocked].sort(), ['worker-stale', 'worker-unknown-old']);
    assert.equal(await lockOf(alive), 'worker-alive');
    assert.equal(await lockOf(stale), null);
    assert.equal(await lockOf(unknownOld), null);
    assert.equal(await lockOf(unknownNew), 'worker-unknown-new', 'a lock taken just now by a worker whose heartbeat is not written yet is left alone');
  });
});
