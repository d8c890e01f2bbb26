// The treasury benchmark (issue 12): prints numbers, asserts nothing, exits 0.
//
//   node bench/treasury.ts [--payments 10]
//
// A fresh database `kassa_bench_treasury` on DATABASE_URL's server (its role must be allowed to
// create databases), or on the embedded PostgreSQL. Kassa runs in this process (`startService`:
// API with the sandbox chain, a block every 400 ms, and the worker with its chain reader and
// signer), as `kassa start` runs it. A store with a treasury (a wallet never deployed) takes
// payments paid with POST /sandbox/v1/transfers; the worker sweeps them, nobody acting.
//
// Four sweep rounds of `--payments` payments each, then two refund rounds (below): TON one at a time (each swept before the next is
// paid), TON all at once, USDT one at a time (each top-up its own gas wallet message: no
// batching), USDT all at once (the top-ups planned within a second share one message). Printed per
// round: the TON cost per swept payment (TON: the sweep's fees, from the books; USDT: what the gas
// wallet lost, i.e. the top-ups and their fees less the excess that came back, over the payments:
// the TON the deposits' jetton transfers attached and their fees all came from it),
// gas wallet messages, and the time from the payment's completion (its transfer booked) to the
// sweep confirmed (median, p95, max).
import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Address } from '@ton/core';
import { keyPairFromSeed } from '@ton/crypto';
import { WalletContractV5R1 } from '@ton/ton';
import pg from 'pg';
import { pino } from 'pino';
import { issueToken } from '../src/auth/tokens.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabaseServer } from '../src/db/embedded.ts';
import { openPool, sql, z } from '../src/db/pool.ts';
import { fromBaseUnits } from '../src/money.ts';
import { startService } from '../src/server.ts';
import { createStore, parseMethodList } from '../src/stores/stores.ts';
import { recordRefundGasPayment, storeRefundGas } from '../src/treasury/gas.ts';
import { benchFlags } from './lib/flags.ts';
import { formatNumber, percentile, sortedCopy, textTable } from './lib/stats.ts';

const USAGE = 'usage: node bench/treasury.ts [--payments 10]';
const { flags, usage } = benchFlags(USAGE, { payments: { type: 'string', default: '10' } });
const N = Number(flags.payments);
if (!Number.isInteger(N) || N < 1 || N > 100) usage('--payments must be an integer from 1 to 100');

const BENCH_DATABASE = 'kassa_bench_treasury';
const log = pino({ level: 'warn' }, pino.destination(2));
const say = (line: string) => process.stderr.write(`bench: ${line}\n`);
const out = (line = '') => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const base = loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'warn' });
const dbServer = await openDatabaseServer(base, log);
const benchUrlObject = new URL(dbServer.url);
benchUrlObject.pathname = `/${BENCH_DATABASE}`;
const benchUrl = benchUrlObject.toString();
const admin = new pg.Client({ connectionString: dbServer.url });
await admin.connect();
await admin.query(`drop database if exists ${pg.escapeIdentifier(BENCH_DATABASE)} with (force)`);
await admin.query(`create database ${pg.escapeIdentifier(BENCH_DATABASE)}`);

const config = loadConfig({ DATABASE_URL: benchUrl, PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_PER_STORE: '0', RATE_LIMIT_PER_CLIENT: '0' });
const service = await startService(config, { api: true, worker: true }, log, () => new Date());
const url = service.url!;
const pool = await openPool(benchUrl, { maxPoolSize: 4 });

const treasury = WalletContractV5R1.create({
  publicKey: keyPairFromSeed(crypto.randomBytes(32)).publicKey,
  walletId: { networkGlobalId: -3, context: 0 },
}).address.toRawString();
const store = await createStore(pool, 'Bench', parseMethodList('TON/TON,USDT/TON'), { treasury });
const token = (await issueToken(pool, store.id, null, new Date())).token;
const gas = await pool.oneFirst(sql.type(z.object({ address: z.string() }))`select address from gas_wallets where network = 'sandbox'`);

