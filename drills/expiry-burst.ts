// Drill 5 — expiry burst: N pending payments (TON and USDT) all expiring in the same second, some
// of them paid in time on the sandbox chain shortly before, with the watcher kept away from those
// so that only the expiry's last look at the chain can see the money. The real worker process
// expires them: every unpaid one is expired, none that was paid in time (they are completed), no
// expiry job fails or is left behind, and the time from the expiry second to the last expired
// payment is printed.
//
// The API refuses a TTL under 900 s, so the payments are created in bulk with the create command
// (createPayment in src/payments/commands.ts, what POST /v1/payments runs) in this process, and
// then their expires_at and their payment__expire job's run_at are moved to the same near-future
// second in SQL. The drill says so in its output.
//
//   node drills/expiry-burst.ts           short tier: 1,000 payments, 50 paid in time, 10 paid late
//   node drills/expiry-burst.ts --long    long tier: 10,000 payments, 200 paid in time, 50 paid late
import { api, drill, drillDatabase, drillStore, keepLogs, LONG, sleep, startApart, waitFor } from './lib.ts';
import { openPool, sql, z } from '../src/db/pool.ts';
import { createPayment } from '../src/payments/commands.ts';
import { draftFromPayment } from '../src/payments/drafts.ts';

const N = LONG ? 10_000 : 1_000;
const PAID = LONG ? 200 : 50;
const LATE = LONG ? 50 : 10;
const CREATE_CONCURRENCY = 8;
const LEAD_MS = 2_000; // the expiry second is at least this far ahead when the payments are moved to it
const SETTLE_LIMIT_MS = LONG ? 15 * 60_000 : 90_000;

interface Created {
  id: string;
  coin: 'TON' | 'USDT';
  coinAmount: string;
  address: string;
}

