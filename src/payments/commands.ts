// Payment commands. Each locks the payment row (select … for update), asks the transition
// function, writes, and enqueues follow-up work in the same transaction.
import crypto from 'node:crypto';
import { Address, Cell } from '@ton/core';
import { standardJettonWalletAddress } from '../chain/addresses.ts';
import type { Config } from '../config.ts';
import { inOneStatement, prepared, sql, z, type DatabasePool, type Db, type FragmentSqlToken } from '../db/pool.ts';
import { ApiError, notFound, paymentNotFound } from '../errors.ts';
import { depositAddressInsert, depositPublicKey, depositWalletAt, reserveDepositWallet, type ReservedDeposit } from './deposit.ts';
import { findStoreMethod, type MethodRow } from './methods.ts';
import { findPaymentView, type PaymentView } from './view.ts';
import { priceFor, priceFromRow, type Price } from './pricing.ts';
import type { StoredRate } from '../rates/rates.ts';
import { PAYMENT_STATUSES, transition, type PaymentStatus, type Rejection } from './transitions.ts';
import { paymentTransitions } from '../metrics.ts';

export type CommandConfig = Pick<Config, 'masterKey' | 'depositPublicKey' | 'tonNetwork'>;

const REJECTION_ERRORS: Record<Rejection, () => ApiError> = {
  payment_not_cancellable: () => new ApiError('invalid_request_error', 'payment_not_cancellable', 'Only created and pending payments can be cancelled.'),
  payment_expired: () => new ApiError('invalid_request_error', 'payment_expired', 'The payment has expired.'),
  method_already_selected: () => new ApiError('invalid_request_error', 'method_already_selected', 'A payment method was already chosen for this payment.'),
  payment_not_open: () => new ApiError('invalid_request_error', 'payment_not_open', 'The payment is no longer open.'),
  paid_too_late: () => new ApiError('invalid_request_error', 'payment_not_open', 'The payment is no longer open.'),
  not_due: () => new ApiError('invalid_request_error', 'payment_not_open', 'The payment is not due to expire yet.'),
};

export const rejectionError = (reason: Rejection): ApiError => REJECTION_ERRORS[reason]();

const lockedRow = z.object({
  id: z.string(),
  store_id: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  amount: z.string(),
  currency: z.string(),
  expires_at: z.date(),
});
type LockedPayment = z.infer<typeof lockedRow>;

async function lockPayment(tx: Db, paymentId: string, storeId?: string): Promise<LockedPayment | null> {
  const store = storeId === undefined ? sql.fragment`true` : sql.fragment`store_id = ${storeId}`;
  return tx.maybeOne(sql.type(lockedRow)`
    select id, store_id, status, amount::text as amount, currency, expires_at from payments
    where id = ${paymentId} and ${store} for update
  `);
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
  createdVia: 'payments' | 'invoice';
  invoiceType: 'FIAT' | 'CRYPTO' | null;
  fiatCurrency: string | null;
  /** What fixing `method` needs, when the draft's own statement already read it (`draftFromPayment` with a network). */
  prefetched?: MethodPrefetch;
}

/** The reads of `chooseMethod`, made beforehand: the pair's rate row, the coin's jetton master, a derivation index. */
export interface MethodPrefetch {
  rate: StoredRate | null;
  jetton: { master_address: string; wallet_code: Buffer | null } | null;
  derivationIndex: number;
}

/** What fixing a method decides before anything is written: the price and the deposit wallet. */
interface MethodChoice {
  method: MethodRow;
  price: Price;
  /** The coin's jetton master on this network; null for the native coin. */
  master: string | null;
  /** Its standard wallet code when known (the deposit's jetton wallet is then computed offline). */
  walletCode: Buffer | null;
  deposit: ReservedDeposit;
}

/**
 * Prices `amount currency` in the method's coin and reserves the payment's deposit wallet (docs/API.md,
 * Payment statuses: created → pending). Writes nothing but the
 * derivation sequence.
 */
async function chooseMethod(
  tx: Db,
  config: CommandConfig,
  payment: { amount: string; currency: string },
  method: MethodRow,
  now: Date,
  options: { param: string; fixedCoinAmount?: string | null; prefetched?: MethodPrefetch | undefined },
): Promise<MethodChoice> {
  const { prefetched } = options;
  const price = options.fixedCoinAmount
    ? { coinAmount: options.fixedCoinAmount, rate: '1', source: 'identity', at: now }
    : prefetched
      ? priceFromRow(payment.amount, payment.currency, method, now, prefetched.rate, options.param)
      : await priceFor(tx, payment.amount, payment.currency, method, now, options.param);
  const jetton =
    method.coin_kind !== 'jetton'
      ? null
      : prefetched
        ? prefetched.jetton
        : await tx.maybeOne(
            prepared(sql.type(z.object({ master_address: z.string(), wallet_code: z.instanceof(Buffer).nullable() }))`
        select master_address, wallet_code from jetton_masters where coin_symbol = ${method.coin_symbol} and network = ${config.tonNetwork}
      `),
          );
  const master = jetton?.master_address ?? null;
  if (method.coin_kind === 'jetton' && master === null) {
    throw new ApiError(
      'invalid_request_error',
      'unsupported_payment_method',
      `${method.coin_symbol} has no jetton master configured on ${config.tonNetwork}; it cannot be paid here yet.`,
      { param: options.param },
    );
  }
  const publicKey = await depositPublicKey(tx, config);
  const deposit = prefetched
    ? depositWalletAt(publicKey, prefetched.derivationIndex, config.tonNetwork)
    : await reserveDepositWallet(tx, publicKey, config.tonNetwork);
  return { method, price, master, walletCode: jetton?.wallet_code ?? null, deposit };
}

