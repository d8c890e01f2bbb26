// Logs an operator can read: a webhook receiver that answers 500 is the receiver's fault, not
// Kassa's. The attempt is one `warn` line with the payment id, the attempt, the HTTP status and the
// next retry, and no stack; nothing is logged at `error` (kept for Kassa's own faults), though the
// job fails so that Graphile Worker retries it. Run through the real worker (runOnce) and the
// service's own Graphile logger.
import assert from 'node:assert/strict';
import http from 'node:http';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { runJobsOnce } from '../helpers/jobs.ts';
import { pino } from 'pino';
import { graphileLogger } from '../../src/db/migrate.ts';
import { sql, z } from '../../src/db/pool.ts';
import type { Logger } from '../../src/log.ts';
import { DELIVER_MAX_ATTEMPTS, deliverJobKey } from '../../src/worker/jobs.ts';
import { taskList } from '../../src/worker/tasks.ts';
import webhookDeliver from '../../tasks/webhook__deliver.ts';
import type { TestApp } from '../helpers/app.ts';
import { buildPayment } from '../helpers/factories.ts';
import { startPaymentsApp } from '../helpers/payments.ts';
import { close, listen } from '../helpers/servers.ts';

describe('webhook delivery logs', () => {
  let app: TestApp;
  let receiver: http.Server;
  let url: string;
  before(async () => {
    app = await startPaymentsApp({ env: { WEBHOOK_ALLOW_INSECURE: 'true' } });
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(500).end('broken'));
    });
    url = `http://127.0.0.1:${(await listen(receiver)).port}/kassa/webhook`;
  });
  after(async () => {
    await close(receiver);
    await app.close();
  });

  it("a receiver's 500 is one warn line (payment, attempt, status, next retry), no stack, no error line", async () => {
    const store = await app.store();
    const { id: paymentId, deliveryId } = await buildPayment(app, store, { status: 'completed', webhook: true, body: { webhookURL: url } });
    const lines: any[] = [];
    const log = pino(
      { level: 'debug' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    ) as Logger;
    await runJobsOnce({
      connectionString: app.db.url,
      taskList: taskList({ config: app.config, pool: app.pool, log, now: () => new Date() }, { webhook__deliver: webhookDeliver }),
      noHandleSignals: true,
      logger: graphileLogger(log, true),
    });
    // The job did fail, so that the queue retries it.
    const job = await app.pool.one(
      sql.type(z.object({ attempts: z.number(), last_error: z.string().nullable() }))`
        select attempts, last_error from graphile_worker._private_jobs where key = ${deliverJobKey(deliveryId!)}
      `,
    );
    assert.equal(job.attempts, 1);
    assert.match(job.last_error ?? '', /HTTP 500/);

    const warnings = lines.filter((line) => line.level === 40);
    assert.equal(warnings.length, 1, JSON.stringify(lines));
    const [warning] = warnings;
    assert.equal(warning.paymentId, paymentId);
    assert.equal(warning.deliveryId, deliveryId);
    assert.equal(warning.attempt, 1);
    assert.equal(warning.httpStatus, 500);
    assert.equal(warning.attemptsLeft, DELIVER_MAX_ATTEMPTS - 1, 'the next retry is the queue’s (the API reads its run_at back)');
    assert.match(warning.msg, new RegExp(`attempt 1 failed \\(HTTP 500\\); Graphile Worker retries it \\(${DELIVER_MAX_ATTEMPTS - 1} attempts left\\)`));
    assert.deepEqual(
      lines.filter((line) => line.level >= 50),
      [],
      'nothing at error or fatal',
    );
    assert.deepEqual(
      lines.filter((line) => / {2,}at /.test(JSON.stringify(line)) || 'stack' in line || line.err?.stack),
      [],
      'no stack trace',
    );
  });
});
