// Prometheus metrics (prom-client), served at GET /metrics. Counters are per process; queue depth
// and payments by status are read from the database at scrape time, so they agree across processes.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { sql, z, type Db } from './db/pool.ts';

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'kassa_' });

export const httpDuration = new Histogram({
  name: 'kassa_http_request_duration_seconds',
  help: 'HTTP request latency by route pattern, method and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

export const paymentTransitions = new Counter({
  name: 'kassa_payment_transitions_total',
  help: 'Payment status changes made by this process, by the status reached.',
  labelNames: ['to'] as const,
  registers: [registry],
});

export const chainApiRequests = new Counter({
  name: 'kassa_chain_api_requests_total',
  help: 'HTTP requests to the chain API (toncenter or the sandbox), by outcome (ok, not_indexed: a block not indexed yet, rate_limited, error).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const chainLag = new Gauge({
  name: 'kassa_chain_lag_seconds',
  help: 'How far behind the chain the reader is: time of the newest published masterchain block minus time of the last one booked (this process, while it holds the cursor).',
  registers: [registry],
});

export const chainBlockWait = new Gauge({
  name: 'kassa_chain_block_wait_seconds',
  help: 'How long the reader has been asking for the block after its cursor without the chain API serving it (0 once served). Above a few seconds while later blocks are indexed: an indexer hole; the cursor holds (this process, while it holds the cursor).',
  registers: [registry],
});

export const chainBlocksWaitedFor = new Counter({
  name: 'kassa_chain_unindexed_waits_total',
  help: 'Blocks the reader found not indexed while the chain API already served a later one (out-of-order indexing); it waited for each, never skipped it.',
  registers: [registry],
});

export const chainWatchesSetAside = new Counter({
  name: 'kassa_chain_watches_set_aside_total',
  help: "Deposit jetton wallets the reader set aside because their master's get_wallet_address failed for good (an odd master, an exotic wallet): their payments cannot be booked in that coin; every other payment still is (kassa doctor lists them).",
  registers: [registry],
});

export const webhookAttempts = new Counter({
  name: 'kassa_webhook_attempts_total',
  help: 'Webhook delivery attempts, by outcome (delivered, http_error, network_error).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const webhookDeliveriesDeferred = new Counter({
  name: 'kassa_webhook_deliveries_deferred_total',
  help: "Delivery runs that made no attempt because the delivery's store already had its share of the delivery slots in flight (tried again 2 s later).",
  registers: [registry],
});

export const rateLimitsDecidedAlone = new Counter({
  name: 'kassa_rate_limits_decided_alone_total',
  help: "Times this process stopped waiting for the deployment's shared rate-limit counters (table rate_limits did not answer within 250 ms, or failed) and decided alone, from its own counts with the whole allowance, for the next 2 s: a burst then can pass the deployment's limit by up to one allowance per other process.",
  registers: [registry],
});

export const rateRefusals = new Counter({
  name: 'kassa_rate_refusals_total',
  help: 'Prices refused for want of a rate (rate_unavailable), by reason: missing, stale, unconfirmed (no fresh rate of the second source), disagree (the two sources differ by more than RATES_MAX_DIVERGENCE_PERCENT).',
  labelNames: ['reason'] as const,
  registers: [registry],
});

export const ratesUnconfirmed = new Gauge({
  name: 'kassa_rates_unconfirmed_pairs',
  help: 'At the last rates refresh by this process: pairs the primary source priced that the second source did not price (unconfirmed) or contradicted (disagree); neither prices a payment.',
  labelNames: ['reason'] as const,
  registers: [registry],
});

export const outgoingFailures = new Counter({
  name: 'kassa_outgoing_failures_total',
  help: 'Transfers out of a deposit or the gas wallet that failed, by kind of failure (permanent: never planned again by itself; transient: planned again after a backoff; expired: no signed message was accepted; on_chain: the wallet or jetton wallet refused it; bounced: the jetton wallet at the destination refused the jettons and they came back; superseded: planned again for money an earlier failed transfer moved after all, its message landing late: not sent).',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const outgoingExpiredOnArrival = new Counter({
  name: 'kassa_outgoing_expired_on_arrival_total',
  help: "Messages out (sweeps, refunds, gas top-ups) that their wallet refused as expired (exit code 36 of wallet v4r2, 136 of v5r1) while they were valid by the signer's clock (the later of this machine's and the newest block's the chain reader saw): the chain's time is ahead of both. Each is signed again once it can no longer land; any is worth an alert (docs/OPERATIONS.md).",
  registers: [registry],
});

export const treasuryRefundsPaidTwice = new Counter({
  name: 'kassa_treasury_refunds_paid_twice_total',
  help: 'Treasury refunds the merchant\'s wallet paid twice, by why: signed_twice (the same request signed again: paidAgain on the refund), beyond_sale (what left the treasury for a sale exceeds what was swept to it — an expired refund asked again, then signed anyway: beyondSale on the refund), after_expiry (a refund paid after it had expired, its amount freed and perhaps refunded again within the sale: paidAfterExpiry on the refund). Kassa holds no key of the treasury and cannot stop it; the books say what left (docs/API.md, "Refund from the treasury").',
  labelNames: ['why'] as const,
  registers: [registry],
});

export const transfersCarriedMore = new Counter({
  name: 'kassa_transfers_carried_more_total',
  help: 'Closing messages whose carry-all took money which reached the deposit after the signer checked its balance, by kind (refund: the refund of everything; final_sweep). It went to the store\'s treasury, or the gas wallet, never to the refund\'s address, and is booked there as swept (docs/API.md, "The refund of everything refundable").',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const livePolls = new Counter({
  name: 'kassa_live_polls_total',
  help: "Polls made by the shared live pollers of this process (one query each, for every open page of its kind), by feed (checkout: the hosted checkout's status; dashboard_list: the dashboard's payments list; dashboard_grants: whether each open list's session and membership still hold). Flat while nobody watches; a poll that failed is counted too (its log line says why).",
  labelNames: ['feed'] as const,
  registers: [registry],
});

let database: Db | null = null;

/** Where scrape-time gauges read from (set once by the app that serves /metrics). */
export function useDatabaseForMetrics(db: Db): void {
  database = db;
}

new Gauge({
  name: 'kassa_jobs_queued',
  help: 'Graphile Worker jobs waiting (run_at reached, not locked), by task.',
  labelNames: ['task'] as const,
  registers: [registry],
  async collect() {
    if (!database) return;
    this.reset();
    const rows = await database.any(sql.type(z.object({ task: z.string(), n: z.number(), age: z.number() }))`
      select t.identifier as task, count(*)::int as n, coalesce(extract(epoch from now() - min(j.run_at)), 0)::float8 as age
      from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where j.run_at <= now() and j.locked_at is null and j.attempts < j.max_attempts
      group by t.identifier
    `);
    for (const row of rows) {
      this.set({ task: row.task }, row.n);
      jobAges.set({ task: row.task }, row.age);
    }
  },
});

const jobAges = new Gauge({
  name: 'kassa_jobs_oldest_age_seconds',
  help: 'Age of the oldest waiting Graphile Worker job past its run_at, by task.',
  labelNames: ['task'] as const,
  registers: [registry],
});

new Gauge({
  name: 'kassa_payments',
  help: 'Payments by status (all stores).',
  labelNames: ['status'] as const,
  registers: [registry],
  async collect() {
    if (!database) return;
    this.reset();
    const rows = await database.any(sql.type(z.object({ status: z.string(), n: z.number() }))`select status, count(*)::int as n from payments group by status`);
    for (const row of rows) this.set({ status: row.status }, row.n);
  },
});

new Gauge({
  name: 'kassa_outgoing_held_unbooked_transfers',
  help: 'Planned transfers out the signer holds because their wallet accepted a message the books have not seen (unbooked_message: it looks again every 30 s, for as long as it takes). A message Kassa has no record of, or a chain reader far behind: see docs/OPERATIONS.md.',
  registers: [registry],
  async collect() {
    if (!database) return;
    const row = await database.one(sql.type(z.object({ n: z.number(), age: z.number() }))`
      select count(*)::int as n, coalesce(extract(epoch from now() - min(held_unbooked_since)), 0)::float8 as age
      from outgoing_transfers where state = 'planned' and held_unbooked_since is not null
    `);
    this.set(row.n);
    heldUnbookedAge.set(row.age);
  },
});

const heldUnbookedAge = new Gauge({
  name: 'kassa_outgoing_held_unbooked_oldest_seconds',
  help: 'How long the signer has held the oldest of kassa_outgoing_held_unbooked_transfers (0: none held).',
  registers: [registry],
});

new Gauge({
  name: 'kassa_deposit_differences',
  help: 'Deposits whose on-chain balance differed from their books (in minus out, minus fees) at the last reconciliation, by coin.',
  labelNames: ['coin'] as const,
  registers: [registry],
  async collect() {
    if (!database) return;
    this.reset();
    const rows = await database.any(sql.type(z.object({ coin: z.string(), n: z.number() }))`
      select coin_symbol as coin, count(*)::int as n from deposit_reconciliations where difference_base_units <> 0 group by coin_symbol
    `);
    for (const row of rows) this.set({ coin: row.coin }, row.n);
  },
});