/**
 * The deposit's jetton wallet of the chosen coin: computed offline when the master's wallet code
 * is known, else `pending:…` until the chain reader asks the master (before it reads on).
 */
function jettonWalletOf(paymentId: string, choice: MethodChoice): string {
  if (choice.master === null) throw new Error('not a jetton');
  if (choice.walletCode === null) return `pending:${paymentId}:${choice.method.coin_symbol}`;
  const code = walletCodeCell(choice.walletCode);
  return standardJettonWalletAddress(Address.parse(choice.master), Address.parse(choice.deposit.address), code).toRawString();
}

/** Parsed jetton wallet codes by their bytes (one per coin and network). */
const walletCodes = new Map<string, Cell>();

/**
 * A wallet code as a cell, parsed once per process: parsing a code's BOC (and hashing its cells)
 * cost about a tenth of a USDT create's CPU, more than the rest of its jetton wallet's derivation.
 */
function walletCodeCell(code: Buffer): Cell {
  const key = code.toString('base64');
  let cell = walletCodes.get(key);
  if (cell === undefined) {
    cell = Cell.fromBoc(code)[0]!;
    if (walletCodes.size < 100) walletCodes.set(key, cell);
  }
  return cell;
}

/**
 * The writes for a payment that now has its method: its deposit address, and the accounts the
 * chain reader keeps — the deposit itself and, for a jetton, the deposit's jetton wallet of that
 * coin. Sent with the payment's own write as one statement (`inOneStatement`).
 */
function depositWrites(config: CommandConfig, paymentId: string, choice: MethodChoice, now: Date): FragmentSqlToken[] {
  const coin = choice.method.coin_symbol;
  const jettonWallet =
    choice.master === null
      ? sql.fragment``
      : sql.fragment`, (${jettonWalletOf(paymentId, choice)}, ${paymentId}, 'jetton_wallet', ${coin}, ${choice.master}, ${sql.timestamp(now)})`;
  return [
    depositAddressInsert(paymentId, choice.deposit, config.tonNetwork),
    sql.fragment`
      insert into chain_watches (account, payment_id, kind, coin_symbol, jetton_master, created_at)
      values (${choice.deposit.address}, ${paymentId}, 'deposit', ${coin}, null, ${sql.timestamp(now)})${jettonWallet}
    `,
  ];
}

export async function createPayment(tx: Db, config: CommandConfig, storeId: string, draft: PaymentDraft, now: Date): Promise<PaymentView> {
  const expiresAt = new Date(now.getTime() + draft.ttlSeconds * 1000);
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
    });
  }
  const paymentId = crypto.randomUUID();
  const insertPayment = sql.fragment`
    insert into payments (id, store_id, status, amount, currency, order_id, description, metadata, webhook_url, return_url,
                          created_via, invoice_type, fiat_currency, created_at, expires_at, payment_method_id, coin_symbol,
                          coin_amount, exchange_rate, exchange_rate_source, exchange_rate_at, method_selected_at)
    values (${paymentId}, ${storeId}, ${status}, ${draft.amount}, ${draft.currency}, ${draft.orderId}, ${draft.description},
            ${sql.jsonb(draft.metadata)}, ${draft.webhookUrl}, ${draft.returnUrl}, ${draft.createdVia}, ${draft.invoiceType},
            ${draft.fiatCurrency}, ${sql.timestamp(now)}, ${sql.timestamp(expiresAt)}, ${choice?.method.id ?? null},
            ${choice?.method.coin_symbol ?? null}, ${choice?.price.coinAmount ?? null}, ${choice?.price.rate ?? null},
            ${choice?.price.source ?? null}, ${choice ? sql.timestamp(choice.price.at) : null}, ${choice ? sql.timestamp(now) : null})
    returning id, store_id, status, amount::text as amount, currency, order_id, description, metadata, webhook_url, return_url,
              payment_method_id, coin_symbol, coin_amount::text as coin_amount, created_at, expires_at, method_selected_at, paid_at
  `;
  // The payment, its deposit and its accounts: one statement. No job is added: expiry is one
  // statement for every due payment (payments/expiry.ts), so a create never NOTIFYs.
  const writes = choice ? depositWrites(config, paymentId, choice, now) : [];
  // Not parsed by a schema (the hot path of create): the columns are the payments row's own, typed
  // by node-postgres as paymentView checks them when the view is read.
  const row = (await tx.one(prepared(sql.unsafe`${inOneStatement(writes, insertPayment)}`))) as InsertedPayment;
  // The payment view (`findPaymentView`) without reading it back: the row as stored, its method's
  // coin and chain as read for the choice, its deposit as inserted, no transfers yet.
  const method = choice?.method ?? null;
  const view: PaymentView = {
    ...row,
    coin_name: method?.coin_name ?? null,
    coin_decimals: method?.coin_decimals ?? null,
    coin_kind: method?.coin_kind ?? null,
    chain_symbol: method?.chain_symbol ?? null,
    chain_name: method?.chain_name ?? null,
    address: choice?.deposit.address ?? null,
    address_friendly: choice?.deposit.friendly ?? null,
    transaction_hashes: [],
    received_base_units: '0',
    transfer_effects: [],
  };
  paymentTransitions.inc({ to: view.status });
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
  | 'transfer_effects'
