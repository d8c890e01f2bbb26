// The payment commands: one per transition of docs/API.md's Payment statuses, side by side —
// create (→ created, or → pending with its method preselected), choose the method (created →
// pending), cancel, expire (one payment, and every due payment at once), complete (pending →
// completed). Each follows the same rule:
//   1. lock the payment row (`lockPayment`, select … for update; the bulk expiry's update locks
//      the rows it changes, and a create has no row yet);
//   2. ask the pure transition function (transitions.ts) and refuse what it rejects;
//   3. write the status the transition returned;
//   4. enqueue follow-up work in the same transaction: the webhook's delivery and the store's events
//      (webhooks/), and what the parts built on payments add through the caller's hooks (onCompleted,
//      onExpired: a sale's sweep, a subscription's credit);
//   5. count the transition once the transaction has committed (`countTransition`): a rolled-back
//      transaction, or an attempt slonik retried, counts nothing.
// The caller owns the transaction of the commands that take a `tx`.
import crypto from 'node:crypto';
import { Address } from '@ton/core';
import { friendlyAddress } from '../chain/addresses.ts';
import {
  afterCommit,
  inOneStatement,
  insertRow,
  prepared,
  sql,
  z,
  type DatabasePool,
  type Db,
  type FragmentSqlToken,
  type ValueExpression,
} from '../db/pool.ts';
import { KassaError, paymentNotFound } from '../errors.ts';
import { paymentTransitions } from '../metrics.ts';
import { enqueueWebhookDelivery } from '../webhooks/deliveries.ts';
import { chooseMethod, depositWrites, type CommandConfig, type MethodChoice, type MethodPrefetch } from './methodChoice.ts';
import { expiredEventCtes, paymentEvents, pendingEventCtes } from './events.ts';
import { findStoreMethod, type MethodRow } from './methods.ts';
import { referenceFromBytes } from './reference.ts';
import { findPaymentView, type PaymentView, type StorePayment } from './view.ts';
import { PAYMENT_STATUSES, transition, type PaymentStatus, type Rejection } from './transitions.ts';

const REJECTION_ERRORS: Record<Rejection, () => KassaError> = {
  payment_not_cancellable: () => new KassaError('payment_not_cancellable'),
  payment_expired: () => new KassaError('payment_expired'),
  method_already_selected: () => new KassaError('method_already_selected'),
  payment_not_open: () => new KassaError('payment_not_open'),
  paid_too_late: () => new KassaError('payment_not_open'),
  not_due: () => new KassaError('payment_not_open'),
};

const rejectionError = (reason: Rejection): KassaError => REJECTION_ERRORS[reason]();

const lockedRow = z.object({
  id: z.string(),
  store_id: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  amount: z.string(),
  currency: z.string(),
  expires_at: z.date(),
  coin_symbol: z.string().nullable(),
  coin_amount: z.string().nullable(),
  /** The chosen coin's decimals (null before a method is chosen). */
  coin_decimals: z.number().nullable(),
  /** deposit or treasury: as the payment was created. */
  settlement: z.enum(['deposit', 'treasury']),
});
type LockedPayment = z.infer<typeof lockedRow>;

/** Step 1 of every command: the payment row, locked until the transaction ends. */
export async function lockPayment(tx: Db, paymentId: string): Promise<LockedPayment | null> {
  return tx.maybeOne(sql.type(lockedRow)`
    select p.id, p.store_id, p.status, p.amount::text as amount, p.currency, p.expires_at,
           p.coin_symbol, p.coin_amount::text as coin_amount, c.decimals::int as coin_decimals, p.settlement
    from payments p left join coins c on c.symbol = p.coin_symbol
    where p.id = ${paymentId} for update of p
  `);
}

/** Step 5 of every command: counts `n` payments reaching `to`, once the transaction commits (at once outside one). */
function countTransition(db: Db, to: PaymentStatus, n = 1): void {
  afterCommit(db, () => paymentTransitions.inc({ to }, n));
}

