// The treasury benchmark (issues 12 and 43): prints numbers, asserts nothing, exits 0.
//
//   node bench/treasury.ts [--payments 10] [--part all|settlements|sweeps]   (npm run bench:treasury -- …)
//
// A fresh database `kassa_bench_treasury` on DATABASE_URL's server (its role must be allowed to
// create databases), or on the embedded PostgreSQL. Kassa runs in this process (`startService`:
// API with the sandbox chain, a block every 400 ms, and the worker with its chain reader and
// signer), as `kassa start` runs it.
//
// The two settlements (issue 43 item 6, `--part settlements`): two stores whose treasuries are
// sandbox wallets (POST /sandbox/v1/wallets), one settling by deposit (the default), one straight
// to its treasury by reference. For each settlement and coin (TON, USDT), `--payments` payments
// one after the other, each paid by the customer's wallet (POST /sandbox/v1/transfers; to the
// treasury with the reference as the comment, for USDT the jetton transfer's forward_payload) and
// settled (a deposit's sweep confirmed) and 1.5 s more (BENCH_SETTLEMENT_GAP_MS) before the next. Printed per row:
// - the shop's network cost per payment, read from the chain: what Kassa's gas wallet lost, plus
//   the TON the customer paid that did not reach the treasury (a deposit's deploy and sweep fees);
//   the fees the books record for the payments' outgoing transfers, the deposit wallets made and
//   Kassa's messages (outgoing transfers) beside it; and the treasury's own fee for receiving
//   (its wallet's, paid in both settlements; not Kassa's);
// - the time from the customer's transaction (the moment the sandbox answered that it ran) to the
//   payment's `completed` as the store sees it: GET /v1/payments/{id} (polled every 20 ms) and the
//   `payment.completed` webhook (a receiver in this process); and to the money in the treasury
//   (a deposit: its sweep confirmed on the books);
// - then the ratio of treasury to deposit for each coin.
// A USDT payment to a treasury that this build cannot take or never books (20 s) prints "not yet
// on this build".
//
// Sweeps (issue 12, `--part sweeps`): a store with a treasury (a wallet never deployed) takes
// payments paid with POST /sandbox/v1/transfers; the worker sweeps them, nobody acting.
// Four sweep rounds of `--payments` payments each, then two refund rounds (below): TON one at a time (each swept before the next is
// paid), TON all at once, USDT one at a time (each top-up its own gas wallet message: no
// batching), USDT all at once (the top-ups planned within a second share one message). Printed per
// round: the TON cost per swept payment (TON: the sweep's fees, from the books; USDT: what the gas
// wallet lost, i.e. the top-ups and their fees less the excess that came back, over the payments:
// the TON the deposits' jetton transfers attached and their fees all came from it),
// gas wallet messages, and the time from the payment's completion (its transfer booked) to the
// sweep confirmed (median, p95, max).
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Address, Cell } from '@ton/core';
import { keyPairFromSeed } from '@ton/crypto';
import { WalletContractV5R1 } from '@ton/ton';
import { pino } from 'pino';
import { issueToken } from '../src/auth/tokens.ts';
import { commentOf } from '../src/chain/detect.ts';
import { toncenterV3History } from '../src/chain/history.ts';
import { SANDBOX_TONCENTER_PATH } from '../src/chain/sandbox/path.ts';
import { loadConfig } from '../src/config.ts';
import { openPool, sql, z } from '../src/db/pool.ts';
import { fromBaseUnits, toBaseUnits } from '../src/money.ts';
import { startService } from '../src/server.ts';
import { createStore, parseMethodList, updateStore } from '../src/stores/stores.ts';
import { recordRefundGasPayment, storeRefundGas } from '../src/treasury/gas.ts';
import { openBenchDatabase } from './lib/database.ts';
import { benchFlags } from './lib/flags.ts';
import { formatNumber, percentile, sortedCopy, textTable } from './lib/stats.ts';