async function call(method: string, path: string, body?: unknown, auth = true): Promise<any> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { ...(auth ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}
const tonOf = async (address: string): Promise<number> => Number((await call('GET', `/sandbox/v1/accounts/${address}`, undefined, false)).balances.TON);
const gasMessages = async () =>
  pool.oneFirst(
    sql.type(
      z.object({ n: z.number() }),
    )`select count(distinct message_hash)::int as n from outgoing_transfers where from_address = ${gas} and state = 'confirmed'`,
  );

/** A payment paid with `extra` more than its price (an overpayment, refundable). */
async function pay(coin: 'TON' | 'USDT', extra = 0): Promise<string> {
  const price = coin === 'TON' ? 1.5 : 5;
  const created = await call('POST', '/v1/payments', {
    amount: String(price),
    currency: coin,
    payment_options: { methods: [{ coin, chain: 'TON' }] },
  });
  await call('POST', '/sandbox/v1/transfers', { to: created.paymentDetails.address, coin, amount: String(price + extra) }, false);
  return created.id;
}

const sweepRow = z.object({ state: z.string(), fee: z.string().nullable(), sent: z.string().nullable(), latency_ms: z.number().nullable() });
async function sweeps(ids: string[]) {
  return pool.any(sql.type(sweepRow)`
    select o.state, o.fee_base_units::text as fee, o.sent_amount_base_units::text as sent,
           (extract(epoch from o.confirmed_at - (select min(t.recorded_at) from transfers t where t.payment_id = o.payment_id and t.effect in ('completed', 'overpaid'))) * 1000)::float8 as latency_ms
    from outgoing_transfers o where o.kind = 'sweep' and o.payment_id = any(${sql.array(ids, 'uuid')})
  `);
}

async function waitSwept(ids: string[]): Promise<void> {
  const deadline = performance.now() + 120_000;
  for (;;) {
    const rows = await sweeps(ids);
    if (rows.length === ids.length && rows.every((r) => r.state === 'confirmed')) return;
    if (rows.some((r) => r.state === 'failed')) throw new Error('a sweep failed');
    if (performance.now() > deadline) throw new Error(`sweeps not confirmed in 120 s: ${JSON.stringify(rows)}`);
    await sleep(100);
  }
}

type Round = { name: string; coin: 'TON' | 'USDT'; together: boolean };
const rounds: Round[] = [
  { name: 'TON, one at a time', coin: 'TON', together: false },
  { name: 'TON, all at once', coin: 'TON', together: true },
  { name: 'USDT, one at a time (no batching)', coin: 'USDT', together: false },
  { name: 'USDT, all at once (batched top-ups)', coin: 'USDT', together: true },
];
const results: string[][] = [];
for (const round of rounds) {
  say(`${round.name}: ${N} payments`);
  const gasBefore = await tonOf(gas);
  const messagesBefore = await gasMessages();
  const ids: string[] = [];
  if (round.together) {
    for (let i = 0; i < N; i += 1) ids.push(await pay(round.coin));
    await waitSwept(ids);
  } else {
    for (let i = 0; i < N; i += 1) {
      const id = await pay(round.coin);
      ids.push(id);
      await waitSwept([id]);
    }
  }
  await sleep(1_500); // the excess of the last jetton transfers reaches the gas wallet
  const rows = await sweeps(ids);
  const sweepFees = rows.reduce((sum, r) => sum + BigInt(r.fee ?? '0'), 0n);
  const gasSpent = gasBefore - (await tonOf(gas));
  // TON: the sweep's fee is the whole cost; USDT: the gas wallet's loss already includes the TON the sweeps attached.
  const perPayment = round.coin === 'TON' ? Number(fromBaseUnits(sweepFees, 9)) / N : gasSpent / N;
  const latencies = sortedCopy(rows.map((r) => r.latency_ms ?? Number.NaN));
  results.push([
    round.name,
    String(N),
    `${formatNumber(perPayment * 1000, 3)} mTON`,
    round.coin === 'USDT' ? String((await gasMessages()) - messagesBefore) : '—',
    `${formatNumber(percentile(latencies, 50), 0)} ms`,
    `${formatNumber(percentile(latencies, 95), 0)} ms`,
    `${formatNumber(latencies[latencies.length - 1] ?? Number.NaN, 0)} ms`,
  ]);
}

// Refunds: N overpaid payments (swept first), then a refund of each overpayment asked at once.
// Cost per refund: TON, the refund's fee from the books (paid from the refundable TON); USDT, what
// the store's refund gas account was charged (the refund's TON and its top-up's fee) and what the
// gas wallet lost (top-ups and their fees less the excess that came back). Latency: the refund's
// creation to its confirmation.
const refundRow = z.object({ state: z.string(), fee: z.string().nullable(), latency_ms: z.number().nullable() });
const refundResults: string[][] = [];
await recordRefundGasPayment(pool, { storeId: store.id, amountBaseUnits: 1_000_000_000n * BigInt(N), note: 'bench', now: new Date() });
for (const coin of ['TON', 'USDT'] as const) {
  say(`${coin} refunds: ${N} payments`);
  const ids: string[] = [];
  for (let i = 0; i < N; i += 1) ids.push(await pay(coin, coin === 'TON' ? 0.3 : 1));
  await waitSwept(ids);
  await sleep(1_500);
  const gasBefore = await tonOf(gas);
  const chargedBefore = (await storeRefundGas(pool, store.id)).spent;
  for (const id of ids) {
    await call('POST', `/v1/payments/${id}/refunds`, { coin, amount: coin === 'TON' ? '0.2' : '1', address: treasury });
  }
  const deadline = performance.now() + 120_000;
  let rows: readonly z.infer<typeof refundRow>[] = [];
  for (;;) {
    rows = await pool.any(sql.type(refundRow)`
      select state, fee_base_units::text as fee, (extract(epoch from confirmed_at - created_at) * 1000)::float8 as latency_ms
      from outgoing_transfers where kind = 'refund' and payment_id = any(${sql.array(ids, 'uuid')})
    `);
    if (rows.length === N && rows.every((r) => r.state === 'confirmed')) break;
    if (rows.some((r) => r.state === 'failed')) throw new Error('a refund failed');
    if (performance.now() > deadline) throw new Error(`refunds not confirmed in 120 s: ${JSON.stringify(rows)}`);
    await sleep(100);
  }
  await sleep(1_500); // the excess of the last jetton transfers reaches the gas wallet
  const fees = rows.reduce((sum, r) => sum + BigInt(r.fee ?? '0'), 0n);
  const charged = (await storeRefundGas(pool, store.id)).spent - chargedBefore;
  const gasLost = gasBefore - (await tonOf(gas));
  const latencies = sortedCopy(rows.map((r) => r.latency_ms ?? Number.NaN));
  refundResults.push([
    `${coin} refunds`,
    String(N),
    `${formatNumber((Number(fromBaseUnits(fees, 9)) / N) * 1000, 3)} mTON`,
    coin === 'USDT' ? `${formatNumber((Number(fromBaseUnits(charged, 9)) / N) * 1000, 3)} mTON` : '—',
    coin === 'USDT' ? `${formatNumber((gasLost / N) * 1000, 3)} mTON` : '—',
    `${formatNumber(percentile(latencies, 50), 0)} ms`,
    `${formatNumber(latencies[latencies.length - 1] ?? Number.NaN, 0)} ms`,
  ]);
}

out(`treasury benchmark: ${N} payments per round, sandbox chain (a block every 400 ms), one process (API + worker)`);
out(textTable(['round', 'payments', 'TON cost per payment', 'gas wallet messages', 'completion → confirmed p50', 'p95', 'max'], results));
out(
  textTable(
    ['refunds', 'refunds', 'fee per refund (books)', "store's gas charge per refund", 'gas wallet loss per refund', 'created → confirmed p50', 'max'],
    refundResults,
  ),
);
out(`treasury ${Address.parse(treasury).toString({ bounceable: false })}; gas wallet ${Address.parse(gas).toString({ bounceable: false })}`);

await pool.end();
await service.stop();
await admin.query(`drop database if exists ${pg.escapeIdentifier(BENCH_DATABASE)} with (force)`).catch(() => {});
await admin.end();
await dbServer.stop();