export interface PaymentDraft {
  amount: string;
  currency: string;
  method: MethodRow | null;
  /** The request field that chose the method, for errors. */
  methodParam: string;
  /** CRYPTO invoices give the coin amount itself. */
  fixedCoinAmount: string | null;
  ttlSeconds: number;
  orderId: string | null;
  description: string | null;
  metadata: Record<string, string>;
  webhookUrl: string | null;
  returnUrl: string | null;
  /** payments / invoice: the API's two creates; payment_link: a link's visit; dashboard: a one-off payment made there. */
  createdVia: 'payments' | 'invoice' | 'payment_link' | 'dashboard' | 'subscription';
  invoiceType: 'FIAT' | 'CRYPTO' | null;
  fiatCurrency: string | null;
  /** The payment link whose visit creates the payment (src/paymentLinks/), else absent. */
  paymentLinkId?: string;
  /** The subscription whose period the payment pays (the billing engine's renewal, src/subscriptions/), else absent. */
  subscriptionId?: string;
  /** The latest the payment may expire (its link's expiresAt): expiresAt is the earlier of this and now + ttl. */
  expiresBy?: Date;
  /** What fixing `method` needs, when the draft's own statement already read it (both drafts read it with the catalogue: `readCatalogue` in drafts.ts). */
  prefetched?: MethodPrefetch;
  /** The store's Telegram Mini App ("<bot>/<app>", read with the catalogue) for the view's telegramURL; null: none. */
  telegramMiniApp: string | null;
  /** The store's treasury (raw) when the store settles there (read with the catalogue): the payment is paid there by its reference; null: a deposit wallet. */
  settlementTreasury: string | null;
}

/** A create decided before anything is written: the payment's id and status, its method's choice, and its writes. */
interface PaymentPlan {
  paymentId: string;
  status: PaymentStatus;
  choice: MethodChoice | null;
  expiresAt: Date;
  /** Treasury settlement: where the customer pays and the reference that tells the payment apart; null: a deposit wallet. */
  settlement: TreasurySettlement | null;
  /** The payments row's columns and values, in the same order. */
  columns: FragmentSqlToken;
  values: ValueExpression[];
}

/** A payment settled to its store's treasury: the treasury as stored and as shown, and its reference. */
interface TreasurySettlement {
  address: string;
  friendly: string;
  reference: string;
}

/**
 * A reference no payment that can still be paid has (payments_reference_while_open): drawn at random
 * (40 bits), drawn again on a clash. The unique index stands behind the look: two creates drawing the
 * same reference at the same moment (one in a million million) would see the second refused, never
 * two payments with one reference.
 */
async function drawReference(db: Db): Promise<string> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const reference = referenceFromBytes(crypto.randomBytes(5));
    if (reference === null) continue;
    const taken = await db.exists(prepared(sql.unsafe`select 1 from payments where reference = ${reference} and status in ('created', 'pending')`));
    if (!taken) return reference;
  }
  throw new Error('no free payment reference after 20 draws');
}

async function treasurySettlement(db: Db, config: CommandConfig, treasury: string | null): Promise<TreasurySettlement | null> {
  if (treasury === null) return null;
  return { address: treasury, friendly: friendlyAddress(Address.parse(treasury), config.tonNetwork), reference: await drawReference(db) };
}

async function planPayment(tx: Db, config: CommandConfig, storeId: string, draft: PaymentDraft, now: Date): Promise<PaymentPlan> {
  const ttlEnd = now.getTime() + draft.ttlSeconds * 1000;
  const expiresAt = new Date(draft.expiresBy !== undefined ? Math.min(ttlEnd, draft.expiresBy.getTime()) : ttlEnd);
  const settlement = await treasurySettlement(tx, config, draft.settlementTreasury);
  let status: PaymentStatus = 'created';
  let choice: MethodChoice | null = null;
  if (draft.method) {
    // Preselected: the payment is born with its method, as a `created` one choosing it at once would be.
    const next = transition({ status, expiresAt }, { type: 'select_method' }, now);
    if (!next.ok) throw rejectionError(next.reason);
    status = next.to;
    choice = await chooseMethod(tx, config, draft, draft.method, now, {
      param: draft.methodParam,
      fixedCoinAmount: draft.fixedCoinAmount,
      prefetched: draft.prefetched,
      treasurySettled: settlement !== null,
    });
  }
  const paymentId = crypto.randomUUID();
  const columns = sql.fragment`(id, store_id, status, amount, currency, order_id, description, metadata, webhook_url, return_url,
                          created_via, invoice_type, fiat_currency, created_at, expires_at, payment_method_id, coin_symbol,
                          coin_amount, coin_amount_base_units, exchange_rate, exchange_rate_source, exchange_rate_at, method_selected_at, payment_link_id,
                          subscription_id, settlement, settlement_address, settlement_address_friendly, reference)`;
  const values: ValueExpression[] = [
    paymentId,
    storeId,
    status,
    draft.amount,
    draft.currency,
    draft.orderId,
    draft.description,
    sql.jsonb(draft.metadata),
    draft.webhookUrl,
    draft.returnUrl,
    draft.createdVia,
    draft.invoiceType,
    draft.fiatCurrency,
    sql.timestamp(now),
    sql.timestamp(expiresAt),
    choice?.method.id ?? null,
    choice?.method.coin_symbol ?? null,
    choice?.price.coinAmount ?? null,
    choice?.price.coinAmountBaseUnits ?? null,
    choice?.price.rate ?? null,
    choice?.price.source ?? null,
    choice ? sql.timestamp(choice.price.at) : null,
    choice ? sql.timestamp(now) : null,
    draft.paymentLinkId ?? null,
    draft.subscriptionId ?? null,
    settlement ? 'treasury' : 'deposit',
    settlement?.address ?? null,
    settlement?.friendly ?? null,
    settlement?.reference ?? null,
  ];
  return { paymentId, status, choice, expiresAt, settlement, columns, values };
}

