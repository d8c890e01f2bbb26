// Payment links (docs/API.md, Payment links; CONTRACT §11): a store's reusable URL,
// {checkout_base_url}/l/{id}. The merchant's commands (create, list, find, deactivate), what a link's
// state is at a moment (a pure function), how a typed amount is read, and a customer's request to pay
// (a POST of the link's page, never a visit): one payment created through the API's own create command
// (draftFromPayment → createPayment) with the link's price, carrying its id, under a lock on the link
// so that its maxPayments holds whatever arrives at once.
import crypto from 'node:crypto';
import type { TonNetwork } from '../config.ts';
import { sql, z, type Db } from '../db/pool.ts';
import { KassaError } from '../errors.ts';
import { amountProblem, compareDecimal } from '../money.ts';
import { createPayment } from '../payments/commands.ts';
import { checkPriceTerms, draftFromPayment } from '../payments/drafts.ts';
import type { CommandConfig } from '../payments/methodChoice.ts';

const linkRow = z.object({
  id: z.string(),
  store_id: z.string(),
  /** What customers see of the store: its display name, else its name. */
  store_name: z.string(),
  currency: z.string(),
  amount: z.string().nullable(),
  min_amount: z.string().nullable(),
  max_amount: z.string().nullable(),
  description: z.string().nullable(),
  coin_symbol: z.string().nullable(),
  chain_symbol: z.string().nullable(),
  max_payments: z.number().nullable(),
  expires_at: z.date().nullable(),
  return_url: z.string().nullable(),
  created_at: z.date(),
  deactivated_at: z.date().nullable(),
  /** Who made it: `api` (POST /v1/payment-links) or `dashboard`. */
  created_via: z.enum(['api', 'dashboard']),
  /** Completed payments of the link. */
  payments: z.number(),
  /** The sum of their amounts, in the link's currency (numeric as text). */
  amount_paid: z.string(),
});
export type PaymentLinkRow = z.infer<typeof linkRow>;

/** A link with how many of its payments completed and what they came to. */
const LINK_SELECT = sql.fragment`
  select l.id, l.store_id, (select coalesce(s.display_name, s.name) from stores s where s.id = l.store_id) as store_name, l.currency, l.amount::text as amount, l.min_amount::text as min_amount, l.max_amount::text as max_amount,
         l.description, l.coin_symbol, l.chain_symbol, l.max_payments, l.expires_at, l.return_url, l.created_at, l.deactivated_at, l.created_via,
         coalesce(paid.payments, 0)::int as payments, coalesce(paid.amount, 0)::text as amount_paid
  from payment_links l
  left join lateral (
    select count(*) as payments, sum(p.amount) as amount from payments p where p.payment_link_id = l.id and p.status = 'completed'
  ) as paid on true
`;

export interface PaymentLinkInput {
  currency: string;
  amount?: string;
  minAmount?: string;
  maxAmount?: string;
  description?: string;
  payment_options?: { methods?: Array<{ coin: string; chain: string }> };
  maxPayments?: number;
  /** Validated RFC 3339. */
  expiresAt?: Date;
  returnURL?: string;
}

/** The rules JSON Schema cannot say: fixed or open, not both; an open range in order; an expiry ahead. */
function linkTermsProblem(input: PaymentLinkInput, now: Date): KassaError | null {
  if (input.amount !== undefined && (input.minAmount !== undefined || input.maxAmount !== undefined)) {
    return new KassaError('invalid_link_amount', { param: input.minAmount !== undefined ? 'minAmount' : 'maxAmount' });
  }
  if (input.minAmount !== undefined && input.maxAmount !== undefined && compareDecimal(input.minAmount, input.maxAmount) > 0) {
    return new KassaError('invalid_link_amount', { param: 'maxAmount' });
  }
  if (input.expiresAt !== undefined && input.expiresAt.getTime() <= now.getTime()) return new KassaError('invalid_expires_at', { param: 'expiresAt' });
  return null;
}

export async function createPaymentLink(
  tx: Db,
  network: TonNetwork,
  storeId: string,
  input: PaymentLinkInput,
  now: Date,
  createdVia: PaymentLinkRow['created_via'] = 'api',
): Promise<PaymentLinkRow> {
  const problem = linkTermsProblem(input, now);
  if (problem) throw problem;
  const method = input.payment_options?.methods?.[0];
  const amounts = (
    [
      [input.amount, 'amount'],
      [input.minAmount, 'minAmount'],
      [input.maxAmount, 'maxAmount'],
    ] as const
  ).filter((pair): pair is readonly [string, 'amount' | 'minAmount' | 'maxAmount'] => pair[0] !== undefined);
  await checkPriceTerms(tx, storeId, { currency: input.currency, amounts, method }, { network });
  const id = crypto.randomUUID();
  await tx.query(sql.unsafe`
    insert into payment_links (id, store_id, currency, amount, min_amount, max_amount, description, coin_symbol, chain_symbol,
                               max_payments, expires_at, return_url, created_at, created_via)
    values (${id}, ${storeId}, ${input.currency}, ${input.amount ?? null}, ${input.minAmount ?? null}, ${input.maxAmount ?? null},
            ${input.description ?? null}, ${method?.coin ?? null}, ${method?.chain ?? null}, ${input.maxPayments ?? null},
            ${input.expiresAt ? sql.timestamp(input.expiresAt) : null}, ${input.returnURL ?? null}, ${sql.timestamp(now)}, ${createdVia})
  `);
  return (await findPaymentLink(tx, id))!;
}

