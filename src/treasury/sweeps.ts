// The sweep planners: a completed payment's counted amount to its store's treasury (in the
// transaction that completes it, or later once the store has a treasury), and held money whose
// hold has passed (the recurring treasury__plan_sweeps). They write plans through the books'
// planOutgoing (outgoing.ts); no chain calls here.
import { sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { IS_CREDITED } from '../payments/counted.ts';
import { finalSweep, SETTLED_PAYMENT_STATUSES } from './closing.ts';
import { sweepFeeReserve, TON_FEE_RESERVE_BASE_UNITS } from './fees.ts';
import { depositMoney, holdsOtherCoin, planOutgoing, refundableBaseUnits, type OutgoingPlan } from './outgoing.ts';
import { enqueue } from '../worker/enqueue.ts';
import { saleSweepJob } from '../worker/jobs.ts';

const paymentForPlan = z.object({
  id: z.string(),
  store_id: z.string(),
  status: z.string(),
  coin_symbol: z.string().nullable(),
  coin_amount_base_units: z.string().nullable(),
  decimals: z.number().nullable(),
  deposit_address: z.string().nullable(),
  treasury: z.string().nullable(),
  refundable_until: z.date().nullable(),
});

async function paymentToPlan(tx: Db, paymentId: string) {
  return tx.maybeOne(sql.type(paymentForPlan)`
    select p.id, p.store_id, p.status, p.coin_symbol, p.coin_amount_base_units::text as coin_amount_base_units, c.decimals::int as decimals,
           d.address as deposit_address, s.treasury, p.refundable_until
    from payments p join stores s on s.id = p.store_id
    left join coins c on c.symbol = p.coin_symbol
    left join deposit_addresses d on d.payment_id = p.id
    where p.id = ${paymentId}
  `);
}

/**
 * What completion sets going for the sale's money (the complete command's `onCompleted` hook, in
 * the completing transaction): with a refund window (the store's refund_window_days), the sale
 * stays refundable from its deposit until paid_at + the window (payments.refundable_until) and the
 * sweep's job is scheduled for then; without one, the sweep is planned at once.
 */
export async function planSaleSweep(tx: Db, paymentId: string, now: Date): Promise<boolean> {
  const until = await tx.maybeOneFirst(sql.type(z.object({ until: z.date().nullable() }))`
    update payments p set refundable_until = p.paid_at + make_interval(days => s.refund_window_days)
    from stores s where s.id = p.store_id and p.id = ${paymentId} and p.paid_at is not null and s.refund_window_days > 0 and p.settlement = 'deposit'
    returning p.refundable_until as until
  `);
  if (until === null) return planPaymentSweep(tx, paymentId, now);
  await enqueue(tx, saleSweepJob(paymentId, until));
  return false;
}

/**
 * The sweep at the end of a sale's refund window (its job, and the recurring planner after it):
 * with the payment row locked — a refund of the same sale waits for it, or it waits for the
 * refund — plans what is left of the merchant's counted money. Returns whether one was planned.
 */
export async function sweepSaleAfterWindow(pool: DatabasePool, paymentId: string, now: Date): Promise<boolean> {
  return pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`select 1 from payments where id = ${paymentId} for update`);
    return planPaymentSweep(tx, paymentId, now);
  });
}

/**
 * Plans the sweep of a completed payment's counted amount to its store's treasury and enqueues
 * the signer, in the caller's transaction (the one that completes the payment, the sale's window
 * ending, or the recurring planner once the store has a treasury), which holds the payment row
 * locked. A sale with a refund window is swept only once it ended, and only what refunds of it
 * left of the merchant's money (deposit_money's merchant_unswept; TON under the dust line stays).
 * Nothing when the store has no treasury, or the sweep is already planned. Returns whether one was planned.
 */
async function planPaymentSweep(tx: Db, paymentId: string, now: Date): Promise<boolean> {
  const p = await paymentToPlan(tx, paymentId);
  if (
    p?.status !== 'completed' ||
    p.treasury === null ||
    p.deposit_address === null ||
    p.coin_symbol === null ||
    p.coin_amount_base_units === null ||
    p.decimals === null ||
    (p.refundable_until !== null && p.refundable_until > now)
  )
    return false;
  let amount = BigInt(p.coin_amount_base_units);
  if (p.refundable_until !== null) {
    const coin = p.coin_symbol;
    amount = BigInt((await depositMoney(tx, p.id)).find((m) => m.coin_symbol === coin)?.merchant_unswept ?? '0');
    if (amount <= 0n || (coin === 'TON' && amount < TON_FEE_RESERVE_BASE_UNITS)) {
      // Nothing (above the dust line) to sweep, and nothing out of the deposit in flight whose
      // failure could give the merchant's share back: settled for good (planDueSweeps skips it).
      await tx.query(sql.typeAlias('void')`
        update payments p set sale_sweep_settled_at = ${sql.timestamp(now)}
        where p.id = ${p.id} and p.sale_sweep_settled_at is null
          and not exists (select 1 from outgoing_transfers o where o.payment_id = p.id and o.state in ('planned', 'sent'))
      `);
      return false;
    }
  }
  const row = await planOutgoing(
    tx,
    {
      kind: 'sweep',
      reason: 'payment',
      paymentId: p.id,
      storeId: p.store_id,
      from: p.deposit_address,
      to: p.treasury,
      coin: p.coin_symbol,
      decimals: p.decimals,
      amountBaseUnits: amount,
      feeReservedBaseUnits: sweepFeeReserve(p.coin_symbol),
    },
    now,
  );
  return row !== null;
}