/** The payment view of a payment just written (`findPaymentView` without reading it back): the row as stored, its method's coin and chain as read for the choice, its deposit (or treasury) as inserted, no transfers yet. */
function viewOfNew(row: InsertedPayment, choice: MethodChoice | null, telegramMiniApp: string | null, settlement: TreasurySettlement | null): PaymentView {
  const method = choice?.method ?? null;
  return {
    ...row,
    telegram_mini_app: telegramMiniApp,
    telegram_user_id: null,
    telegram_username: null,
    coin_name: method?.coin_name ?? null,
    coin_decimals: method?.coin_decimals ?? null,
    coin_kind: method?.coin_kind ?? null,
    chain_symbol: method?.chain_symbol ?? null,
    chain_name: method?.chain_name ?? null,
    address: choice?.deposit?.address ?? (choice && settlement ? settlement.address : null),
    address_friendly: choice?.deposit?.friendly ?? (choice && settlement ? settlement.friendly : null),
    transaction_hashes: [],
    received_base_units: '0',
    refunded_base_units: '0',
    sale_refunded_base_units: '0',
    transfer_effects: [],
  };
}

export async function createPayment(tx: Db, config: CommandConfig, storeId: string, draft: PaymentDraft, now: Date): Promise<PaymentView> {
  const plan = await planPayment(tx, config, storeId, draft, now);
  const insertPayment = sql.fragment`
    insert into payments ${plan.columns} ${insertRow(plan.values)}
    returning id, store_id, status, amount::text as amount, currency, order_id, description, metadata, webhook_url, return_url,
              payment_link_id, subscription_id, payment_method_id, coin_symbol, coin_amount::text as coin_amount, created_at, expires_at, method_selected_at, paid_at,
              settlement, reference
  `;
  // The payment, its deposit and its accounts: one statement. No job is added for expiry: it is one
  // statement for every due payment (`expireDuePayments`), so a create NOTIFYs only when one of the
  // store's webhook endpoints hears payment.pending (below).
  const writes = plan.choice ? depositWrites(config, plan.paymentId, plan.choice, now) : [];
  // Not parsed by a schema (the hot path of create): the columns are the payments row's own, typed
  // by node-postgres as paymentView checks them when the view is read.
  const row = (await tx.one(prepared(sql.unsafe`${inOneStatement(writes, insertPayment)}`))) as InsertedPayment;
  // The view without reading it back. A shortcut kept for what it buys (issue 23, docs/PERFORMANCE.md):
  // reading the view back through its one reader is a 7th round trip to a create's 6, and cost a
  // median 15 % more of Kassa's CPU per create than this in the same bench/api rounds.
  if (plan.status === 'pending') await paymentEvents(tx, 'payment.pending', [plan.paymentId], now);
  countTransition(tx, plan.status);
  return viewOfNew(row, plan.choice, draft.telegramMiniApp, plan.settlement);
}

/** The gate of `createPaymentOnce`'s statement: the WITH item that lets its writes through. */
const GATE = 'gate';