/** A link by its id alone (the customer's page: the id is the capability). */
export async function findPaymentLink(db: Db, id: string): Promise<PaymentLinkRow | null> {
  return db.maybeOne(sql.type(linkRow)`${LINK_SELECT} where l.id = ${id}`);
}

/** The store's link, or null (another store's link is not found, never forbidden). */
export async function findStorePaymentLink(db: Db, storeId: string, id: string): Promise<PaymentLinkRow | null> {
  return db.maybeOne(sql.type(linkRow)`${LINK_SELECT} where l.id = ${id} and l.store_id = ${storeId}`);
}

/** The store's links, newest first, a page at a time (null: `startingAfter` is not one of them). */
export async function listPaymentLinks(
  db: Db,
  storeId: string,
  { limit, startingAfter }: { limit: number; startingAfter?: string },
): Promise<{ data: readonly PaymentLinkRow[]; hasMore: boolean } | null> {
  let cursor = sql.fragment`true`;
  if (startingAfter !== undefined) {
    if (!(await findStorePaymentLink(db, storeId, startingAfter))) return null;
    cursor = sql.fragment`(l.created_at, l.id) < (select created_at, id from payment_links where id = ${startingAfter})`;
  }
  const rows = await db.any(sql.type(linkRow)`
    ${LINK_SELECT} where l.store_id = ${storeId} and ${cursor} order by l.created_at desc, l.id desc limit ${limit + 1}
  `);
  return { data: rows.slice(0, limit), hasMore: rows.length > limit };
}

/**
 * Switches the store's link off (once: a second call keeps the first time), and ends its open
 * payments with it: each created or pending one now expires at the deactivation, if not before.
 * Not a cancel: money sent before the deactivation still completes its payment (the chain reader
 * expires a pending payment only once every transaction made before its expiresAt is booked), while
 * money sent after it is late (kept in the deposit, refundable) — never a completed sale of a link
 * the shop switched off.
 */
export async function deactivatePaymentLink(db: Db, storeId: string, id: string, now: Date): Promise<PaymentLinkRow | null> {
  await db.query(sql.unsafe`
    with link as (
      update payment_links set deactivated_at = coalesce(deactivated_at, ${sql.timestamp(now)}) where id = ${id} and store_id = ${storeId}
      returning id, deactivated_at
    )
    update payments p set expires_at = link.deactivated_at
    from link
    where p.payment_link_id = link.id and p.status in ('created', 'pending') and p.expires_at > link.deactivated_at
  `);
  return findStorePaymentLink(db, storeId, id);
}

/** A link's public URL, {checkout_base_url}/l/{id}: what the API presents and the dashboard shares. */
export const paymentLinkUrl = (checkoutBaseUrl: string, id: string): string => `${checkoutBaseUrl}/l/${id}`;

export type LinkState = 'open' | 'deactivated' | 'expired' | 'used_up';

/** What a visit at `now` finds: open, or why not. */
export function linkState(link: Pick<PaymentLinkRow, 'deactivated_at' | 'expires_at' | 'max_payments' | 'payments'>, now: Date): LinkState {
  if (link.deactivated_at !== null) return 'deactivated';
  if (link.expires_at !== null && link.expires_at.getTime() <= now.getTime()) return 'expired';
  if (link.max_payments !== null && link.payments >= link.max_payments) return 'used_up';
  return 'open';
}

/**
 * How a link's maxPayments counts: its completed payments and those that may still complete (pending;
 * created before its expiry) — a payment being paid holds its place until it completes, or until it
 * is expired (the chain reader, once nothing can count any more) or cancelled, which frees it.
 * 'full' when every place is held and not all by completed payments (try again later), else the
 * link's state.
 */
export function placeState(
  link: Pick<PaymentLinkRow, 'deactivated_at' | 'expires_at' | 'max_payments' | 'payments'>,
  openPayments: number,
  now: Date,
): LinkState | 'full' {
  const state = linkState(link, now);
  if (state !== 'open') return state;
  if (link.max_payments !== null && link.payments + openPayments >= link.max_payments) return 'full';
  return 'open';
}

/**
 * The link's payments that may still complete at `now`: pending ones (a transfer made before the
 * expiry may still be read after it, so only the reader's expiry ends them) and created ones before
 * their expiry (a created payment past it can no longer take a method).
 */
export async function openLinkPayments(db: Db, linkId: string, now: Date): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`
    select count(*)::int as n from payments
    where payment_link_id = ${linkId} and (status = 'pending' or (status = 'created' and expires_at > ${sql.timestamp(now)}))
  `);
}

