// Drill 2 — worker killed mid-delivery: the worker is killed (SIGKILL) while the merchant's
// receiver holds the webhook request open. After a new worker starts, the webhook is delivered;
// the attempt log shows the interrupted attempt, then a new, freshly signed one.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql, z } from '../src/db/pool.ts';
import { api, drill, drillDatabase, drillStore, startKassa, waitFor, type Kassa } from './lib.ts';

interface Received {
  body: string;
  kid: string | undefined;
  signature: string | undefined;
}

await drill('worker killed mid-delivery', async (report) => {
  const db = await drillDatabase();
  // The receiver holds the first request open (the worker dies meanwhile) and answers 200 after.
  const received: Received[] = [];
  const held: http.ServerResponse[] = [];
  const receiver = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ body, kid: request.headers['x-signature-kid'] as string | undefined, signature: request.headers['x-signature'] as string | undefined });
      if (received.length === 1) held.push(response);
      else response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/kassa`;

  const env = { WORKER_DEAD_AFTER_SECONDS: '5' };
  const apiProcess = await startKassa({ databaseUrl: db.url, part: 'api', env });
  let worker: Kassa | null = await startKassa({ databaseUrl: db.url, part: 'worker', env, baseUrl: apiProcess.url });
  const { token, pool } = await drillStore(db.url);
  try {
    const created = await api(apiProcess.url, 'POST', '/v1/payments', {
      token,
      body: { amount: '1', currency: 'TON', webhookURL: hook, order_id: 'drill-2', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    const payment = created.json;
    await api(apiProcess.url, 'POST', '/sandbox/v1/transfers', { body: { to: payment.paymentDetails.address, coin: 'TON', amount: '1' } });
    await waitFor('the first webhook request', async () => received.length >= 1, 30_000);
    report.check(
      'the payment completed and the webhook was sent',
      (await api(apiProcess.url, 'GET', `/v1/payments/${payment.id}/status`, { token })).json.status === 'completed',
    );

    const killedAt = Date.now();
    await worker.stop('SIGKILL');
    worker = null;
    for (const response of held) response.destroy();
    const unfinished = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
      where d.payment_id = ${payment.id} and a.finished_at is null
    `);
    report.check('the interrupted attempt is on the log, unfinished', unfinished === 1, `${unfinished} unfinished attempts`);

    worker = await startKassa({ databaseUrl: db.url, part: 'worker', env, baseUrl: apiProcess.url });
    // The unlock runs every minute by cron; here its tick is enqueued as soon as the dead worker
    // has been silent for WORKER_DEAD_AFTER_SECONDS.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    await pool.query(sql.unsafe`select graphile_worker.add_job('worker__unlock_dead')`);
    await waitFor('the redelivery', async () => received.length >= 2, 90_000, 200);
    const recoveredMs = Date.now() - killedAt;

    await waitFor(
      'the delivery to be marked delivered',
      async () => {
        const deliveries = (await api(apiProcess.url, 'GET', `/v1/payments/${payment.id}/webhook-deliveries`, { token })).json.data;
        return deliveries?.[0]?.status === 'delivered';
      },
      10_000,
    );
    const deliveries = (await api(apiProcess.url, 'GET', `/v1/payments/${payment.id}/webhook-deliveries`, { token })).json.data;
    const attempts = deliveries[0].attempts as Array<{ attempt: number; httpStatus: number | null; error: string | null; finishedAt: string | null }>;
    report.check('the webhook was delivered after the restart', deliveries[0].status === 'delivered', `status ${deliveries[0].status}`);
    report.check(
      'the log shows the interrupted attempt',
      attempts[0]?.httpStatus === null && /interrupted/.test(attempts[0]?.error ?? ''),
      JSON.stringify(attempts[0]),
    );
    report.check('then a successful attempt', attempts.at(-1)?.httpStatus === 200 && attempts.length >= 2, `${attempts.length} attempts`);
    const [first, second] = received;
    report.check(
      'the retry was signed afresh (new signAt, same payment)',
      first!.body !== second!.body && JSON.parse(first!.body).payload.paymentID === JSON.parse(second!.body).payload.paymentID,
    );
    report.check('one delivery for the completion', deliveries.length === 1, `${deliveries.length} deliveries`);
    report.figure('kill → delivered', `${(recoveredMs / 1000).toFixed(1)} s (unlock after ${env.WORKER_DEAD_AFTER_SECONDS} s of silence)`);
  } finally {
    await pool.end();
    await worker?.stop();
    await apiProcess.stop();
    receiver.closeAllConnections();
    receiver.close();
    await db.destroy();
  }
});
