// Drill — several containers behind a pooler (issue 46): PostgreSQL, PgBouncer in transaction mode in
// front of it (Debian's 1.18, test/helpers/pgbouncer.ts), two `kassa start --api --skip-migrate`
// processes with DATABASE_URL = PgBouncer and two `kassa start --worker --skip-migrate` processes with
// DATABASE_SESSION_URL = PostgreSQL itself, on the sandbox chain — the settings of
// examples/compose-several-containers.yml (docs/OPERATIONS.md, "Running on managed PostgreSQL with
// several containers"), PgBouncer's settings included (its connect_query sets the statement timeout on
// the pooled connections; test/foundations/compose-example.test.ts keeps the two in step). It proves:
//   - payments created through both APIs complete (paid on the sandbox chain, read through the other API);
//   - webhooks are delivered with p99 under 2 s without NOTIFY: the workers' session connections pass
//     through a relay that drops PostgreSQL's notifications, so their LISTEN hears nothing (as it would
//     through a transaction pooler) and Graphile Worker's polling alone must deliver (every second).
//     Without the relay they would hear every job: a NOTIFY sent through PgBouncer (the APIs' add_job)
//     reaches a LISTEN on a direct connection — with a 5 s poll, p99 stayed under 1 s;
//   - exactly one worker holds the chain reader's lease; SIGKILLed, the other takes it over within
//     the documented 7 s (the 6 s lease, then a 1 s check; 8 s allowed here), and every transfer sent
//     is booked exactly once (rows counted by hash);
//   - PgBouncer frozen (SIGSTOP): the APIs answer 503 service_unavailable in bounded time, never hang,
//     while the workers (not behind it) go on; after SIGCONT the APIs recover without a restart;
//   - no "prepared statement does not exist" (nor any prepared-statement error) in any process's log;
//   - the reports read a streaming replica (item 4): PostgreSQL here is a primary and a streaming
//     replica of it (Debian's PostgreSQL 15, test/helpers/replica.ts), the replica given to the APIs as
//     DATABASE_REPORTING_URL; a store's CSV export through each API reads it (X-Kassa-Replica-Lag) and
//     holds every payment of the store once the replica has caught up.
//
// The sandbox chain lives in an API process: the first API's is the chain (the workers read it at its
// BASE_URL, money is sent through it); the second API starts from the first's saved chain and serves
// the same books, its own chain unused. A real deployment reads toncenter instead.
//
//   node drills/several-containers.ts           short tier: 16 payments paced 2/s, 8 across the kill
//   node drills/several-containers.ts --long    long tier: 120 payments paced 2/s, 20 across the kill
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { api, drill, freePort, keepLogs, LONG, readerRunning, sleep, startKassa, waitFor, type Kassa } from './lib.ts';
import { openPool, sql, z } from '../src/db/pool.ts';
import { LEASE_MS } from '../src/reader/cursor.ts';
import { createTestStore } from '../test/helpers/factories.ts';
import { member } from '../test/helpers/dashboard.ts';
import { startPgBouncer, type PgBouncer } from '../test/helpers/pgbouncer.ts';
import { startReplicatedPostgres } from '../test/helpers/replica.ts';
import { startTcpProxy, type TcpProxy } from '../test/helpers/proxy.ts';

const STEADY = LONG ? 120 : 16; // payments created (alternately through each API) and paid at once
const EVERY_MS = 500; // one create every this long: each endpoint hears one event per 2 s (below)
const STORES = 4; // each with an endpoint for payment.pending and one for payment.completed
const ACROSS_KILL = LONG ? 20 : 8; // payments paid while the lease holder is dead
const P99_LIMIT_MS = 2_000;
// The lease (6 s) lapses at most 6 s after the holder's death; the others look every second; 1 s of
// slack for a step on a busy machine (docs/OPERATIONS.md, "The chain reader").
const TAKEOVER_LIMIT_MS = LEASE_MS + 2_000;
const FROZEN_MS = 9_000; // PgBouncer stopped this long (longer than the 7 s statement bound)…
const FROZEN_MAX_MS = 30_000; // …or until the workers booked and delivered a payment paid as it froze (a slow machine)
// Every answer while PgBouncer is frozen: the wait for a connection (5 s) or a statement's bound
// (DATABASE_STATEMENT_TIMEOUT_MS 5 s + 2 s), never one after the other; the rest is slack for a loaded machine.
const ANSWER_LIMIT_MS = 10_000;
const RECOVERY_LIMIT_MS = 10_000;
const PGBOUNCER_POOL_SIZE = 20; // default_pool_size, as in the compose file
/** DATABASE_STATEMENT_TIMEOUT_MS, and the timeout PgBouncer sets on its server connections (connect_query). */
const STATEMENT_TIMEOUT_MS = 5_000;