/**
 * For `outgoing_transfers o` joined to its store `s`: the transfer stops a new one being planned
 * for the same money — it is not failed, or it failed and may not be tried again yet (a transient
 * failure before its retry_at; a permanent one to the treasury the store still has).
 */
function blocksReplanning(now: Date) {
  return sql.fragment`(o.state <> 'failed'
    or (o.failure_kind = 'transient' and o.retry_at > ${sql.timestamp(now)})
    or (o.failure_kind is distinct from 'transient' and o.to_address = s.treasury))`;
}

const dueRow = z.object({ payment_id: z.string(), coin_symbol: z.string(), decimals: z.number() });

/**
 * The recurring planner: sweeps for completed payments whose store got a treasury after they
 * completed, and held money whose REFUND_HOLD_DAYS have passed (counted from the last money that
 * reached the deposit; dust below TON_FEE_RESERVE_BASE_UNITS stays). A payment whose sweep failed for
 * good is not planned again (failure_kind permanent). Returns how many it planned.
 */
export async function planDueSweeps(pool: DatabasePool, options: { holdDays: number; now: Date; log?: Logger }): Promise<number> {
  const { now } = options;
  let planned = 0;
  // A sweep that failed stops the next one, unless it failed for a passing reason and its retry
  // time came, or it failed for good and the treasury has changed since (the merchant mended it).
  const unswept = await pool.anyFirst(sql.type(z.object({ id: z.string() }))`
    select p.id from payments p join stores s on s.id = p.store_id
    where p.status = 'completed' and s.treasury is not null and p.coin_symbol is not null
      -- Paid to the treasury itself: nothing to sweep, ever.
      and p.settlement = 'deposit'
      -- A sale inside its refund window waits; after it, planPaymentSweep asks deposit_money what
      -- refunds left of it, once: a sale found with nothing above the dust line (and nothing in
      -- flight) is marked settled and never asked again, so this set does not grow for ever.
      and (p.refundable_until is null or (p.refundable_until <= ${sql.timestamp(now)} and p.sale_sweep_settled_at is null))
      and not exists (select 1 from outgoing_transfers o where o.payment_id = p.id and o.kind = 'sweep' and o.reason = 'payment'
                      and ${blocksReplanning(now)})
    limit 500
  `);
  for (const id of unswept) {
    if (await sweepSaleAfterWindow(pool, id, now)) planned += 1;
  }
  const heldSince = new Date(now.getTime() - options.holdDays * 86_400_000);
  const held = await pool.any(sql.type(dueRow)`
    select p.id as payment_id, m.coin_symbol, m.decimals from payments p join stores s on s.id = p.store_id
    cross join lateral deposit_money(p.id) m
    where s.treasury is not null and p.status in ('completed', 'expired', 'cancelled') and p.settlement = 'deposit'
      -- Only deposits that got money beyond an exact payment are worth asking (most get none).
      and exists (select 1 from transfers t where t.payment_id = p.id and ${IS_CREDITED}
                  and (p.status <> 'completed' or t.effect not in ('partial', 'completed')))
      and m.refundable > 0 and m.last_money_at < ${sql.timestamp(heldSince)}
      and not exists (select 1 from outgoing_transfers o where o.payment_id = p.id and o.coin_symbol = m.coin_symbol and o.reason = 'held_money'
                      and o.state = 'failed' and ${blocksReplanning(now)})
  `);
  for (const row of held) {
    const done = await pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`select 1 from payments where id = ${row.payment_id} for update`);
      const p = (await paymentToPlan(tx, row.payment_id))!;
      if (p.treasury === null || p.deposit_address === null) return false;
      const amount = await refundableBaseUnits(tx, row.payment_id, row.coin_symbol);
      if (amount <= 0n) return false;
      if (row.coin_symbol === 'TON' && amount < TON_FEE_RESERVE_BASE_UNITS) return false;
      const plan: OutgoingPlan = {
        kind: 'sweep',
        reason: 'held_money',
        paymentId: p.id,
        storeId: p.store_id,
        from: p.deposit_address,
        to: p.treasury,
        coin: row.coin_symbol,
        decimals: row.decimals,
        amountBaseUnits: amount,
        feeReservedBaseUnits: sweepFeeReserve(row.coin_symbol),
      };
      return (await planOutgoing(tx, plan, now)) !== null;
    });
    if (done) planned += 1;
  }
  planned += await planFinalSweeps(pool, { now, heldSince });
  if (planned > 0) options.log?.info({ planned }, 'sweeps planned');
  return planned;
}