const USAGE = 'usage: node bench/treasury.ts [--payments 10] [--part all|settlements|sweeps]';
const { flags, usage } = benchFlags(USAGE, { payments: { type: 'string', default: '10' }, part: { type: 'string', default: 'all' } });
const N = Number(flags.payments);
if (!Number.isInteger(N) || N < 1 || N > 100) usage('--payments must be an integer from 1 to 100');
const part = flags.part;
if (part !== 'all' && part !== 'settlements' && part !== 'sweeps') usage('--part must be all, settlements or sweeps');

const BENCH_DATABASE = 'kassa_bench_treasury';
const log = pino({ level: 'warn' }, pino.destination(2));
const say = (line: string) => process.stderr.write(`bench: ${line}\n`);
const out = (line = '') => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const database = await openBenchDatabase(BENCH_DATABASE, process.cwd(), log);
await database.fresh();
const benchUrl = database.url;

const config = loadConfig({
  DATABASE_URL: benchUrl,
  PORT: '0',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_STORE: '0',
  RATE_LIMIT_PER_CLIENT: '0',
  WEBHOOK_ALLOW_INSECURE: 'true', // the settlements' webhook receiver is in this process, over plain HTTP
});
const service = await startService(config, { api: true, worker: true }, log, () => new Date());
const url = service.url!;
const pool = await openPool(benchUrl, { maxPoolSize: 4 });

const treasury = WalletContractV5R1.create({
  publicKey: keyPairFromSeed(crypto.randomBytes(32)).publicKey,
  walletId: { networkGlobalId: -3, context: 0 },
}).address.toRawString();
const store = await createStore(pool, 'Bench', parseMethodList('TON/TON,USDT/TON'), { treasury, refundWindowDays: 0 });
const token = (await issueToken(pool, store.id, null, new Date())).token;
const gas = await pool.oneFirst(sql.type(z.object({ address: z.string() }))`select address from gas_wallets where network = 'sandbox'`);