/**
 * An amount as a customer types it, as a plain decimal ("0,5" → "0.5"; "1 234,50" → "1234.50";
 * "1,234.50" → "1234.50"), or null when it cannot be read. Spaces group digits. With both a comma
 * and a dot, the last one is the decimal mark and the other groups thousands. One mark alone is the
 * decimal mark, except one followed by exactly three digits, which the page's language decides
 * ("1,000" is a thousand in English, 1 in Russian, where the comma is the decimal mark).
 */
export function readTypedAmount(typed: string, lang: string): string | null {
  const text = typed.trim().replace(/[\s\u00a0\u202f\u2009']/g, '');
  if (!/^[\d.,]+$/.test(text) || !/\d/.test(text)) return null;
  const ownMark = lang === 'ru' ? ',' : '.';
  const lastComma = text.lastIndexOf(',');
  const lastDot = text.lastIndexOf('.');
  let decimal: ',' | '.' | null;
  if (lastComma !== -1 && lastDot !== -1) decimal = lastComma > lastDot ? ',' : '.';
  else if (lastComma === -1 && lastDot === -1) decimal = null;
  else {
    const mark = lastComma !== -1 ? ',' : '.';
    const at = text.indexOf(mark);
    if (at !== text.lastIndexOf(mark)) decimal = null;
    else if (text.length - at - 1 === 3 && at >= 1 && at <= 3) decimal = mark === ownMark ? mark : null;
    else decimal = mark;
  }
  const parts = decimal === null ? [text] : text.split(decimal);
  if (parts.length > 2) return null;
  const [whole = '', fraction] = parts;
  const grouping = decimal === null ? (text.includes(',') ? ',' : '.') : decimal === ',' ? '.' : ',';
  const groups = whole.split(grouping);
  if (groups.length > 1 && (!/^\d{1,3}$/.test(groups[0]!) || groups.slice(1).some((group) => !/^\d{3}$/.test(group)))) return null;
  const digits = groups.join('');
  if (!/^\d*$/.test(digits)) return null;
  const integer = digits.replace(/^0+(?=\d)/, '') || '0';
  if (fraction === undefined) return digits === '' ? null : integer;
  if (!/^\d+$/.test(fraction)) return null;
  return `${integer}.${fraction}`;
}

/**
 * An open amount the customer typed (as readTypedAmount reads it): null when the API would take it
 * (amountProblem, the API's own rule) and it fits the link's range, else why not.
 */
export function openAmountProblem(link: Pick<PaymentLinkRow, 'min_amount' | 'max_amount'>, typed: string): 'invalid' | 'long' | 'below' | 'above' | null {
  const problem = amountProblem(typed);
  if (problem !== null) return problem;
  if (link.min_amount !== null && compareDecimal(typed, link.min_amount) < 0) return 'below';
  if (link.max_amount !== null && compareDecimal(typed, link.max_amount) > 0) return 'above';
  return null;
}

/**
 * The visitor's payment of this link still open (created or pending, not past its expiry), when the
 * id their cookie held is one: a reload or a second tab reuses it instead of creating another.
 */
export async function reusablePayment(db: Db, link: PaymentLinkRow, paymentId: string, now: Date): Promise<boolean> {
  return db.exists(sql.unsafe`
    select 1 from payments
    where id = ${paymentId} and payment_link_id = ${link.id} and status in ('created', 'pending') and expires_at > ${sql.timestamp(now)}
  `);
}

/**
 * A customer asks to pay (the link page's POST): one payment at the link's price (`amount`: the
 * link's own, or what the customer typed), through the API's create command. The link's row is
 * locked first, so requests arriving together are counted one after the other: none is made when
 * the link is closed or every place is held (placeState), and maxPayments is never exceeded.
 */
export async function createLinkPayment(
  tx: Db,
  config: CommandConfig,
  linkId: string,
  amount: string,
  now: Date,
): Promise<{ id: string; expiresAt: Date } | { refused: Exclude<LinkState, 'open'> | 'full' }> {
  await tx.query(sql.unsafe`select id from payment_links where id = ${linkId} for update`);
  const link = await findPaymentLink(tx, linkId);
  if (!link) throw new KassaError('payment_link_not_found');
  const state = placeState(link, await openLinkPayments(tx, link.id, now), now);
  if (state !== 'open') return { refused: state };
  const body = {
    amount,
    currency: link.currency,
    ...(link.coin_symbol !== null && link.chain_symbol !== null
      ? { payment_options: { methods: [{ coin: link.coin_symbol, chain: link.chain_symbol }] } }
      : {}),
    ...(link.description !== null ? { description: link.description } : {}),
    ...(link.return_url !== null ? { returnURL: link.return_url } : {}),
  };
  const draft = await draftFromPayment(tx, link.store_id, body, { network: config.tonNetwork });
  // A link's payment expires no later than the link: money sent after the link's end never completes it.
  const view = await createPayment(
    tx,
    config,
    link.store_id,
    { ...draft, createdVia: 'payment_link', paymentLinkId: link.id, ...(link.expires_at !== null ? { expiresBy: link.expires_at } : {}) },
    now,
  );
  return { id: view.id, expiresAt: view.expires_at };
}
