// Drill 4 — database restart under steady load: an API and a worker process serve a steady stream
// of creates (each with an idempotency key) and reads; PostgreSQL is stopped for a few seconds and
// started again. While it is down the API answers 503 api_error/service_unavailable with
// Retry-After (never a 500, never a hang); afterwards it recovers without a restart of Kassa, the
// worker works again, no acknowledged payment is missing, and the creates that failed succeed when
// retried with their key — exactly one payment per key.
//
//   node drills/db-restart.ts           short tier: 20 creates/s + 20 reads/s, a 4 s outage
//   node drills/db-restart.ts --long    long tier: 50 creates/s + 50 reads/s, a 15 s outage
import { api, drill, drillDatabase, drillStore, keepLogs, LONG, sleep, startApart, waitFor } from './lib.ts';
import { sql, z } from '../src/db/pool.ts';

const RATE = LONG ? 50 : 20; // creates per second (and as many reads)
const BEFORE_MS = LONG ? 10_000 : 3_000; // steady load before the outage
const OUTAGE_MS = LONG ? 15_000 : 4_000; // PostgreSQL down
const AFTER_MS = LONG ? 10_000 : 4_000; // steady load once creates succeed again
const CLIENT_TIMEOUT_MS = 15_000; // a request unanswered this long counts as a hang
// No answer may take longer than this, outage or not: Kassa's pool gives up on a connection after
// 5 s (src/db/pool.ts); the rest is slack for a loaded machine.
const SLOW_MS = 10_000;
const RECOVERY_LIMIT_MS = 10_000; // creates succeed again within this long after PostgreSQL is back
// A payment paid after the restart completes within this long (the chain reader goes on from its
// cursor once the database is back; the long tier leaves ~1,800 pending USDT payments behind).
const WORKER_WAIT_MS = LONG ? 60_000 : 30_000;

interface Sample {
  kind: 'create' | 'read' | 'health';
  key?: string;
  startedAt: number;
  ms: number;
  status: number; // 0: no answer (connection error or client timeout)
  code?: string;
  type?: string;
  retryAfter?: string | null;
  id?: string;
  error?: string;
}

const createBody = (key: string) => ({
  amount: '10',
  currency: 'USD',
  order_id: `db-restart-${key}`,
  payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] },
});

async function timed(
  kind: Sample['kind'],
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; key?: string },
): Promise<Sample> {
  const startedAt = Date.now();
  try {
    const { status, json, headers } = await api(base, method, path, {
      ...(options.token ? { token: options.token } : {}),
      ...(options.body !== undefined ? { body: options.body } : {}),
      headers: options.key ? { 'x-idempotency-key': options.key } : {},
      timeoutMs: CLIENT_TIMEOUT_MS,
    });
    return {
      kind,
      key: options.key,
      startedAt,
      ms: Date.now() - startedAt,
      status,
      code: json?.error?.code,
      type: json?.error?.type,
      retryAfter: headers.get('retry-after'),
      id: status === 201 ? json?.id : undefined,
    };
  } catch (error) {
    return {
      kind,
      key: options.key,
      startedAt,
      ms: Date.now() - startedAt,
      status: 0,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    };
  }
}

/** The last error a process logged (message and err.message), for the table. */
function lastError(output: string): string {
  const lines = output.trimEnd().split('\n').reverse();
  for (const line of lines) {
    try {
      const entry = JSON.parse(line);
      if (entry.level >= 50) return `${entry.msg}${entry.err?.message ? `: ${entry.err.message}` : ''}`.slice(0, 200);
    } catch {
      if (line.trim()) return line.slice(0, 200);
    }
  }
  return 'nothing logged';
}

const isServiceUnavailable = (s: Sample) => s.status === 503 && s.type === 'api_error' && s.code === 'service_unavailable' && !!s.retryAfter;