/**
 * POST /v1/payments in one write after its one read (docs/PERFORMANCE.md, issue 34): the payment,
 * its deposit and its accounts in one statement that commits by itself, behind a gate — the first
 * item of the statement, `gateOf(view)`: typically the idempotency key's row taken with the answer it
 * will replay (src/idempotency.ts's `takeKeySql`), which takes nothing when the key is taken (a
 * concurrent twin: it waits for the twin's commit, as a transaction's insert of the key did) or the
 * token's row refuses it. Nothing is written then, and the answer is null: the caller goes the
 * transaction's way (`idempotent` + `createPayment`), which replays, refuses or creates as before.
 *
 * The view is made before the write, so that the key's row can hold the answer: the row's values as
 * given, with the amount and metadata as PostgreSQL stores them (`stored`, read back by the create's
 * read: numeric's text, jsonb's key order) and the coin amount as priced (a plain decimal, which
 * numeric keeps as written). test/payments/create-once.test.ts pins that view to the stored
 * payment's (`findPaymentView`) for the forms that differ.
 */
export async function createPaymentOnce(
  db: Db,
  config: CommandConfig,
  storeId: string,
  draft: PaymentDraft,
  now: Date,
  stored: { amount: string; metadata: Record<string, string> },
  gateOf: (view: PaymentView) => FragmentSqlToken,
): Promise<PaymentView | null> {
  const plan = await planPayment(db, config, storeId, draft, now);
  const choice = plan.choice;
  const view = viewOfNew(
    {
      id: plan.paymentId,
      store_id: storeId,
      status: plan.status,
      amount: stored.amount,
      currency: draft.currency,
      order_id: draft.orderId,
      description: draft.description,
      metadata: stored.metadata,
      webhook_url: draft.webhookUrl,
      return_url: draft.returnUrl,
      payment_link_id: draft.paymentLinkId ?? null,
      subscription_id: draft.subscriptionId ?? null,
      payment_method_id: choice?.method.id ?? null,
      coin_symbol: choice?.method.coin_symbol ?? null,
      coin_amount: choice?.price.coinAmount ?? null,
      created_at: now,
      expires_at: plan.expiresAt,
      method_selected_at: choice ? now : null,
      paid_at: null,
      settlement: plan.settlement ? 'treasury' : 'deposit',
      reference: plan.settlement?.reference ?? null,
    },
    choice,
    draft.telegramMiniApp,
    plan.settlement,
  );
  const writes = [
    sql.fragment`${sql.identifier([GATE])} as (${gateOf(view)})`,
    ...(choice ? depositWrites(config, plan.paymentId, choice, now, GATE) : []).map(
      (write, index) => sql.fragment`${sql.identifier([`write_${index + 1}`])} as (${write})`,
    ),
    sql.fragment`payment as (insert into payments ${plan.columns} ${insertRow(plan.values, GATE)} returning 1)`,
    // payment.pending for the store's webhook endpoints, behind the same gate (`createPayment` records it in its transaction).
    ...(plan.status === 'pending'
      ? [
          pendingEventCtes(
            { id: plan.paymentId, storeId, amount: stored.amount, currency: draft.currency, metadata: stored.metadata, orderId: draft.orderId },
            GATE,
            now,
          ),
        ]
      : []),
  ];
  const events = plan.status === 'pending' ? sql.fragment`, (select count(*) from event_jobs) as events` : sql.fragment``;
  const { written } = (await db.one(
    prepared(sql.unsafe`with ${sql.join(writes, sql.fragment`, `)} select count(*)::int as written${events} from payment`),
  )) as { written: number };
  if (written === 0) return null;
  countTransition(db, plan.status);
  return view;
}

/** The columns of `paymentView` that the payments row itself holds. */
type InsertedPayment = Omit<
  PaymentView,
  | 'coin_name'
  | 'coin_decimals'
  | 'coin_kind'
  | 'chain_symbol'
  | 'chain_name'
  | 'address'
  | 'address_friendly'
  | 'transaction_hashes'
  | 'received_base_units'
  | 'refunded_base_units'
  | 'sale_refunded_base_units'
  | 'transfer_effects'
  | 'telegram_mini_app'
  | 'telegram_user_id'
  | 'telegram_username'
>;

