// A database that stops answering (a stopped process, a hung disk, a silent partition) must not
// hang the API: the app runs on a pool that reaches PostgreSQL through a TCP proxy, which is frozen
// — it accepts and holds everything, as a SIGSTOPped server's kernel does — during a burst of
// creates (with idempotency keys), reads, health checks and sandbox transfers paying open payments.
// Every request answers (201 or 503 service_unavailable with Retry-After) within one bound — the
// pool's wait for a connection or its bound on a statement, never one after the other — /healthz
// answers 503; after the thaw the 503s are retried with their keys and nothing is lost or doubled,
// and the transfers sent meanwhile complete their payments. The store's rate limit is on, with the
// shared counters' own pool (as `kassa start` makes it) behind the same frozen proxy, and low enough
// that the burst reaches the half of its window where requests wait for the shared counters.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openPool, sql, z } from '../../src/db/pool.ts';
import { rateLimitsDecidedAlone } from '../../src/metrics.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/proxy.ts';

/** Far above every bound of the service (statement 1 s + 2 s margin, a connection 5 s): a request that takes this long hangs. */
const HANG_MS = 20_000;
/** /healthz gives the database 1.5 s; a load balancer's check allows it 2 s, scheduling slack on a loaded machine included here. */
const HEALTH_MS = 4_000;
/**
 * One bound: the longer of the pool's wait for a connection (5 s) and its bound on a statement here
 * (1 s + 2 s), with 2 s of scheduling slack for a loaded machine. Two bounds one after the other (a
 * statement's, then the token check's wait for a connection on the error path) take 8 s or more.
 */
const ONE_BOUND_MS = 7_000;