async function call(method: string, path: string, body?: unknown, auth = true, bearer = token): Promise<any> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { ...(auth ? { authorization: `Bearer ${bearer}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}
const tonOf = async (address: string): Promise<number> => Number((await call('GET', `/sandbox/v1/accounts/${address}`, undefined, false)).balances.TON);
const nanoTonOf = async (address: string): Promise<bigint> =>
  toBaseUnits(String((await call('GET', `/sandbox/v1/accounts/${address}`, undefined, false)).balances.TON), 9);
const gasMessages = async () =>
  pool.oneFirst(
    sql.type(
      z.object({ n: z.number() }),
    )`select count(distinct message_hash)::int as n from outgoing_transfers where from_address = ${gas} and state = 'confirmed'`,
  );

// ---- The two settlements (issue 43 item 6) ----

type Coin = 'TON' | 'USDT';
type Settlement = 'deposit' | 'treasury';
const PRICE: Record<Coin, number> = { TON: 1.5, USDT: 5 };
const GAP_MS = Number(process.env.BENCH_SETTLEMENT_GAP_MS ?? 1_500);
const history = toncenterV3History({ baseUrl: `${url}${SANDBOX_TONCENTER_PATH}` });

/** The moment (Date.now()) each payment's `payment.completed` reached the store's receiver. */
const completedHeard = new Map<string, number>();
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const at = Date.now();
    try {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (event.type === 'payment.completed' && !completedHeard.has(event.payload.paymentID)) completedHeard.set(event.payload.paymentID, at);
    } catch {}
    res.writeHead(200).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;

/** A store settling by `settlement` to a fresh sandbox wallet (a merchant's own, deployed, holding TON and USDT), its token and webhook endpoint. */
async function settlementStore(settlement: Settlement) {
  const wallet = Address.parse((await call('POST', '/sandbox/v1/wallets', undefined, false)).address).toRawString();
  const created = await createStore(pool, `Bench ${settlement}`, parseMethodList('TON/TON,USDT/TON'), { treasury: wallet, refundWindowDays: 0 });
  if (settlement === 'treasury') await updateStore(pool, created.id, { settlement: 'treasury' });
  const storeToken = (await issueToken(pool, created.id, null, new Date())).token;
  await call('POST', '/v1/webhook-endpoints', { url: receiverUrl, events: ['payment.completed'] }, true, storeToken);
  // Its jetton wallets (one per sandbox jetton): their notifications are jettons' messages, not TON paid.
  const jettonWallets = new Set((await history.jettonWallets([wallet])).wallets.map((w) => w.address));
  return { id: created.id, token: storeToken, treasury: wallet, treasuryJettonWallets: jettonWallets };
}

/** The treasury's transactions (from the chain's history) not in `seen`. */
async function treasuryTransactionsSince(treasuryAddress: string, seen: ReadonlySet<string>) {
  return (await history.transactions(treasuryAddress)).transactions.filter((tx) => !seen.has(tx.hash));
}

type SettlementRow = {
  settlement: Settlement;
  coin: Coin;
  /** Why the row has no figures (this build cannot take or book it), or null. */
  missing: string | null;
  costTon: number;
  /** The whole row's cost to the shop in nanoTON, exact (negative: the gas wallet got back more than the row spent, an earlier row's excess). */
  costNano: bigint;
  booksFeeTon: number;
  deposits: number;
  messages: number;
  receiveFeeTon: number;
  /** What the treasury's balance gained per payment, in the coin (after its receiving fee). */
  gained: number;
  apiMs: Float64Array;
  hookMs: Float64Array;
  treasuryMs: Float64Array;
};

const sweepState = z.object({ state: z.string() });
async function settleRow(settlement: Settlement, coin: Coin): Promise<SettlementRow> {
  const shop = await settlementStore(settlement);
  // What an earlier row's transfers send back (jetton excesses) reaches the gas wallet, and the
  // treasury's own making (its deploy, its funding) is in a block of its history, before either is read.
  await sleep(2_000);
  const seen = new Set((await history.transactions(shop.treasury)).transactions.map((tx) => tx.hash));
  const gasBefore = await nanoTonOf(gas);
  const coinBefore = Number((await call('GET', `/sandbox/v1/accounts/${shop.treasury}`, undefined, false)).balances[coin]);
  const ids: string[] = [];
  const api: number[] = [];
  const hook: number[] = [];
  const inTreasury: number[] = [];
  const row = (missing: string | null): SettlementRow => ({
    settlement,
    coin,
    missing,
    costTon: Number.NaN,
    costNano: 0n,
    booksFeeTon: Number.NaN,
    deposits: 0,
    messages: 0,
    receiveFeeTon: Number.NaN,
    gained: Number.NaN,
    apiMs: sortedCopy(api),
    hookMs: sortedCopy(hook),
    treasuryMs: sortedCopy(inTreasury),
  });
  for (let i = 0; i < N; i += 1) {
    const created = await fetch(`${url}/v1/payments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${shop.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: String(PRICE[coin]), currency: coin, payment_options: { methods: [{ coin, chain: 'TON' }] } }),
    });
    const payment = (await created.json()) as any;
    if (!created.ok) return row(`not yet on this build (${created.status} ${payment.error?.code ?? ''})`);
    const details = payment.paymentDetails;
    const to: string = details.address;
    let transfer: Record<string, unknown> = { to, coin, amount: String(PRICE[coin]) };
    if (settlement === 'treasury') {
      if (typeof details.reference !== 'string' || typeof details.payload !== 'string' || Address.parse(to).toRawString() !== shop.treasury) {
        return row('not yet on this build (no reference to pay the treasury by)');
      }
      // What a wallet sends: TON, the payload as the message body; a jetton, a TEP-74 transfer to the
      // treasury whose forward_payload is the payload's comment (the sandbox writes it as a text comment).
      const comment = commentOf(Cell.fromBase64(details.payload)) ?? details.reference;
      transfer = coin === 'TON' ? { ...transfer, payload: details.payload } : { ...transfer, comment };
    }
    ids.push(payment.id);
    await call('POST', '/sandbox/v1/transfers', transfer, false);
    const paidAt = Date.now();
    let completedAt: number | null = null;
    let sweptAt: number | null = settlement === 'treasury' ? paidAt : null;
    const deadline = paidAt + (settlement === 'treasury' && coin === 'USDT' ? 20_000 : 30_000);
    while (completedAt === null || sweptAt === null || !completedHeard.has(payment.id)) {
      if (completedAt === null && (await call('GET', `/v1/payments/${payment.id}`, undefined, true, shop.token)).status === 'completed') {
        completedAt = Date.now();
      }
      if (sweptAt === null) {
        const sweep = await pool.maybeOne(sql.type(sweepState)`select state from outgoing_transfers where kind = 'sweep' and payment_id = ${payment.id}`);
        if (sweep?.state === 'confirmed') sweptAt = Date.now();
        if (sweep?.state === 'failed') throw new Error(`the sweep of ${payment.id} failed`);
      }
      if (Date.now() > deadline) {
        if (completedAt === null && settlement === 'treasury' && coin === 'USDT') return row('not yet on this build (paid, never booked)');
        const deliveries = await pool.any(
          sql.type(z.object({ status: z.string(), error: z.string().nullable() }))`
            select d.status, (select a.error from webhook_attempts a where a.delivery_id = d.id order by a.started_at desc limit 1) as error
            from webhook_deliveries d where d.payment_id = ${payment.id}`,
        );
        const outgoing = await pool.any(
          sql.type(z.object({ kind: z.string(), state: z.string() }))`select kind, state from outgoing_transfers where payment_id = ${payment.id}`,
        );
        throw new Error(
          `${settlement} ${coin} payment ${payment.id}: not completed and settled in time (completed ${completedAt !== null}, in the treasury ${sweptAt !== null}, webhook ${JSON.stringify(deliveries)}, outgoing ${JSON.stringify(outgoing)})`,
        );
      }
      await sleep(20);
    }
    api.push(completedAt - paidAt);
    hook.push(completedHeard.get(payment.id)! - paidAt);
    inTreasury.push(sweptAt - paidAt);
    // The same pause after each payment in both settlements (a deposit's also waited for its sweep):
    // the last delivery's job has let go of its store's queue before the next payment's event.
    await sleep(GAP_MS);
  }
  await sleep(2_000); // the last jetton transfer's excess reaches the gas wallet; the treasury's last transactions are in a block
  const gasLost = gasBefore - (await nanoTonOf(gas));
  const coinGained = Number((await call('GET', `/sandbox/v1/accounts/${shop.treasury}`, undefined, false)).balances[coin]) - coinBefore;
  const arrived = await treasuryTransactionsSince(shop.treasury, seen);
  // The TON the payments brought the treasury (a deposit's sweep, the customer's own transfer), not the jetton wallet's notifications.
  const tonArrived = arrived
    .filter((tx) => tx.inMessage?.source != null && !shop.treasuryJettonWallets.has(tx.inMessage.source))
    .reduce((sum, tx) => sum + (tx.inMessage?.value ?? 0n), 0n);
  const tonPaid = coin === 'TON' ? toBaseUnits(String(PRICE[coin] * N), 9) : 0n;
  const costNano = gasLost + tonPaid - tonArrived;
  const receiveFees = arrived.reduce((sum, tx) => sum + (tx.totalFees ?? 0n), 0n);
  const books = await pool.one(sql.type(z.object({ fee: z.string(), messages: z.number(), deposits: z.number() }))`
    select (select coalesce(sum(fee_base_units), 0) from outgoing_transfers where payment_id = any(${sql.array(ids, 'uuid')}))::text as fee,
           (select count(*)::int from outgoing_transfers where payment_id = any(${sql.array(ids, 'uuid')})) as messages,
           (select count(*)::int from deposit_addresses where payment_id = any(${sql.array(ids, 'uuid')})) as deposits
  `);
  return {
    ...row(null),
    costTon: Number(fromBaseUnits(costNano, 9)) / N,
    costNano,
    booksFeeTon: Number(fromBaseUnits(BigInt(books.fee), 9)) / N,
    deposits: books.deposits,
    messages: books.messages,
    receiveFeeTon: Number(fromBaseUnits(receiveFees, 9)) / N,
    gained: coinGained / N,
  };
}