interface Delivery {
  type: string;
  eventID: string;
  paymentID: string | null;
  store: number;
  receivedAt: number;
}

interface Created {
  id: string;
  address: string;
  coinAmount: string;
  through: number; // which API (0 or 1) created it
  store: number;
}

await drill(
  `several containers behind PgBouncer (transaction mode): 2 APIs, 2 workers, ${STEADY} payments paced ${1000 / EVERY_MS}/s, a lease holder killed, PgBouncer frozen ${FROZEN_MS / 1000} s`,
  async (report) => {
    // The database: a primary and its streaming replica, migrated (the release step's `kassa migrate`).
    const pair = await startReplicatedPostgres();
    const db = { url: pair.primaryUrl, destroy: () => pair.stop() };
    let bouncer: PgBouncer | undefined;
    let relay: TcpProxy | undefined;
    const processes: Record<string, Kassa | undefined> = {};
    const pool = await openPool(db.url, { maxPoolSize: 5 });
    const deliveries: Delivery[] = [];
    const receiver = http.createServer((req, res) => {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        const receivedAt = Date.now();
        try {
          const body = JSON.parse(text);
          const store = Number(/^\/s(\d+)\//.exec(req.url ?? '')?.[1] ?? -1);
          deliveries.push({ type: body.type, eventID: body.eventID, paymentID: body.payload?.paymentID ?? null, store, receivedAt });
        } catch {
          deliveries.push({ type: 'unreadable', eventID: '', paymentID: null, store: -1, receivedAt });
        }
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    try {
      // Kassa sends nothing at connect through PgBouncer: the statement timeout in force there is set by
      // PgBouncer itself on each server connection (connect_query), as the compose file does.
      bouncer = await startPgBouncer(db.url, { poolSize: PGBOUNCER_POOL_SIZE, connectQuery: `SET statement_timeout = ${STATEMENT_TIMEOUT_MS}` });
      const probe = new pg.Client({ connectionString: bouncer.url });
      await probe.connect();
      const inForce = (await probe.query<{ t: string }>(`select current_setting('statement_timeout') as t`)).rows[0]!.t;
      await probe.end();
      report.check('the statement timeout in force through PgBouncer is DATABASE_STATEMENT_TIMEOUT_MS', inForce === `${STATEMENT_TIMEOUT_MS / 1000}s`, inForce);
      const direct = new URL(db.url);
      relay = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) }, { dropNotifications: true });

      // The release step (`kassa migrate`) is the template's migration here: every process starts with --skip-migrate.
      const apiEnv: Record<string, string> = {
        DATABASE_URL: bouncer.url,
        DATABASE_SESSION_URL: db.url,
        DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        DATABASE_REPORTING_URL: pair.replicaUrl,
      };
      const workerEnv = { ...apiEnv, DATABASE_SESSION_URL: relay.through(db.url) };
      const apiPort = await freePort();
      const apiUrl = `http://127.0.0.1:${apiPort}`;
      const startedAt = Date.now();
      // The first API first: it makes the sandbox chain the second one loads.
      processes.api1 = await startKassa({ databaseUrl: bouncer.url, part: 'api', port: apiPort, skipMigrate: true, env: apiEnv });
      const [api2, worker1, worker2] = await Promise.all([
        startKassa({ databaseUrl: bouncer.url, part: 'api', skipMigrate: true, env: apiEnv }),
        startKassa({ databaseUrl: bouncer.url, part: 'worker', baseUrl: apiUrl, skipMigrate: true, env: workerEnv }),
        startKassa({ databaseUrl: bouncer.url, part: 'worker', baseUrl: apiUrl, skipMigrate: true, env: workerEnv }),
      ]);
      Object.assign(processes, { api2, worker1, worker2 });
      const apis = [processes.api1.url, api2.url];
      const workers = [worker1, worker2];
      report.figure('four processes started in', `${Date.now() - startedAt} ms`);
      await readerRunning(pool);

      // Stores, each with two endpoints (through the APIs: through PgBouncer).
      const stores: Array<{ id: string; token: string }> = [];
      for (let s = 0; s < STORES; s += 1) {
        const store = await createTestStore(pool, { name: `Several containers ${s}`, methods: 'TON/TON' });
        stores.push({ id: store.id, token: store.token });
        for (const event of ['payment.pending', 'payment.completed']) {
          const made = await api(apis[s % 2]!, 'POST', '/v1/webhook-endpoints', {
            token: store.token,
            body: { url: `${hookBase}/s${s}/${event}`, events: [event] },
          });
          if (made.status !== 201) throw new Error(`endpoint create answered ${made.status}: ${made.text.slice(0, 200)}`);
        }
      }

      const createThrough = async (i: number, through: number, store: number, extra: { key?: string } = {}) => {
        const response = await api(apis[through]!, 'POST', '/v1/payments', {
          token: stores[store]!.token,
          body: { amount: '0.1', currency: 'TON', order_id: `several-${i}`, payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
          ...(extra.key ? { headers: { 'x-idempotency-key': extra.key } } : {}),
          timeoutMs: 15_000,
        });
        return response;
      };
      const pay = async (payment: Created): Promise<string> => {
        const sent = await api(apis[0]!, 'POST', '/sandbox/v1/transfers', { body: { to: payment.address, coin: 'TON', amount: payment.coinAmount } });
        if (sent.status !== 201) throw new Error(`sandbox transfer answered ${sent.status}: ${sent.text.slice(0, 200)}`);
        return sent.json.hash as string;
      };
      const sentHashes: string[] = [];
      const completed = (ids: string[]) =>
        pool.oneFirst(
          sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where id = any(${sql.array(ids, 'uuid')}) and status = 'completed'`,
        );
      const lease = () =>
        pool.maybeOne(sql.type(z.object({ reader: z.string().nullable(), live: z.boolean() }))`
          select reader, coalesce(lease_expires_at > now(), false) as live from chain_reader where network = 'sandbox'
        `);
      const holderOf = (reader: string | null) => workers.findIndex((worker) => reader?.split(':')[1] === String(worker.child.pid));

      // 1. Steady: payments created alternately through each API, paid at once; the lease watched meanwhile.
      const holders = new Set<string>();
      let leaseSamples = 0;
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          const row = await lease();
          if (row?.live && row.reader) holders.add(row.reader);
          leaseSamples += 1;
          await sleep(200);
        }
      })();
      const steady: Created[] = [];
      const failedCreates: string[] = [];
      const paying: Array<Promise<void>> = [];
      const steadyStart = Date.now();
      for (let i = 0; i < STEADY; i += 1) {
        const through = i % 2;
        const store = i % STORES;
        const created = await createThrough(i, through, store);
        if (created.status !== 201) failedCreates.push(`${created.status} ${created.text.slice(0, 120)}`);
        else {
          const payment = {
            id: created.json.id,
            address: created.json.paymentDetails.address,
            coinAmount: created.json.paymentDetails.coinAmount,
            through,
            store,
          };
          steady.push(payment);
          paying.push(pay(payment).then((hash) => void sentHashes.push(hash)));
        }
        await sleep(Math.max(0, steadyStart + (i + 1) * EVERY_MS - Date.now()));
      }
      await Promise.all(paying);
      await waitFor('the steady payments to complete', async () => (await completed(steady.map((p) => p.id))) === steady.length, 30_000, 100).catch(() => {});
      // Read through the other API than the one that created it.
      const reads = await Promise.all(steady.map((p) => api(apis[1 - p.through]!, 'GET', `/v1/payments/${p.id}`, { token: stores[p.store]!.token })));
      const notCompleted = reads.filter((read) => read.json?.status !== 'completed');
      report.check(
        'payments created through both APIs complete, read through the other API',
        failedCreates.length === 0 && steady.length === STEADY && notCompleted.length === 0,
        `${steady.length - notCompleted.length}/${STEADY} completed (${steady.filter((p) => p.through === 0).length} through each API)${failedCreates.length ? `; create failed: ${failedCreates[0]}` : ''}${notCompleted.length ? `; e.g. ${notCompleted[0]!.json?.status}` : ''}`,
      );
      const steadyEvents = steady.length * 2;
      await waitFor(
        'the steady webhooks',
        async () => deliveries.filter((d) => steady.some((p) => p.id === d.paymentID)).length >= steadyEvents,
        15_000,
        100,
      ).catch(() => {});
      watching = false;
      await watcher;

      // 2. Webhook latency: from the event's delivery row (written in the transaction of the change:
      //    the API's create through PgBouncer, the reader's booking) to the receiver.
      const latencies = async (of: Delivery[]) => {
        const rows = await pool.any(sql.type(z.object({ event_id: z.string(), created_at: z.date() }))`
          select event_id::text as event_id, created_at from webhook_deliveries where event_id = any(${sql.array(
            of.map((d) => d.eventID),
            'uuid',
          )})
        `);
        const createdAt = new Map(rows.map((row) => [row.event_id, row.created_at.getTime()]));
        return of.map((d) => d.receivedAt - (createdAt.get(d.eventID) ?? Number.NaN)).sort((a, b) => a - b);
      };
      const steadyDeliveries = deliveries.filter((d) => steady.some((p) => p.id === d.paymentID));
      const steadyMs = await latencies(steadyDeliveries);
      const p99 = steadyMs[Math.max(0, Math.ceil(steadyMs.length * 0.99) - 1)] ?? Number.NaN;
      const p50 = steadyMs[Math.max(0, Math.ceil(steadyMs.length * 0.5) - 1)] ?? Number.NaN;
      const unique = new Set(steadyDeliveries.map((d) => `${d.eventID}:${d.store}`));
      report.check(
        `webhooks delivered with p99 under ${P99_LIMIT_MS / 1000} s without NOTIFY (Graphile's polling)`,
        steadyDeliveries.length === steadyEvents && unique.size === steadyEvents && p99 < P99_LIMIT_MS && relay.notificationsDropped() > 0,
        `${steadyDeliveries.length}/${steadyEvents} delivered (payment.pending from the APIs, payment.completed from the workers); p50 ${p50} ms, p99 ${p99} ms, max ${steadyMs.at(-1)} ms; ${relay.notificationsDropped()} notifications kept from the workers`,
      );
      report.figure('webhook delivery p50 / p99 / max (no NOTIFY)', `${p50} / ${p99} / ${steadyMs.at(-1)} ms over ${steadyMs.length} deliveries`);
      for (const type of ['payment.pending', 'payment.completed']) {
        const ms = await latencies(steadyDeliveries.filter((d) => d.type === type));
        const at = (q: number) => ms[Math.max(0, Math.ceil(ms.length * q) - 1)];
        report.figure(
          `  ${type} (${type === 'payment.pending' ? "the API's create" : "the reader's booking"} → received)`,
          `p50 ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${ms.at(-1)} ms over ${ms.length}`,
        );
      }

      // 3. The lease: one holder throughout; killed, the other takes over; every transfer booked once.
      const holderRow = await lease();
      const holder = holderOf(holderRow?.reader ?? null);
      report.check(
        'exactly one worker holds the chain reader lease',
        holders.size === 1 && holder !== -1 && holderRow?.live === true,
        `${holders.size} holder(s) over ${leaseSamples} looks: ${[...holders].join(', ')} (worker ${holder + 1} of 2)`,
      );
      const across: Created[] = [];
      for (let i = 0; i < ACROSS_KILL; i += 1) {
        const created = await createThrough(STEADY + i, i % 2, i % STORES);
        if (created.status !== 201) throw new Error(`create answered ${created.status}: ${created.text.slice(0, 200)}`);
        across.push({
          id: created.json.id,
          address: created.json.paymentDetails.address,
          coinAmount: created.json.paymentDetails.coinAmount,
          through: i % 2,
          store: i % STORES,
        });
      }
      // A quiet moment (no job of the holder's in flight, which would wait for worker__unlock_dead), then the kill.
      await waitFor('the pending webhooks', async () => across.every((p) => deliveries.some((d) => d.paymentID === p.id)), 15_000, 100).catch(() => {});
      const killed = workers[Math.max(holder, 0)]!;
      await killed.stop('SIGKILL');
      const killedAt = Date.now();
      let takenOverAt: number | null = null;
      let newHolder = -1;
      const takeover = waitFor(
        'another worker to take the lease',
        async () => {
          const row = await lease();
          if (row?.live && row.reader && row.reader !== holderRow?.reader) {
            takenOverAt = Date.now();
            newHolder = holderOf(row.reader);
            return true;
          }
          return false;
        },
        30_000,
        50,
      ).catch(() => {});
      // Money arrives while no reader holds the cursor.
      for (const payment of across) {
        sentHashes.push(await pay(payment));
        await sleep(300);
      }
      await takeover;
      // Settled: the reader's cursor past the block the last transfer is in (then "not on the books" is missed, not late).
      const tip = Number((await api(`${apis[0]!}/sandbox/toncenter/api/v3`, 'GET', '/masterchainInfo')).json?.last?.seqno);
      const cursorAt = () =>
        pool.oneFirst(sql.type(z.object({ seqno: z.number() }))`select last_block_seqno::float8 as seqno from chain_reader where network = 'sandbox'`);
      await waitFor('the reader to pass the last transfer', async () => (await cursorAt()) >= tip, 90_000, 200).catch(() => {});
      const takeoverMs = takenOverAt === null ? null : takenOverAt - killedAt;
      report.check(
        `another worker takes the lease over within ${TAKEOVER_LIMIT_MS / 1000} s of a SIGKILL`,
        takeoverMs !== null && takeoverMs <= TAKEOVER_LIMIT_MS && newHolder !== -1 && newHolder !== holder,
        takeoverMs === null ? 'no takeover in 30 s' : `worker ${newHolder + 1} took it ${takeoverMs} ms after worker ${holder + 1} was killed`,
      );
      report.figure('lease takeover after SIGKILL', takeoverMs === null ? 'none' : `${takeoverMs} ms (lease ${LEASE_MS} ms)`);
      await waitFor(
        'the payments paid across the kill to complete',
        async () => (await completed(across.map((p) => p.id))) === across.length,
        30_000,
        100,
      ).catch(() => {});
      const perHash = await pool.any(sql.type(z.object({ hash: z.string(), n: z.number() }))`
        select hash, count(*)::int as n from transfers where hash = any(${sql.array(sentHashes, 'text')}) group by hash
      `);
      const booked = new Map(perHash.map((row) => [row.hash, row.n]));
      const missed = sentHashes.filter((hash) => !booked.has(hash)).length;
      const twice = perHash.filter((row) => row.n > 1).length;
      const completing = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        select count(*)::int as n from transfers where payment_id = any(${sql.array(
          [...steady, ...across].map((p) => p.id),
          'uuid',
        )}) and effect = 'completed'
      `);
      const acrossDone = await completed(across.map((p) => p.id));
      report.check(
        'no transfer booked twice or missed (rows counted by hash), each payment completed once',
        missed === 0 && twice === 0 && completing === steady.length + across.length && acrossDone === across.length,
        `${sentHashes.length} sent, ${perHash.length} on the books, ${missed} missed (cursor ${await cursorAt()}, tip after the last ${tip}), ${twice} twice; ${completing} completing rows for ${steady.length + across.length} payments; ${acrossDone}/${across.length} paid across the kill completed`,
      );

      // 4. PgBouncer frozen: the APIs answer 503 in bounded time; the workers (direct) go on.
      const beforeFreeze = await createThrough(STEADY + ACROSS_KILL, 1, 0);
      if (beforeFreeze.status !== 201) throw new Error(`create answered ${beforeFreeze.status}: ${beforeFreeze.text.slice(0, 200)}`);
      const workerSide: Created = {
        id: beforeFreeze.json.id,
        address: beforeFreeze.json.paymentDetails.address,
        coinAmount: beforeFreeze.json.paymentDetails.coinAmount,
        through: 1,
        store: 0,
      };
      await waitFor('its pending webhook', async () => deliveries.some((d) => d.paymentID === workerSide.id), 10_000, 100).catch(() => {});
      bouncer.freeze();
      const frozenAt = Date.now();
      sentHashes.push(await pay(workerSide));
      const keys: string[] = [];
      const asked: Array<Promise<{ what: string; status: number; code?: string; retryAfter: string | null; ms: number; error?: string }>> = [];
      const ask = (what: string, base: string, method: string, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string> }) => {
        const started = Date.now();
        asked.push(
          api(base, method, path, { ...options, timeoutMs: 15_000 }).then(
            (r) => ({ what, status: r.status, code: r.json?.error?.code, retryAfter: r.headers.get('retry-after'), ms: Date.now() - started }),
            (error: unknown) => ({ what, status: 0, retryAfter: null, ms: Date.now() - started, error: String(error) }),
          ),
        );
      };
      for (const round of [0, 1]) {
        for (const [n, base] of apis.entries()) {
          const key = crypto.randomUUID();
          keys.push(key);
          ask(`create ${n + 1}`, base, 'POST', '/v1/payments', {
            token: stores[1]!.token,
            headers: { 'x-idempotency-key': key },
            body: { amount: '0.1', currency: 'TON', order_id: `frozen-${key}`, payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
          });
          ask(`read ${n + 1}`, base, 'GET', `/v1/payments/${steady[n]!.id}`, { token: stores[steady[n]!.store]!.token });
          ask(`healthz ${n + 1}`, base, 'GET', '/healthz', {});
        }
        if (round === 0) await sleep(2_500);
      }
      const answers = await Promise.all(asked);
      // The worker side, meanwhile: the payment paid during the freeze completes and its webhook goes out.
      const workerWent = await waitFor(
        'the payment paid during the freeze to complete and its webhook',
        async () => (await completed([workerSide.id])) === 1 && deliveries.some((d) => d.paymentID === workerSide.id && d.type === 'payment.completed'),
        Math.max(1_000, frozenAt + FROZEN_MAX_MS - Date.now()),
        100,
      ).then(
        () => true,
        () => false,
      );
      const bookedAt = await pool.maybeOneFirst(sql.type(z.object({ at: z.date() }))`
        select recorded_at as at from transfers where payment_id = ${workerSide.id} order by recorded_at limit 1
      `);
      const hookAt = deliveries.find((d) => d.paymentID === workerSide.id && d.type === 'payment.completed')?.receivedAt;
      const stillFrozen = `booked ${bookedAt ? bookedAt.getTime() - frozenAt : '?'} ms, its webhook received ${hookAt ? hookAt - frozenAt : '?'} ms into the freeze (${Math.round((Date.now() - frozenAt) / 100) / 10} s)`;
      await sleep(Math.max(0, frozenAt + FROZEN_MS - Date.now()));
      bouncer.thaw();
      const thawedAt = Date.now();
      const bad = answers.filter((a) => !(a.status === 503 && a.code === 'service_unavailable' && a.retryAfter && a.ms <= ANSWER_LIMIT_MS));
      report.check(
        `PgBouncer frozen (SIGSTOP): every API answer is 503 service_unavailable within ${ANSWER_LIMIT_MS / 1000} s, no hang`,
        answers.length > 0 && bad.length === 0,
        bad.length === 0
          ? `${answers.length} requests (creates, reads, /healthz through both APIs), slowest ${Math.max(...answers.map((a) => a.ms))} ms`
          : `${bad.length} of ${answers.length} not: e.g. ${bad[0]!.what} ${bad[0]!.status} ${bad[0]!.code ?? bad[0]!.error ?? ''} in ${bad[0]!.ms} ms`,
      );
      report.figure('answers while PgBouncer was frozen (ms)', answers.map((a) => `${a.what} ${a.status} ${a.ms}`).join(', '));
      report.check('the workers, on the session URL, go on while PgBouncer is frozen', workerWent, `a payment paid as PgBouncer froze: ${stillFrozen}`);

      // 5. Recovery after SIGCONT: both APIs create again; the creates refused meanwhile succeed with their keys, once.
      let recoveredAt: number | null = null;
      await waitFor(
        'both APIs to create again',
        async () => {
          const tries = await Promise.all(apis.map((_, n) => createThrough(900 + n, n, 2)));
          return tries.every((t) => t.status === 201);
        },
        RECOVERY_LIMIT_MS * 3,
        250,
      ).then(
        () => (recoveredAt = Date.now()),
        () => {},
      );
      const retried = await Promise.all(
        keys.map((key, n) =>
          api(apis[n % 2]!, 'POST', '/v1/payments', {
            token: stores[1]!.token,
            headers: { 'x-idempotency-key': key },
            body: { amount: '0.1', currency: 'TON', order_id: `frozen-${key}`, payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
          }),
        ),
      );
      const perKey = await pool.any(sql.type(z.object({ order_id: z.string(), n: z.number() }))`
        select order_id, count(*)::int as n from payments where order_id = any(${sql.array(
          keys.map((key) => `frozen-${key}`),
          'text',
        )}) group by order_id
      `);
      const recoveryMs = recoveredAt === null ? null : recoveredAt - thawedAt;
      report.check(
        `after SIGCONT both APIs serve again within ${RECOVERY_LIMIT_MS / 1000} s, without a restart; refused creates retried with their key made once`,
        recoveryMs !== null &&
          recoveryMs <= RECOVERY_LIMIT_MS &&
          retried.every((r) => r.status === 201) &&
          perKey.length === keys.length &&
          perKey.every((row) => row.n === 1),
        `${recoveryMs === null ? 'not recovered' : `${recoveryMs} ms`}; retries ${retried.map((r) => r.status).join(',')}; ${perKey.length}/${keys.length} keys with one payment each`,
      );

      // 6. Reports on the replica: a store's CSV export, through each API, read there and complete once caught up.
      await pair.caughtUp();
      const owner0 = await member(apis[0]!, pool, stores[0]!.id, 'owner@several.example', 'owner');
      const owner1 = await member(apis[1]!, pool, stores[0]!.id, 'owner@several.example', 'owner');
      const inPrimary = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where store_id = ${stores[0]!.id}`);
      const exports = await Promise.all([owner0, owner1].map((owner) => owner.get(`/dashboard/stores/${stores[0]!.id}/payments.csv`)));
      const rowsOf = (text: string) => text.trimEnd().split('\r\n').length - 1;
      report.check(
        'the reports read the streaming replica (DATABASE_REPORTING_URL) through both APIs, every payment there once caught up',
        exports.every((csv) => csv.status === 200 && csv.headers.get('x-kassa-replica-lag') !== null && rowsOf(csv.text) === inPrimary),
        exports.map((csv, i) => `API ${i + 1}: ${csv.status}, lag header ${csv.headers.get('x-kassa-replica-lag')}, ${rowsOf(csv.text)} rows`).join('; ') +
          `; ${inPrimary} payments in the primary`,
      );

      // 7. The logs: no prepared-statement error anywhere (PgBouncer 1.18 does not track them).
      const logs = [...Object.entries(processes).map(([name, kassa]) => [name, kassa?.output() ?? ''] as const), ['pgbouncer', bouncer.log()] as const];
      const prepared = logs.filter(([, text]) => /prepared statement/i.test(text)).map(([name]) => name);
      report.check(
        'no "prepared statement does not exist" in any log (4 processes and PgBouncer)',
        prepared.length === 0,
        prepared.length
          ? `in ${prepared.join(', ')}: ${/.*prepared statement.*/i.exec(logs.find(([name]) => name === prepared[0])![1])?.[0]?.slice(0, 200)}`
          : `${logs.length} logs read`,
      );
    } finally {
      keepLogs(processes);
      await Promise.all(Object.values(processes).map((kassa) => kassa?.stop()));
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
      await relay?.close();
      await bouncer?.stop();
      await pool.end();
      await db.destroy();
    }
  },
);