await drill(`database restart under steady load: ${RATE} creates/s + ${RATE} reads/s, PostgreSQL down ${OUTAGE_MS / 1000} s`, async (report) => {
  // Its own server: the drill stops and starts PostgreSQL.
  const db = await drillDatabase({ private: true });
  const started = await startApart(db.url).catch(async (error: unknown) => {
    await db.destroy();
    throw error;
  });
  const { api: apiProcess, worker } = started;
  const { token, storeId, pool } = await drillStore(db.url);
  const samples: Sample[] = [];
  const inflight = new Set<Promise<void>>();
  const acknowledged: string[] = [];
  let running = true;
  const track = (promise: Promise<Sample>) => {
    const done = promise.then((sample) => {
      samples.push(sample);
      if (sample.kind === 'create' && sample.status === 201 && sample.id) acknowledged.push(sample.id);
    });
    inflight.add(done);
    void done.finally(() => inflight.delete(done));
  };
  // Open loop: requests go out on schedule whether or not earlier ones were answered.
  const load = (async () => {
    const every = 1000 / RATE;
    let next = Date.now();
    while (running) {
      const key = crypto.randomUUID();
      track(timed('create', apiProcess.url, 'POST', '/v1/payments', { token, key, body: createBody(key) }));
      // Reads: a payment acknowledged earlier (once there is one).
      if (acknowledged.length > 0)
        track(timed('read', apiProcess.url, 'GET', `/v1/payments/${acknowledged[Math.floor(Math.random() * acknowledged.length)]!}`, { token }));
      next += every;
      await sleep(Math.max(0, next - Date.now()));
    }
  })();
  const health = (async () => {
    while (running) {
      track(timed('health', apiProcess.url, 'GET', '/healthz', {}));
      await sleep(250);
    }
  })();

  try {
    await sleep(BEFORE_MS);
    const stopAt = Date.now();
    await db.stop();
    const stoppedAt = Date.now();
    await sleep(OUTAGE_MS);
    const startAt = Date.now();
    await db.start();
    const startedAt = Date.now();
    // Recovery: the first create sent after PostgreSQL was back that succeeded.
    let recoveredAt: number | null = null;
    await waitFor(
      'a create to succeed after the restart',
      async () => {
        const ok = samples
          .filter((s) => s.kind === 'create' && s.status === 201 && s.startedAt >= startedAt)
          .sort((a, b) => a.startedAt + a.ms - (b.startedAt + b.ms))[0];
        if (ok) recoveredAt = ok.startedAt + ok.ms;
        return ok !== undefined;
      },
      RECOVERY_LIMIT_MS * 3,
    ).catch(() => {});
    await sleep(AFTER_MS);
    running = false;
    await Promise.all([load, health]);
    while (inflight.size > 0) await Promise.all([...inflight]);

    const creates = samples.filter((s) => s.kind === 'create');
    const statuses = (list: Sample[]) => {
      const counts: Record<string, number> = {};
      for (const s of list) {
        const key = s.status === 0 ? 'no answer' : String(s.status);
        counts[key] = (counts[key] ?? 0) + 1;
      }
      return JSON.stringify(counts);
    };
    report.figure(
      'requests sent (creates, reads, health)',
      `${creates.length}, ${samples.filter((s) => s.kind === 'read').length}, ${samples.filter((s) => s.kind === 'health').length}`,
    );
    report.figure('creates by status', statuses(creates));
    report.figure('reads by status', statuses(samples.filter((s) => s.kind === 'read')));
    report.figure('PostgreSQL stop took', `${stoppedAt - stopAt} ms`);
    report.figure('PostgreSQL start took', `${startedAt - startAt} ms`);

    const unanswered = samples.filter((s) => s.status === 0);
    report.check(
      'every request was answered (no hang, no dropped connection)',
      unanswered.length === 0,
      unanswered.length === 0 ? `${samples.length} requests` : `${unanswered.length} unanswered, e.g. ${unanswered[0]!.error}`,
    );
    const wrong = samples.filter((s) => s.status !== 0 && !(s.status === 200 || s.status === 201 || isServiceUnavailable(s)));
    report.check(
      'every answer is a success or 503 service_unavailable (never a 500)',
      wrong.length === 0,
      wrong.length === 0 ? `${samples.filter(isServiceUnavailable).length} × 503` : `${wrong.length} others, e.g. ${wrong[0]!.status} ${wrong[0]!.code ?? ''}`,
    );
    const down = samples.filter((s) => s.startedAt >= stoppedAt && s.startedAt + s.ms <= startAt);
    const downOk = down.filter(isServiceUnavailable);
    report.check(
      'while PostgreSQL was down every request got 503 api_error with Retry-After',
      down.length > 0 && downOk.length === down.length,
      `${downOk.length}/${down.length} requests sent and answered during the outage; Retry-After ${[...new Set(downOk.map((s) => s.retryAfter))].join(', ')}`,
    );
    const slowest = samples.reduce((max, s) => Math.max(max, s.ms), 0);
    report.check(`no answer took longer than ${SLOW_MS / 1000} s`, slowest <= SLOW_MS, `slowest ${slowest} ms`);
    const outageSlowest = samples.filter((s) => s.startedAt >= stopAt && s.startedAt <= startedAt).reduce((max, s) => Math.max(max, s.ms), 0);
    report.figure('slowest answer during the outage', `${outageSlowest} ms`);

    const recovery = recoveredAt === null ? null : recoveredAt - startedAt;
    report.check(
      `creates succeed again within ${RECOVERY_LIMIT_MS / 1000} s of PostgreSQL being back`,
      recovery !== null && recovery <= RECOVERY_LIMIT_MS,
      recovery === null ? 'no create succeeded' : `first success ${recovery} ms after the restart`,
    );
    if (recovery !== null) report.figure('recovery time (PostgreSQL up → first 201)', `${recovery} ms`);
    const lateFailures = creates.filter((s) => s.status !== 201 && recoveredAt !== null && s.startedAt > recoveredAt + 1000);
    report.check('every create after recovery succeeded', lateFailures.length === 0, `${lateFailures.length} failed more than 1 s after the first success`);
    const alive = apiProcess.child.exitCode === null && worker.child.exitCode === null;
    const exits = [['api', apiProcess] as const, ['worker', worker] as const]
      .filter(([, k]) => k.child.exitCode !== null)
      .map(([name, k]) => `${name} exited ${k.child.exitCode}: ${lastError(k.output())}`);
    report.check(
      'Kassa was not restarted (both processes still running)',
      alive,
      alive ? `api pid ${apiProcess.child.pid}, worker pid ${worker.child.pid}` : exits.join('; '),
    );

    // The drill's own pool went through the outage too; make sure it answers before the checks.
    await waitFor(
      'the drill pool to reconnect',
      async () =>
        pool.oneFirst(sql.unsafe`select 1`).then(
          () => true,
          () => false,
        ),
      20_000,
      200,
    );
    const found = new Set(
      await pool.anyFirst(sql.type(z.object({ id: z.string() }))`select id from payments where id = any(${sql.array(acknowledged, 'uuid')})`),
    );
    const missing = acknowledged.filter((id) => !found.has(id));
    report.check(
      'no acknowledged payment is missing (every 201 id is in the database)',
      missing.length === 0,
      `${acknowledged.length - missing.length}/${acknowledged.length} found`,
    );

    // Retry every create that did not get its 201, with its key and the same body.
    const failed = creates.filter((s) => s.status !== 201);
    const retries = await Promise.all(
      failed.map((s) => timed('create', apiProcess.url, 'POST', '/v1/payments', { token, key: s.key!, body: createBody(s.key!) })),
    );
    const retriedOk = retries.filter((s) => s.status === 201);
    report.check(
      'every failed create succeeds when retried with its idempotency key',
      retriedOk.length === failed.length,
      `${retriedOk.length}/${failed.length} → 201 (${retries.length - retriedOk.length} not${retries.length > retriedOk.length ? `: ${JSON.stringify(Object.fromEntries([...new Set(retries.filter((s) => s.status !== 201).map((s) => `${s.status} ${s.code ?? ''}`.trim()))].map((k) => [k, retries.filter((s) => `${s.status} ${s.code ?? ''}`.trim() === k).length])))}` : ''})`,
    );
    const perKey = await pool.any(sql.type(z.object({ order_id: z.string(), n: z.number() }))`
      select order_id, count(*)::int as n from payments where store_id = ${storeId} group by order_id
    `);
    const keys = new Set(creates.map((s) => `db-restart-${s.key}`));
    const counts = new Map(perKey.map((row) => [row.order_id, row.n]));
    const notOne = [...keys].filter((key) => counts.get(key) !== 1);
    const strays = perKey.filter((row) => !keys.has(row.order_id)).length;
    report.check(
      'exactly one payment per idempotency key',
      notOne.length === 0 && strays === 0,
      `${keys.size} keys, ${perKey.length} payments, ${notOne.length} keys without exactly one, ${strays} strays`,
    );
    const ackAgain = retries.filter((s) => s.status === 201 && s.id && found.has(s.id)).length;
    report.figure('retried creates that had committed before their 503', ackAgain);

    // The worker came through too: a payment paid after the restart completes.
    const paid = await api(apiProcess.url, 'POST', '/v1/payments', {
      token,
      body: { amount: '0.5', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    const transfer = await api(apiProcess.url, 'POST', '/sandbox/v1/transfers', { body: { to: paid.json.paymentDetails.address, coin: 'TON', amount: '0.5' } });
    const paidAt = Date.now();
    let completed = false;
    await waitFor(
      'the worker to complete a payment paid after the restart',
      async () => {
        completed = (await api(apiProcess.url, 'GET', `/v1/payments/${paid.json.id}/status`, { token })).json?.status === 'completed';
        return completed;
      },
      WORKER_WAIT_MS,
      250,
    ).catch(() => {});
    report.check(
      'the worker recovered: a payment paid after the restart completes',
      transfer.status === 201 && completed,
      completed ? `completed ${Date.now() - paidAt} ms after the transfer` : `not completed in ${WORKER_WAIT_MS / 1000} s`,
    );
    const restarts = (worker.output().match(/"msg":"kassa started"/g) ?? []).length + (apiProcess.output().match(/"msg":"kassa started"/g) ?? []).length;
    report.figure('"kassa started" lines (api + worker)', restarts);
  } finally {
    running = false;
    keepLogs({ api: apiProcess, worker });
    await pool.end().catch(() => {});
    await worker.stop();
    await apiProcess.stop();
    await db.destroy();
  }
});