const mTon = (ton: number) => `${formatNumber(ton * 1000, 3)} mTON`;
const msPair = (sorted: Float64Array) => `${formatNumber(percentile(sorted, 50), 0)} / ${formatNumber(percentile(sorted, 95), 0)} ms`;
const ratio = (treasuryValue: number, depositValue: number) =>
  Number.isFinite(treasuryValue) && Number.isFinite(depositValue) && depositValue !== 0 ? `${formatNumber(treasuryValue / depositValue, 2)}×` : '—';

async function settlements(): Promise<void> {
  const rows: SettlementRow[] = [];
  for (const coin of ['TON', 'USDT'] as const) {
    for (const settlement of ['deposit', 'treasury'] as const) {
      say(`the two settlements: ${settlement}, ${coin}, ${N} payments`);
      rows.push(await settleRow(settlement, coin));
    }
  }
  out(`the two settlements (issue 43): ${N} payments per row, one after the other, sandbox chain (a block every 400 ms), one process (API + worker)`);
  out(
    textTable(
      [
        'settlement',
        'coin',
        "shop's cost per payment (chain)",
        'fees on the books',
        'deposits / Kassa messages',
        "treasury's receiving fee",
        'treasury got per payment',
        'tx → completed, API p50 / p95',
        'webhook p50 / p95',
        'tx → in the treasury p50',
      ],
      rows.map((r) =>
        r.missing !== null
          ? [r.settlement, r.coin, r.missing, '', '', '', '', '', '', '']
          : [
              r.settlement,
              r.coin,
              `${mTon(r.costTon)} (${r.costNano} nanoTON in all)`,
              mTon(r.booksFeeTon),
              `${r.deposits} / ${r.messages}`,
              mTon(r.receiveFeeTon),
              `${formatNumber(r.gained, 6)} ${r.coin} of ${PRICE[r.coin]}`,
              msPair(r.apiMs),
              msPair(r.hookMs),
              `${formatNumber(percentile(r.treasuryMs, 50), 0)} ms`,
            ],
      ),
    ),
  );
  const ratios = (['TON', 'USDT'] as const).map((coin) => {
    const deposit = rows.find((r) => r.coin === coin && r.settlement === 'deposit')!;
    const treasuryRow = rows.find((r) => r.coin === coin && r.settlement === 'treasury')!;
    if (treasuryRow.missing !== null) return [coin, treasuryRow.missing, '', '', ''];
    return [
      coin,
      ratio(treasuryRow.costTon, deposit.costTon),
      ratio(percentile(treasuryRow.apiMs, 50), percentile(deposit.apiMs, 50)),
      ratio(percentile(treasuryRow.apiMs, 95), percentile(deposit.apiMs, 95)),
      ratio(percentile(treasuryRow.hookMs, 50), percentile(deposit.hookMs, 50)),
    ];
  });
  out(textTable(['treasury ÷ deposit', 'cost', 'completed (API) p50', 'p95', 'completed (webhook) p50'], ratios));
  out();
}

if (part !== 'sweeps') await settlements();
receiver.close();

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

if (part !== 'settlements') {
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
}

await pool.end();
await service.stop();
await database.close(false);