await drill(`expiry burst: ${N.toLocaleString('en')} payments expiring in the same second, ${PAID} paid in time, ${LATE} paid late`, async (report) => {
  const db = await drillDatabase();
  const started = await startApart(db.url).catch(async (error: unknown) => {
    await db.destroy();
    throw error;
  });
  const { api: apiProcess, worker } = started;
  const { storeId, pool } = await drillStore(db.url);
  const bulk = await openPool(db.url, { maxPoolSize: CREATE_CONCURRENCY + 2 });
  try {
    // 1. N pending payments, half TON and half USDT, priced from USD like any API create.
    const config = { masterKey: null, tonNetwork: 'sandbox' as const };
    const createdAt = performance.now();
    const created: Created[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CREATE_CONCURRENCY }, async () => {
        while (next < N) {
          const i = next++;
          const coin = i % 2 === 0 ? 'TON' : 'USDT';
          const view = await bulk.transaction(async (tx) => {
            const draft = await draftFromPayment(tx, storeId, { amount: '1', currency: 'USD', order_id: `burst-${i}`, payment_options: { methods: [{ coin, chain: 'TON' }] } });
            return createPayment(tx, config, storeId, draft, new Date());
          });
          created.push({ id: view.id, coin, coinAmount: view.coin_amount!, address: view.address_friendly! });
        }
      }),
    );
    const createSeconds = (performance.now() - createdAt) / 1000;
    report.figure('created (create command, in bulk)', `${created.length} pending payments in ${createSeconds.toFixed(1)} s (${(created.length / createSeconds).toFixed(0)}/s)`);

    const shuffled = [...created].sort(() => Math.random() - 0.5);
    const paid = shuffled.slice(0, PAID);
    const late = shuffled.slice(PAID, PAID + LATE);
    const paidIds = paid.map((p) => p.id);

    // 2. Keep the watcher away from the ones paid in time (as a watcher lagging behind would be):
    //    only the expiry's last look at the chain may find their money. Their accounts are made
    //    not due for a day; a watcher round already running may have claimed some of them, so once
    //    it has ended (rounds are chain__watch jobs) they are made not due again.
    const defer = () => pool.query(sql.unsafe`update chain_watches set next_check_at = now() + interval '1 day' where payment_id = any(${sql.array(paidIds, 'uuid')})`);
    await defer();
    const rounds = await pool.anyFirst(sql.type(z.object({ id: z.string() }))`
      select j.id::text as id from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'chain__watch' and j.locked_at is not null
    `);
    await waitFor(
      'the watcher round in progress to end',
      async () => (await pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from graphile_worker._private_jobs where id = any(${sql.array(rounds, 'int8')}) and locked_at is not null`)) === 0,
      60_000,
      50,
    );
    await defer();

    // 3. Pay them in time: the exact amount, on the sandbox chain, through the API process.
    const transfers = await Promise.all(
      paid.map((p, i) => sleep(i * 10).then(() => api(apiProcess.url, 'POST', '/sandbox/v1/transfers', { body: { to: p.address, coin: p.coin, amount: p.coinAmount } }))),
    );
    const sent = transfers.filter((t) => t.status === 201).length;
    report.check(`${PAID} payments paid in time on the sandbox chain`, sent === PAID, `${sent}/${PAID} transfers answered 201${sent < PAID ? `; e.g. ${transfers.find((t) => t.status !== 201)?.text.slice(0, 120)}` : ''}`);

    // 4. Every payment expires in the same second T: expires_at and the job's run_at, moved in SQL.
    const T = new Date(Math.ceil((Date.now() + LEAD_MS) / 1000) * 1000);
    const ids = created.map((p) => p.id);
    await pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`update payments set expires_at = ${sql.timestamp(T)} where id = any(${sql.array(ids, 'uuid')})`);
      await tx.query(sql.unsafe`
        update graphile_worker._private_jobs set run_at = ${sql.timestamp(T)}
        where key = any(${sql.array(ids.map((id) => `payment__expire:${id}`), 'text')})
      `);
    });
    report.figure('expiry second T', `${T.toISOString()} (expires_at and payment__expire run_at of all ${N} moved there in SQL, ${LEAD_MS / 1000}+ s ahead)`);
    const early = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from payments where id = any(${sql.array(paidIds, 'uuid')}) and status = 'completed'
    `);

    // 5. Some pay late: after T, on-chain time at or after expiresAt.
    await sleep(Math.max(0, T.getTime() - Date.now() + 200));
    const lateTransfers = await Promise.all(late.map((p) => api(apiProcess.url, 'POST', '/sandbox/v1/transfers', { body: { to: p.address, coin: p.coin, amount: p.coinAmount } })));

    // 6. Let the worker work: until nothing of the store is pending and no expiry job is left.
    const open = () => pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where store_id = ${storeId} and status in ('created', 'pending')`);
    const jobsLeft = () => pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'payment__expire'
    `);
    await waitFor('every payment to end and every expiry job to finish', async () => (await open()) === 0 && (await jobsLeft()) === 0, SETTLE_LIMIT_MS, 250).catch(() => {});

    const statuses = await pool.any(sql.type(z.object({ id: z.string(), status: z.string(), expired_at: z.date().nullable(), paid_at: z.date().nullable() }))`
      select id, status, expired_at, paid_at from payments where store_id = ${storeId}
    `);
    const byId = new Map(statuses.map((row) => [row.id, row]));
    const paidSet = new Set(paidIds);
    const unpaid = statuses.filter((row) => !paidSet.has(row.id));
    const unpaidExpired = unpaid.filter((row) => row.status === 'expired');
    const counts: Record<string, number> = {};
    for (const row of statuses) counts[row.status] = (counts[row.status] ?? 0) + 1;
    report.figure('payments by status', JSON.stringify(counts));
    report.check('every unpaid payment is expired', unpaidExpired.length === N - PAID, `${unpaidExpired.length}/${N - PAID}`);
    const paidRows = paid.map((p) => byId.get(p.id)!);
    const paidCompleted = paidRows.filter((row) => row.status === 'completed' && row.paid_at !== null && row.paid_at < T);
    const paidExpired = paidRows.filter((row) => row.status === 'expired').length;
    report.check('none paid in time expired: every one is completed, paid before T', paidCompleted.length === PAID && paidExpired === 0, `${paidCompleted.length}/${PAID} completed, ${paidExpired} expired`);
    const lastLook = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(distinct payment_id)::int as n from transfers
      where payment_id = any(${sql.array(paidIds, 'uuid')}) and effect in ('completed', 'overpaid') and recorded_at >= ${sql.timestamp(T)}
    `);
    report.check('the money paid in time was found by the expiry (the watcher was kept away)', lastLook === PAID && early === 0, `${lastLook}/${PAID} recorded at or after T; ${early} completed before T`);
    const lateOk = late.filter((p) => byId.get(p.id)?.status === 'expired').length;
    report.check('the ones paid after T are expired, not completed', lateOk === LATE && lateTransfers.every((t) => t.status === 201), `${lateOk}/${LATE} expired`);
    const tooEarly = statuses.filter((row) => row.expired_at !== null && row.expired_at < T).length;
    report.check('none expired before T', tooEarly === 0, `${tooEarly} early`);

    const left = await jobsLeft();
    report.check('every expiry job finished (none left, none failed)', left === 0, `${left} payment__expire jobs left in the queue`);
    const failedRuns = (worker.output().match(/"msg":"Failed task [0-9]+ \(payment__expire/g) ?? []).length;
    report.check('no expiry job run failed (worker log)', failedRuns === 0, `${failedRuns} failed runs`);

    const expiredTimes = unpaidExpired.map((row) => row.expired_at!.getTime() - T.getTime()).sort((a, b) => a - b);
    if (expiredTimes.length > 0) {
      const last = expiredTimes.at(-1)!;
      report.figure('burst: T → first expired', `${expiredTimes[0]} ms`);
      report.figure('burst: T → half expired', `${expiredTimes[Math.floor(expiredTimes.length / 2)]} ms`);
      report.figure('burst: T → last expired', `${last} ms (${(expiredTimes.length / Math.max(last, 1) * 1000).toFixed(0)} expiries/s)`);
    }
    const lastCompleted = await pool.maybeOneFirst(sql.type(z.object({ at: z.date().nullable() }))`
      select max(recorded_at) as at from transfers where payment_id = any(${sql.array(paidIds, 'uuid')}) and effect in ('completed', 'overpaid')
    `);
    if (lastCompleted) report.figure('T → last paid-in-time completed', `${lastCompleted.getTime() - T.getTime()} ms`);
    report.check('both processes ran through', apiProcess.child.exitCode === null && worker.child.exitCode === null);
  } finally {
    keepLogs({ api: apiProcess, worker });
    await bulk.end().catch(() => {});
    await pool.end().catch(() => {});
    await worker.kill();
    await apiProcess.kill();
    await db.destroy();
  }
});
