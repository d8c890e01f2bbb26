// Drill 5 — expiry burst: N payments (pending TON and USDT, and some `created` ones) all due in the
// same second T, with the chain reader running in the real worker process. Expiry is one
// statement the reader runs after each step: a pending payment expires once the reader has booked
// every block up to 60 s past its expiresAt (the chain's clock, chain_reader.settled_until, less
// the margin for shard blocks committed late: LATE_COMMIT_MARGIN_MS), a created one on wall-clock
// time. Some pending payments are paid just before T (so some of their blocks are
// read after T) and some just after; each one's outcome must follow its transfer's chain time:
// before expiresAt completes it (even when booked after T), at or after expires it (the money
// booked after_expiry). Every unpaid payment expires, none before T (no pending one before
// T + the margin), within the issue's 2 s of T (pending ones: of T + the margin; when the machine
// is so busy that the reader itself settles that far later than that, within 1 s of the step that
// did); no Graphile job is queued per payment.
//
// The API refuses a TTL under 900 s, so the payments are created in bulk with the create command
// (createPayment in src/payments/commands.ts, what POST /v1/payments runs) in this process, and
// then their expires_at is moved to the same near-future second in SQL. The drill says so in its
// output.
//
//   node drills/expiry-burst.ts           short tier: 1,000 payments, up to 50 paid before T, 10 after
//   node drills/expiry-burst.ts --long    long tier: 10,000 payments, up to 200 paid before T, 50 after
import { api, drill, drillDatabase, drillStore, keepLogs, LONG, readerRunning, sleep, startApart, waitFor } from './lib.ts';
import { openPool, sql, z, type FragmentSqlToken } from '../src/db/pool.ts';
import { createPayment } from '../src/payments/commands.ts';
import { draftFromPayment } from '../src/payments/drafts.ts';
import { LATE_COMMIT_MARGIN_MS } from '../src/chain/clock.ts';

const N = LONG ? 10_000 : 1_000;
const CREATED = N / 10; // of the N, created without a method (they expire on wall-clock time)
const PAID = LONG ? 200 : 50;
const LATE = LONG ? 50 : 10;
const CREATE_CONCURRENCY = 8;
const PAY_FROM_MS = LONG ? 10_000 : 3_000; // the just-in-time transfers are sent from this long before T …
const PAY_UNTIL_MS = 250; // … until this long before T
const LEAD_MS = PAY_FROM_MS + 1_500; // T is at least this far ahead when the payments are moved to it
const ON_TIME_MS = 2_000; // the issue's bound: expired within 2 s of expiresAt while the reader keeps up
const STEP_MS = 1_000; // when the reader itself is late: expired within this long of settling past T
const SETTLE_LIMIT_MS = (LONG ? 5 * 60_000 : 60_000) + LATE_COMMIT_MARGIN_MS;

interface Created {
  id: string;
  coin: 'TON' | 'USDT' | null;
  coinAmount: string | null;
  address: string | null;
}

