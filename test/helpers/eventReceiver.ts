// A store's webhook endpoint for tests: a real HTTP server on 127.0.0.1 that verifies every body with
// the receiver kit against the app's own key set and answers as told; and the worker's
// webhook__deliver jobs run through Graphile Worker (runOnce) with a clock the test may move.
import http from 'node:http';
import { pino } from 'pino';
import { graphileLogger } from '../../src/db/migrate.ts';
import { sql, z } from '../../src/db/pool.ts';
import { createWebhookVerifier, type VerifyResult } from '../../src/webhooks/receiver.ts';
import { taskList } from '../../src/worker/tasks.ts';
import webhookDeliver from '../../tasks/webhook__deliver.ts';
import type { TestApp } from './app.ts';
import { runJobsOnce } from './jobs.ts';
import { close, listen } from './servers.ts';

export interface EventReceiver {
  url: string;
  /** Every request, in arrival order, with the kit's verdict. */
  received: Array<{ text: string; verified: VerifyResult }>;
  close(): Promise<void>;
}

/**
 * Answers `status` (200 unless told) to every request; verifies each with the kit (the app's key set),
 * configured with `storeID` when given (a shop's receiver: another store's bodies verify as 403).
 */
export async function startEventReceiver(
  app: Pick<TestApp, 'url'>,
  status: () => number = () => 200,
  now: () => Date = () => new Date(),
  storeID?: string,
): Promise<EventReceiver> {
  const verifier = createWebhookVerifier({ keysUrl: `${app.url}/pay/v1/webhook/keys`, now, ...(storeID !== undefined ? { storeID } : {}) });
  const received: EventReceiver['received'] = [];
  const { server, port } = await listen(
    http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        void verifier.verify(raw, req.headers).then((verified) => {
          received.push({ text: raw.toString('utf8'), verified });
          res.writeHead(status()).end();
        });
      });
    }),
  );
  return { url: `http://127.0.0.1:${port}/events`, received, close: () => close(server) };
}

/** The events a receiver verified, in arrival order: `{type, eventID, payload}`. */
export function verifiedEvents(receiver: EventReceiver) {
  return receiver.received.map((r) => {
    if (!r.verified.ok || r.verified.event === undefined) throw new Error(`not a verified event: ${JSON.stringify(r.verified)} ${r.text}`);
    return r.verified.event;
  });
}

/**
 * Runs webhook__deliver jobs through Graphile Worker (its worker's clock `now`) until none is due,
 * as a running worker would: one runOnce can leave a queue's next job for the next poll.
 */
export async function runDeliveries(app: TestApp, now: () => Date = () => new Date()): Promise<void> {
  const log = pino({ level: 'silent' });
  const deps = { config: { ...app.config, webhookAllowInsecure: true }, pool: app.pool, log, now, webhookTimeoutMs: 5_000 };
  for (let round = 0; round < 20; round += 1) {
    await runJobsOnce({
      connectionString: app.db.url,
      taskList: taskList(deps, { webhook__deliver: webhookDeliver }),
      noHandleSignals: true,
      logger: graphileLogger(log, true),
    });
    // Graphile hands a failed job back (its fail_job) after runOnce resolves: wait until nothing is locked.
    let due = 0;
    for (let i = 0; i < 500; i += 1) {
      const state = await app.pool.one(sql.type(z.object({ locked: z.number(), due: z.number() }))`
        select (select count(*) from graphile_worker.jobs where task_identifier = 'webhook__deliver' and locked_at is not null)::int
             + (select count(*) from graphile_worker._private_job_queues where locked_at is not null)::int as locked,
               (select count(*) from graphile_worker.jobs where task_identifier = 'webhook__deliver' and run_at <= now() and attempts < max_attempts)::int as due
      `);
      due = state.due;
      if (state.locked === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (due === 0) return;
  }
}