/** The customer chooses a method at checkout (public: the payment id is the capability). */
export async function selectMethod(pool: DatabasePool, config: CommandConfig, paymentId: string, methodId: string, now: Date): Promise<PaymentView> {
  return pool.transaction(async (tx) => {
    const payment = await lockPayment(tx, paymentId);
    if (!payment) throw paymentNotFound();
    const method = await findStoreMethod(tx, payment.store_id, { id: methodId });
    if (!method) throw new KassaError('payment_method_not_found', { param: 'paymentMethodID' });
    const next = transition({ status: payment.status, expiresAt: payment.expires_at }, { type: 'select_method' }, now);
    if (!next.ok) throw rejectionError(next.reason);
    // A payment keeps the settlement it was created with, whatever its store's is now.
    const choice = await chooseMethod(tx, config, payment, method, now, { param: 'paymentMethodID', treasurySettled: payment.settlement === 'treasury' });
    const fixMethod = sql.fragment`
      update payments set
        status = ${next.to}, payment_method_id = ${method.id}, coin_symbol = ${method.coin_symbol},
        coin_amount = ${choice.price.coinAmount}, coin_amount_base_units = ${choice.price.coinAmountBaseUnits}, exchange_rate = ${choice.price.rate}, exchange_rate_source = ${choice.price.source},
        exchange_rate_at = ${sql.timestamp(choice.price.at)}, method_selected_at = ${sql.timestamp(now)}
      where id = ${paymentId}
    `;
    await tx.query(prepared(sql.unsafe`${inOneStatement(depositWrites(config, paymentId, choice, now), fixMethod)}`));
    await paymentEvents(tx, 'payment.pending', [paymentId], now);
    countTransition(tx, next.to);
    return (await findPaymentView(tx, paymentId))!;
  });
}

/**
 * Merchant cancel of the store's payment: created/pending → cancelled; cancelled stays; completed/expired → 409.
 * `onCancelled`: what else the cancel sets going, as expiry's `onEnded` (a subscription's payment credits the money it got).
 */
export async function cancelPayment(tx: Db, storePayment: Pick<StorePayment, 'id'>, now: Date, onCancelled?: OnEnded): Promise<PaymentView> {
  const paymentId = storePayment.id;
  const payment = await lockPayment(tx, paymentId);
  if (!payment) throw paymentNotFound();
  const next = transition({ status: payment.status, expiresAt: payment.expires_at }, { type: 'cancel' }, now);
  if (!next.ok) throw rejectionError(next.reason);
  if (next.changed) {
    await tx.query(sql.typeAlias('void')`update payments set status = ${next.to}, cancelled_at = ${sql.timestamp(now)} where id = ${paymentId}`);
    await paymentEvents(tx, 'payment.cancelled', [paymentId], now);
    if (onCancelled) await runOnEnded(tx, paymentId, onCancelled);
    countTransition(tx, next.to);
  }
  return (await findPaymentView(tx, paymentId))!;
}

/** `onEnded` for the one payment `paymentId` just ended (expired or cancelled), in the caller's transaction. */
async function runOnEnded(tx: Db, paymentId: string, onEnded: OnEnded): Promise<void> {
  await tx.query(sql.unsafe`
    with due as (select id, store_id, subscription_id from payments where id = ${paymentId}), also as (${onEnded}) select count(*) from also
  `);
}

type ExpireOutcome = { outcome: 'expired' | 'not_open' | 'not_due' | 'missing'; status?: PaymentStatus };

/**
 * Expires one payment now, as the sandbox's "expire" control does (the caller has checked the
 * chain is read up to `now`). Usually payments expire in bulk (`expireDuePayments`). Safe to run twice.
 */
export async function expirePayment(pool: DatabasePool, paymentId: string, now: Date, onExpired?: OnEnded): Promise<ExpireOutcome> {
  return pool.transaction(async (tx) => {
    const payment = await lockPayment(tx, paymentId);
    if (!payment) return { outcome: 'missing' as const };
    const next = transition({ status: payment.status, expiresAt: payment.expires_at }, { type: 'expire' }, now);
    if (!next.ok) return { outcome: next.reason === 'not_due' ? ('not_due' as const) : ('not_open' as const), status: payment.status };
    await tx.query(sql.typeAlias('void')`update payments set status = ${next.to}, expired_at = ${sql.timestamp(now)} where id = ${paymentId}`);
    await paymentEvents(tx, 'payment.expired', [paymentId], now);
    if (onExpired) await runOnEnded(tx, paymentId, onExpired);
    countTransition(tx, next.to);
    return { outcome: 'expired' as const, status: next.to };
  });
}

/**
 * Expires every due payment in one statement; returns how many. The rule: a `created` payment is
 * due at expiresAt on the wall clock (`now`); a `pending` one once the chain reader has booked every
 * transaction made before its expiresAt (`chainSettledAt`, the chain's clock:
 * chain_reader.settled_until), so money sent in time completes it even when its block is read late;
 * an ended payment never (`pastExpiry` is the boundary). The status written is the transition's for
 * a due open payment. The chain reader runs it after every step; no job per payment. `onExpired`:
 * what else expiry sets going, in the same statement (a subscription's payment credits the money
 * it got before its expiry).
 */