const settledDeposit = z.object({ id: z.string(), gas_wallet: z.string().nullable() });

/**
 * The deposits' final sweeps (issue 29 item 4: no owner's money stays below the dust line for
 * ever): a deposit of a settled payment (wallet v5, the store has a treasury) that got money, with
 * nothing planned or in flight and no money for REFUND_HOLD_DAYS, still holding dust —
 * the customer's (under the 0.01 TON line, so never swept as held money on its own), the merchant's
 * change, Kassa's gas — gets one closing message: closing.ts finalSweep names the primary (the
 * largest share) and the signer pays the others beside it. A deposit holding nothing worth a
 * message is marked (payments.deposit_settled_at) and asked again only once money arrives after.
 */
async function planFinalSweeps(pool: DatabasePool, args: { now: Date; heldSince: Date }): Promise<number> {
  const { now } = args;
  const candidates = await pool.any(sql.type(settledDeposit)`
    select p.id, (select g.address from gas_wallets g where g.network = d.network) as gas_wallet
    from payments p join stores s on s.id = p.store_id join deposit_addresses d on d.payment_id = p.id
    where p.status = any(${sql.array([...SETTLED_PAYMENT_STATUSES], 'text')}) and s.treasury is not null and d.derivation = 'v5r1-1'
      and (p.refundable_until is null or p.refundable_until <= ${sql.timestamp(now)})
      and (p.deposit_settled_at is null or exists (select 1 from transfers t where t.payment_id = p.id and t.recorded_at > p.deposit_settled_at))
      and exists (select 1 from transfers t where t.payment_id = p.id)
      and not exists (select 1 from outgoing_transfers o where o.from_address = d.address
                      and (o.state in ('planned', 'sent') or (o.state = 'failed' and o.failed_at > ${sql.timestamp(now)} - interval '1 day')))
      and not exists (select 1 from transfers t where t.payment_id = p.id and t.recorded_at > ${sql.timestamp(args.heldSince)})
    order by p.deposit_settled_at nulls first, p.created_at
    limit 200
  `);
  let planned = 0;
  for (const candidate of candidates) {
    const done = await pool.transaction(async (tx) => {
      await tx.query(sql.unsafe`select 1 from payments where id = ${candidate.id} for update`);
      const p = (await paymentToPlan(tx, candidate.id))!;
      if (p.treasury === null || p.deposit_address === null) return false;
      const money = await depositMoney(tx, candidate.id);
      const ton = money.find((row) => row.coin_symbol === 'TON');
      // Another coin still there, money held toward the payment, refundable TON the held-money sweep
      // takes, or gas promised to a transfer: not the final sweep's (yet).
      const elsewhere = holdsOtherCoin(money);
      // Dust only: the customer's refundable TON and the merchant's from the 0.01 line on are the
      // held-money sweep's and the sale sweep's (a sale inside its refund window is not touched).
      const dust = (value: string) => BigInt(value) < TON_FEE_RESERVE_BASE_UNITS;
      if (!ton || elsewhere || BigInt(ton.held) > 0n || !dust(ton.refundable) || !dust(ton.merchant_unswept) || ton.gas !== ton.gas_free) return false;
      const primary = finalSweep({
        customer: BigInt(ton.refundable),
        merchant: BigInt(ton.merchant_unswept),
        gas: BigInt(ton.gas ?? '0') > 0n ? BigInt(ton.gas!) : 0n,
        treasury: p.treasury,
        gasWallet: candidate.gas_wallet,
      });
      if (primary === null) {
        await tx.query(sql.typeAlias('void')`update payments set deposit_settled_at = ${sql.timestamp(now)} where id = ${candidate.id}`);
        return false;
      }
      const plan: OutgoingPlan = {
        kind: 'sweep',
        reason: primary.reason,
        paymentId: p.id,
        storeId: p.store_id,
        from: p.deposit_address,
        to: primary.to,
        coin: 'TON',
        decimals: 9,
        amountBaseUnits: primary.amount,
        feeReservedBaseUnits: 0n,
        finalSweep: true,
      };
      return (await planOutgoing(tx, plan, now)) !== null;
    });
    if (done) planned += 1;
  }
  return planned;
}