describe('a frozen database', () => {
  let proxy: TcpProxy;
  let app: ChainTestApp;
  let token: string;
  let storeId: string;
  /** Statements sent to the rate limits' shared counters while the database was frozen. */
  let limiterStatementsWhileFrozen = 0;
  let frozen = false;
  before(async () => {
    const admin = new URL(process.env.KASSA_TEST_ADMIN_URL!);
    proxy = await startTcpProxy({ host: admin.hostname, port: Number(admin.port || 5432) });
    app = await startChainApp(
      // 16 requests per 2-second window: the burst below passes the half where a request waits for the shared counters.
      { RATE_LIMIT_PER_STORE: '8' },
      {
        openPool: (url) => openPool(proxy.through(url), { maxPoolSize: 6, statementTimeoutMs: 1_000 }),
        rateLimitStore: (url) => {
          // As src/server.ts makes it.
          const store = new pg.Pool({
            connectionString: proxy.through(url),
            max: 4,
            connectionTimeoutMillis: 2_000,
            statement_timeout: 1_000,
            query_timeout: 2_000,
          });
          store.on('error', () => {});
          const query = store.query.bind(store) as (...args: unknown[]) => unknown;
          (store as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
            if (frozen) limiterStatementsWhileFrozen += 1;
            return query(...args);
          };
          return store;
        },
      },
    );
    const store = await app.store();
    token = store.token;
    storeId = store.id;
  });
  after(async () => {
    proxy.thaw();
    await app.close();
    await proxy.close();
  });

  const call = async (method: string, path: string, options: { body?: unknown; key?: string; ms?: number } = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.key) headers['x-idempotency-key'] = options.key;
    const started = performance.now();
    const response = await fetch(`${app.url}${path}`, {
      method,
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.ms ?? HANG_MS),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    return { status: response.status, retryAfter: response.headers.get('retry-after'), json: text ? JSON.parse(text) : undefined, text, ms };
  };
  const assertUnavailable = (answer: Awaited<ReturnType<typeof call>>, what: string) => {
    assert.equal(answer.status, 503, `${what}: ${answer.text}`);
    assert.ok(answer.ms <= ONE_BOUND_MS, `${what} answered after ${Math.round(answer.ms)} ms, more than one bound (${ONE_BOUND_MS} ms)`);
    assert.equal(answer.json.error.code, 'service_unavailable', what);
    assert.ok(Number(answer.retryAfter) > 0, `${what}: Retry-After ${answer.retryAfter}`);
  };

  it('answers every request while frozen (503 with Retry-After), loses and doubles nothing, and completes everything after the thaw', async () => {
    // Open payments to pay while the database is frozen.
    const open = [];
    for (let i = 0; i < 3; i += 1) {
      const created = await call('POST', '/v1/payments', {
        body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
      });
      assert.equal(created.status, 201, created.text);
      open.push(created.json);
    }
    assert.equal((await call('GET', '/healthz')).status, 200);

    proxy.freeze();
    const decidedAlone = async () => (await rateLimitsDecidedAlone.get()).values[0]?.value ?? 0;
    const aloneBefore = await decidedAlone();
    frozen = true;
    const keys = Array.from({ length: 12 }, () => crypto.randomUUID());
    const body = (index: number) => ({ amount: '2.5', currency: 'TON', order_id: `frozen-${index}` });
    const [creates, reads, health, sent] = await Promise.all([
      Promise.all(keys.map((key, index) => call('POST', '/v1/payments', { body: body(index), key }))),
      Promise.all(open.map((payment) => call('GET', `/v1/payments/${payment.id}`))),
      call('GET', '/healthz', { ms: HEALTH_MS }),
      // The customer pays on the chain meanwhile (the sandbox chain lives in the API process, not in PostgreSQL).
      Promise.all(open.map((payment) => app.pay(payment.paymentDetails.address, 'TON', '1'))),
    ]);
    // The health check is asked while everything else waits: it answers first, within its bound.
    assertUnavailable(health, 'GET /healthz');
    for (const [index, answer] of creates.entries()) {
      if (answer.status !== 201) assertUnavailable(answer, `create ${index}`);
      assert.ok(answer.ms <= ONE_BOUND_MS, `create ${index} answered after ${Math.round(answer.ms)} ms`);
    }
    for (const answer of reads) assertUnavailable(answer, 'GET /v1/payments/{id}');
    const unanswered = creates.filter((answer) => answer.status === 503).length;
    assert.ok(unanswered > 0, 'the creates met the frozen database');
    // Still frozen: a second round answers as promptly (connections given up on are not reused).
    assertUnavailable(await call('GET', `/v1/payments/${open[0].id}`), 'GET /v1/payments/{id} again');
    assertUnavailable(await call('GET', '/healthz', { ms: HEALTH_MS }), 'GET /healthz again');

    assert.ok(limiterStatementsWhileFrozen > 0, 'the shared counters met the frozen database');
    assert.ok((await decidedAlone()) > aloneBefore, 'the process decided alone, and counted it (kassa_rate_limits_decided_alone_total)');
    frozen = false;
    proxy.thaw();
    // Each create is retried with its key until it answers 201 (replayed or made now).
    const ids = new Map<string, string>();
    for (const [index, key] of keys.entries()) {
      for (let attempt = 0; ; attempt += 1) {
        const answer = await call('POST', '/v1/payments', { body: body(index), key });
        if (answer.status === 201) {
          ids.set(key, answer.json.id);
          break;
        }
        if (answer.status === 429) {
          // The store's limit (16 per 2 s) met by the retries themselves: wait as told.
          await new Promise((resolve) => setTimeout(resolve, Number(answer.retryAfter) * 1000));
          continue;
        }
        assertUnavailable(answer, `create ${index} after the thaw`);
        assert.ok(attempt < 20, `create ${index} still answers 503 after the thaw`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    assert.equal(new Set(ids.values()).size, keys.length, 'one payment per key');
    const made = await app.db.pool.many(
      sql.type(
        z.object({ id: z.string(), order_id: z.string() }),
      )`select id::text, order_id from payments where store_id = ${storeId} and order_id like 'frozen-%'`,
    );
    assert.equal(made.length, keys.length, 'no create lost or doubled');
    assert.deepEqual(new Set(made.map((row) => row.id)), new Set(ids.values()));
    assert.equal((await call('GET', '/healthz')).status, 200);

    // The transfers sent during the freeze are booked and complete their payments.
    await app.settle();
    for (const [index, payment] of open.entries()) {
      const read = await call('GET', `/v1/payments/${payment.id}`);
      assert.equal(read.status, 200, read.text);
      assert.equal(read.json.status, 'completed', `payment ${index}`);
      assert.deepEqual(read.json.paymentDetails.transactionSignatures, [sent[index]!.hash]);
    }
  });
});