export async function expireDuePayments(db: Db, clocks: { now: Date; chainSettledAt: Date | null }, onExpired?: OnEnded): Promise<number> {
  const next = transition({ status: 'created', expiresAt: clocks.now }, { type: 'expire' }, clocks.now);
  if (!next.ok) throw new Error(`the transition refuses to expire a due payment (${next.reason})`);
  const settled = clocks.chainSettledAt === null ? null : sql.timestamp(clocks.chainSettledAt);
  // The range on expires_at bounds the index scan to what can be due (never every open payment).
  const bound = new Date(Math.max(clocks.now.getTime(), clocks.chainSettledAt?.getTime() ?? 0));
  // The statuses and their payment.expired events (eventCtes: the deliveries and their jobs) in one statement.
  const { expired } = await db.one(sql.type(z.object({ expired: z.number(), jobs: z.number(), also: z.number() }))`
    with due as (
      update payments set status = ${next.to}, expired_at = ${sql.timestamp(clocks.now)}
      where status in ('created', 'pending') and expires_at <= ${sql.timestamp(bound)}
        and ((status = 'created' and expires_at <= ${sql.timestamp(clocks.now)})
          or (status = 'pending' and ${settled === null ? sql.fragment`false` : sql.fragment`expires_at <= ${settled}`}))
      returning id, store_id, status, amount, currency, metadata, order_id, expires_at, subscription_id
    ),
    ${expiredEventCtes(clocks.now)},
    also as (${onExpired ?? sql.fragment`select 1 where false`})
    select (select count(*) from due)::int as expired, (select count(*) from event_jobs)::int as jobs, (select count(*) from also)::int as also
  `);
  if (expired > 0) countTransition(db, next.to, expired);
  return expired;
}

/**
 * What else expiry (and a merchant's cancel) sets going, in the ending statement: a `select` over
 * `due`, the payments just expired or cancelled (id, store_id, subscription_id), each of its rows a
 * job it adds (`graphile_worker.add_job`; the statement counts them, so the select runs). A
 * fragment, so that payments/ imports nothing of the parts built on it (subscriptions/engine.ts
 * CREDIT_PART_PAID).
 */
type OnEnded = FragmentSqlToken;

/** What else completion sets going, in the completing transaction (see `completePayment`). */
export type OnCompleted = (tx: Db, paymentId: string, now: Date) => Promise<unknown>;

/**
 * pending → completed, when the transfer that reaches the payment's coin amount has been booked
 * (payments/transfers.ts's `recordTransfer`, which locked the row with `lockPayment` in the same
 * transaction). Writes the status and paidAt (the reaching transfer's chain time), records and
 * enqueues the `completed` webhook, then runs `onCompleted` — the chain reader plans the sweep to
 * the treasury (treasury/sweeps.ts); a hook, so that payments/ imports nothing of the parts built
 * on it. Returns whether the payment completed (the transition may refuse: paid too late, not pending).
 */
export async function completePayment(tx: Db, payment: LockedPayment, paidAt: Date, now: Date, onCompleted?: OnCompleted): Promise<boolean> {
  const next = transition({ status: payment.status, expiresAt: payment.expires_at }, { type: 'confirm', paidAt }, now);
  if (!next.ok || !next.changed) return false;
  // The Telegram user (Mini App) is who had opened it when the paying transfer was made: the last
  // opening by its on-chain time (whole seconds, so an opening within that second counts), or none —
  // never someone who opened it after the money was sent.
  await tx.query(sql.typeAlias('void')`
    update payments p set status = ${next.to}, paid_at = ${sql.timestamp(paidAt)},
      telegram_user_id = o.telegram_user_id, telegram_username = o.telegram_username, telegram_user_at = o.opened_at
    from (select 1) as one
    left join lateral (
      select telegram_user_id, telegram_username, opened_at from payment_telegram_openings
      where payment_id = ${payment.id} and opened_at < ${sql.timestamp(paidAt)} + interval '1 second'
      order by opened_at desc limit 1
    ) as o on true
    where p.id = ${payment.id}
  `);
  await enqueueWebhookDelivery(tx, payment.id, 'completed', now);
  await paymentEvents(tx, 'payment.completed', [payment.id], now);
  await onCompleted?.(tx, payment.id, now);
  countTransition(tx, next.to);
  return true;
}