>;

/** The customer chooses a method at checkout (public: the payment id is the capability). */
export async function selectMethod(pool: DatabasePool, config: CommandConfig, paymentId: string, methodId: string, now: Date): Promise<PaymentView> {
  return pool.transaction(async (tx) => {
    const payment = await lockPayment(tx, paymentId);
    if (!payment) throw paymentNotFound();
    const method = await findStoreMethod(tx, payment.store_id, { id: methodId });
    if (!method) throw notFound('payment_method_not_found', 'That payment method is not accepted for this payment.', 'paymentMethodID');
    const next = transition({ status: payment.status, expiresAt: payment.expires_at }, { type: 'select_method' }, now);
    if (!next.ok) throw rejectionError(next.reason);
    const choice = await chooseMethod(tx, config, payment, method, now, { param: 'paymentMethodID' });
    const fixMethod = sql.fragment`
      update payments set
        status = ${next.to}, payment_method_id = ${method.id}, coin_symbol = ${method.coin_symbol},
        coin_amount = ${choice.price.coinAmount}, exchange_rate = ${choice.price.rate}, exchange_rate_source = ${choice.price.source},
        exchange_rate_at = ${sql.timestamp(choice.price.at)}, method_selected_at = ${sql.timestamp(now)}
      where id = ${paymentId}
    `;
    await tx.query(prepared(sql.unsafe`${inOneStatement(depositWrites(config, paymentId, choice, now), fixMethod)}`));
    paymentTransitions.inc({ to: 'pending' });
    return (await findPaymentView(tx, paymentId))!;
  });
}

/** Merchant cancel: created/pending → cancelled; cancelled stays; completed/expired → 409. */
export async function cancelPayment(tx: Db, storeId: string, paymentId: string, now: Date): Promise<PaymentView> {
  const payment = await lockPayment(tx, paymentId, storeId);
  if (!payment) throw paymentNotFound();
  const next = transition({ status: payment.status, expiresAt: payment.expires_at }, { type: 'cancel' }, now);
  if (!next.ok) throw rejectionError(next.reason);
  if (next.changed) {
    await tx.query(sql.typeAlias('void')`update payments set status = ${next.to}, cancelled_at = ${sql.timestamp(now)} where id = ${paymentId}`);
    paymentTransitions.inc({ to: 'cancelled' });
  }
  return (await findPaymentView(tx, paymentId))!;
}

export type ExpireOutcome = { outcome: 'expired' | 'not_open' | 'not_due' | 'missing'; status?: PaymentStatus };

/**
 * Expires one payment now, as the sandbox's "expire" control does (the caller has checked the
 * chain is read up to `now`). Usually payments expire in bulk (payments/expiry.ts). Safe to run twice.
 */
export async function expirePayment(pool: DatabasePool, paymentId: string, now: Date): Promise<ExpireOutcome> {
  return pool.transaction(async (tx) => {
    const payment = await lockPayment(tx, paymentId);
    if (!payment) return { outcome: 'missing' as const };
    const next = transition({ status: payment.status, expiresAt: payment.expires_at }, { type: 'expire' }, now);
    if (!next.ok) return { outcome: next.reason === 'not_due' ? ('not_due' as const) : ('not_open' as const), status: payment.status };
    await tx.query(sql.typeAlias('void')`update payments set status = ${next.to}, expired_at = ${sql.timestamp(now)} where id = ${paymentId}`);
    paymentTransitions.inc({ to: 'expired' });
    return { outcome: 'expired' as const, status: 'expired' as const };
  });
}