await drill(`expiry burst: ${N.toLocaleString('en')} payments due in the same second, up to ${PAID} paid just in time, ${LATE} paid late`, async (report) => {
  const db = await drillDatabase();
  const started = await startApart(db.url).catch(async (error: unknown) => {
    await db.destroy();
    throw error;
  });
  const { api: apiProcess, worker } = started;
  const { storeId, pool } = await drillStore(db.url);
  const bulk = await openPool(db.url, { maxPoolSize: CREATE_CONCURRENCY + 2 });
  const count = (query: FragmentSqlToken) => pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from (${query}) q`);
  try {
    await readerRunning(pool);
    const jobsBefore = await count(sql.fragment`select 1 from graphile_worker._private_jobs`);
    // 1. N payments priced from USD like any API create: N − CREATED pending (half TON, half
    //    USDT, method chosen), CREATED without a method.
    const config = { masterKey: null, depositPublicKey: null, tonNetwork: 'sandbox' as const, ratesMaxDivergencePercent: '2' };
    const createdAt = performance.now();
    const created: Created[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CREATE_CONCURRENCY }, async () => {
        while (next < N) {
          const i = next++;
          const coin = i < CREATED ? null : i % 2 === 0 ? 'TON' : 'USDT';
          const view = await bulk.transaction(async (tx) => {
            const draft = await draftFromPayment(
              tx,
              storeId,
              {
                amount: '1',
                currency: 'USD',
                order_id: `burst-${i}`,
                ...(coin ? { payment_options: { methods: [{ coin, chain: 'TON' }] } } : {}),
              },
              { network: config.tonNetwork },
            );
            return createPayment(tx, config, storeId, draft, new Date());
          });
          created.push({ id: view.id, coin, coinAmount: view.coin_amount ?? null, address: view.address_friendly ?? null });
        }
      }),
    );
    const createSeconds = (performance.now() - createdAt) / 1000;
    const statusCounts = async () => {
      const rows = await pool.any(
        sql.type(
          z.object({ status: z.string(), n: z.number() }),
        )`select status, count(*)::int as n from payments where store_id = ${storeId} group by status order by status`,
      );
      return Object.fromEntries(rows.map((row) => [row.status, row.n]));
    };
    report.figure(
      'created (create command, in bulk)',
      `${created.length} payments in ${createSeconds.toFixed(1)} s (${(created.length / createSeconds).toFixed(0)}/s): ${JSON.stringify(await statusCounts())}`,
    );
    const jobsQueued = (await count(sql.fragment`select 1 from graphile_worker._private_jobs`)) - jobsBefore;
    report.check('no Graphile job queued per payment', jobsQueued < 10, `${jobsQueued} jobs queued while ${N} payments were created`);

    const pending = created.filter((p) => p.coin !== null).sort(() => Math.random() - 0.5);
    const candidates = pending.slice(0, PAID);
    const late = pending.slice(PAID, PAID + LATE);
    const pay = (p: Created) =>
      api(apiProcess.url, 'POST', '/sandbox/v1/transfers', { body: { to: p.address, coin: p.coin, amount: p.coinAmount } }).then((response) => ({
        response,
        answeredAt: Date.now(),
      }));

    // 2. Every payment is due in the same second T: expires_at moved there in SQL.
    const T = new Date(Math.ceil((Date.now() + LEAD_MS) / 1000) * 1000);
    const ids = created.map((p) => p.id);
    await pool.query(sql.unsafe`update payments set expires_at = ${sql.timestamp(T)} where id = any(${sql.array(ids, 'uuid')})`);
    report.figure(
      'expiry second T',
      `${T.toISOString()} (expires_at of all ${N} moved there in SQL, ${((T.getTime() - Date.now()) / 1000).toFixed(1)} s ahead)`,
    );

    // When the reader has settled the chain up to T + the margin, when pending payments are due (watched from here, every 50 ms).
    const due = T.getTime() + LATE_COMMIT_MARGIN_MS;
    let settledSeenAt: number | null = null;
    const watching = (async () => {
      while (settledSeenAt === null) {
        const settled = await pool
          .maybeOneFirst(sql.type(z.object({ at: z.date() }))`select settled_until as at from chain_reader where network = 'sandbox'`)
          .catch(() => null);
        if (settled && settled.getTime() >= due) settledSeenAt = Date.now();
        else await sleep(50);
      }
    })();

    // 3. Paid just before T: the exact amount, one transfer after another on the sandbox chain,
    //    spread from T − 3 s (long: 10 s) until T − 0.25 s (a busy machine gets fewer sent), so the
    //    last of them are in blocks the reader books around T. One may still execute after T:
    //    what counts is each transfer's chain time, read from the books.
    await sleep(Math.max(0, T.getTime() - PAY_FROM_MS - Date.now()));
    const every = (PAY_FROM_MS - PAY_UNTIL_MS) / PAID;
    const payFrom = Date.now();
    const paid: Created[] = [];
    const transfers: Array<Awaited<ReturnType<typeof pay>>> = [];
    for (const [i, candidate] of candidates.entries()) {
      await sleep(Math.max(0, payFrom + i * every - Date.now()));
      if (Date.now() >= T.getTime() - PAY_UNTIL_MS) break;
      paid.push(candidate);
      transfers.push(await pay(candidate));
    }
    // 4. Some pay late: after T, so on-chain time at or after expiresAt.
    await sleep(Math.max(0, T.getTime() - Date.now() + 200));
    const lateTransfers = await Promise.all(late.map(pay));
    const all = [...transfers, ...lateTransfers];
    const sent = all.filter((t) => t.response.status === 201).length;
    report.check(
      `payments paid on the sandbox chain around T: before it (up to ${PAID}) and ${LATE} after`,
      sent === paid.length + LATE,
      `${sent}/${paid.length + LATE} answered 201 (${paid.length} sent before T, ${transfers.filter((t) => t.answeredAt < T.getTime()).length} of them answered before it)${sent < paid.length + LATE ? `; e.g. ${all.find((t) => t.response.status !== 201)?.response.text.slice(0, 120)}` : ''}`,
    );

    // 5. The worker's reader expires them; wait until nothing of the store is open and every
    //    transfer is booked.
    const open = () => count(sql.fragment`select 1 from payments where store_id = ${storeId} and status in ('created', 'pending')`);
    const payers = [...paid, ...late];
    const payerIds = payers.map((p) => p.id);
    const booked = () =>
      count(sql.fragment`select distinct payment_id from transfers where payment_id = any(${sql.array(payerIds, 'uuid')}) and effect <> 'not_counted'`);
    await waitFor(
      'every payment to end and every transfer to be booked',
      async () => (await open()) === 0 && (await booked()) === payers.length,
      SETTLE_LIMIT_MS,
      100,
    ).catch(() => {});
    if (settledSeenAt === null) {
      // The watcher's last look may just have missed it: look once more (now is then an upper bound).
      const settled = await pool
        .maybeOneFirst(sql.type(z.object({ at: z.date() }))`select settled_until as at from chain_reader where network = 'sandbox'`)
        .catch(() => null);
      settledSeenAt = settled && settled.getTime() >= due ? Date.now() : Number.POSITIVE_INFINITY;
    }
    await watching;

    const statuses = await pool.any(sql.type(z.object({ id: z.string(), status: z.string(), expired_at: z.date().nullable(), paid_at: z.date().nullable() }))`
      select id, status, expired_at, paid_at from payments where store_id = ${storeId}
    `);
    const byId = new Map(statuses.map((row) => [row.id, row]));
    const payerSet = new Set(payerIds);
    const unpaid = statuses.filter((row) => !payerSet.has(row.id));
    const unpaidExpired = unpaid.filter((row) => row.status === 'expired');
    report.figure('payments by status', JSON.stringify(await statusCounts()));
    report.check(
      'every unpaid payment is expired (pending and created)',
      unpaidExpired.length === N - payers.length && unpaid.length === N - payers.length,
      `${unpaidExpired.length}/${N - payers.length}`,
    );

    // Each paid payment's outcome follows its transfer's chain time against expiresAt (= T).
    const books = await pool.any(sql.type(z.object({ payment_id: z.string(), effect: z.string(), chain_time: z.date(), recorded_at: z.date() }))`
      select payment_id, effect, chain_time, recorded_at from transfers where payment_id = any(${sql.array(payerIds, 'uuid')}) and effect <> 'not_counted'
    `);
    const bookOf = new Map(books.map((row) => [row.payment_id, row]));
    const inTime = payers.filter((p) => (bookOf.get(p.id)?.chain_time.getTime() ?? Infinity) < T.getTime());
    const afterT = payers.filter((p) => (bookOf.get(p.id)?.chain_time.getTime() ?? -Infinity) >= T.getTime());
    const wrongInTime = inTime.filter((p) => {
      const row = byId.get(p.id);
      return !(row?.status === 'completed' && row.paid_at !== null && row.paid_at < T && ['completed', 'overpaid'].includes(bookOf.get(p.id)!.effect));
    });
    const wrongAfterT = afterT.filter((p) => !(byId.get(p.id)?.status === 'expired' && bookOf.get(p.id)!.effect === 'after_expiry'));
    const unbooked = payers.length - inTime.length - afterT.length;
    const bookedAfterT = inTime.filter((p) => bookOf.get(p.id)!.recorded_at.getTime() >= T.getTime()).length;
    report.check(
      'paid before expiresAt on chain: completed (paid_at before T), even when booked after T',
      wrongInTime.length === 0 && unbooked === 0,
      `${inTime.length - wrongInTime.length}/${inTime.length} completed, ${bookedAfterT} of them booked after T${unbooked ? `; ${unbooked} transfers not booked` : ''}${wrongInTime.length ? `; e.g. ${byId.get(wrongInTime[0]!.id)?.status}` : ''}`,
    );
    report.check(
      'paid at or after expiresAt on chain: expired, the money booked after_expiry',
      wrongAfterT.length === 0 && late.every((p) => afterT.includes(p)),
      `${afterT.length - wrongAfterT.length}/${afterT.length} (${LATE} sent after T, ${afterT.length - LATE} of those sent before it executed after it)`,
    );
    report.check(
      `the scenario had both sides: at least ${PAID / 5} payments on chain before T`,
      inTime.length >= PAID / 5,
      `${inTime.length} before T, ${afterT.length} at or after it`,
    );

    const tooEarly = statuses.filter((row) => row.expired_at !== null && row.expired_at < T).length;
    report.check('none expired before T', tooEarly === 0, `${tooEarly} early`);

    const createdIds = new Set(created.filter((p) => p.coin === null).map((p) => p.id));
    const lagOf = (rows: typeof statuses, from: number) => rows.map((row) => row.expired_at!.getTime() - from).sort((a, b) => a - b);
    // Pending ones from T + the margin (when they are due), created ones from T.
    const pendingTimes = lagOf(
      unpaidExpired.filter((row) => !createdIds.has(row.id)),
      due,
    );
    const createdTimes = lagOf(
      unpaidExpired.filter((row) => createdIds.has(row.id)),
      T.getTime(),
    );
    const pendingEarly = pendingTimes.filter((ms) => ms < 0).length;
    report.check(
      `no pending payment expired before T + ${LATE_COMMIT_MARGIN_MS / 1000} s (the margin for late shard blocks)`,
      pendingEarly === 0,
      `${pendingEarly} early`,
    );
    const lastMs = Math.max(pendingTimes.at(-1) ?? Infinity, createdTimes.at(-1) ?? Infinity);
    const readerLagMs = settledSeenAt - due;
    const readerKeptUp = readerLagMs <= ON_TIME_MS - STEP_MS / 2;
    report.check(
      `expired on time: within ${ON_TIME_MS / 1000} s of when due (the reader settled past T + ${LATE_COMMIT_MARGIN_MS / 1000} s ${readerLagMs} ms after that${readerKeptUp ? '' : `; late, so: within ${STEP_MS / 1000} s of that`})`,
      Number.isFinite(readerLagMs) && (readerKeptUp ? lastMs <= ON_TIME_MS : lastMs - readerLagMs <= STEP_MS),
      `last ${lastMs} ms after due`,
    );
    const describe = (times: number[]) =>
      times.length === 0 ? 'none' : `first ${times[0]} ms, half ${times[Math.floor(times.length / 2)]} ms, last ${times.at(-1)} ms after`;
    report.figure(`pending (${pendingTimes.length}, chain's clock, from T + the margin)`, describe(pendingTimes));
    report.figure(`created (${createdTimes.length}, wall clock, from T)`, describe(createdTimes));
    report.figure(`reader settled the chain past T + ${LATE_COMMIT_MARGIN_MS / 1000} s`, `${readerLagMs} ms after that`);
    report.figure('distinct expired_at values (one per statement)', new Set([...pendingTimes, ...createdTimes]).size);
    const lastCompleted = inTime.map((p) => bookOf.get(p.id)!.recorded_at.getTime()).reduce((a, b) => Math.max(a, b), -Infinity);
    if (Number.isFinite(lastCompleted)) report.figure('T → last paid-in-time completed', `${lastCompleted - T.getTime()} ms`);
    const cursor = await pool.maybeOne(sql.type(z.object({ behind: z.number(), settled: z.date() }))`
      select (latest_block_seqno - last_block_seqno)::int as behind, settled_until as settled from chain_reader where network = 'sandbox'
    `);
    report.figure('chain reader at the end', cursor ? `${cursor.behind} blocks behind, settled until ${cursor.settled.toISOString()}` : 'no cursor');

    const failedSteps = (worker.output().match(/"msg":"chain reader step failed/g) ?? []).length;
    report.check('no chain reader step failed (worker log)', failedSteps === 0, `${failedSteps} failed steps`);
    report.check('both processes ran through', apiProcess.child.exitCode === null && worker.child.exitCode === null);
  } finally {
    keepLogs({ api: apiProcess, worker });
    await bulk.end().catch(() => {});
    await pool.end().catch(() => {});
    await worker.stop();
    await apiProcess.stop();
    await db.destroy();
  }
});
