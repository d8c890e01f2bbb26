// Payment links and one-off payments made in the dashboard (issue 30): an owner asks a customer for
// money without writing code. Each action is the API's own command — a link through
// paymentLinks/links.ts createPaymentLink (as POST /v1/payment-links, recorded created_via
// 'dashboard'), a one-off payment through payments/ draftFromPayment → createPayment (as POST
// /v1/payments, recorded created_via 'dashboard') — with its audit row in the same transaction.
import type { Db, DatabasePool } from '../db/pool.ts';
import { sql } from '../db/pool.ts';
import { createPaymentLink, deactivatePaymentLink, type PaymentLinkInput, type PaymentLinkRow } from '../paymentLinks/links.ts';
import { createPayment } from '../payments/commands.ts';
import { draftFromPayment, type PaymentInput } from '../payments/drafts.ts';
import { REFUNDS_OF_PAYMENT } from '../payments/counted.ts';
import type { CommandConfig } from '../payments/methodChoice.ts';
import { type Actor, recordAudit } from './audit.ts';
import { listedPayment, type ListedPayment } from './payments.ts';

/** How long a link stays usable, as the form offers it (null: until deactivated). */
export const LINK_EXPIRIES = { never: null, '1d': 86_400, '7d': 7 * 86_400, '30d': 30 * 86_400 } as const;
export type LinkExpiry = keyof typeof LINK_EXPIRIES;
export const LINK_EXPIRY_LABELS: Record<LinkExpiry, string> = { never: 'Never', '1d': 'In a day', '7d': 'In a week', '30d': 'In 30 days' };

/**
 * How long a one-off payment stays payable: the API's ttl (900 to 43,200 seconds), and days for an
 * invoice a customer pays later — the dashboard's own, made through the same create command (a fiat
 * price keeps the rate of the moment it was made for all that time).
 */
export const PAYMENT_EXPIRIES = { '15m': 900, '1h': 3600, '12h': 43_200, '1d': 86_400, '3d': 3 * 86_400, '7d': 7 * 86_400 } as const;
export type PaymentExpiry = keyof typeof PAYMENT_EXPIRIES;
export const PAYMENT_EXPIRY_LABELS: Record<PaymentExpiry, string> = {
  '15m': 'In 15 minutes',
  '1h': 'In an hour',
  '12h': 'In 12 hours',
  '1d': 'In a day',
  '3d': 'In 3 days',
  '7d': 'In a week',
};

/** Makes a payment link (audited payment_link.create). KassaError (with its param) when the API would refuse it. */
export async function createDashboardLink(
  pool: DatabasePool,
  config: Pick<CommandConfig, 'tonNetwork'>,
  actor: Actor,
  storeId: string,
  input: PaymentLinkInput,
  now: Date,
): Promise<PaymentLinkRow> {
  return pool.transaction(async (tx) => {
    const link = await createPaymentLink(tx, config.tonNetwork, storeId, input, now, 'dashboard');
    await recordAudit(
      tx,
      actor,
      {
        storeId,
        action: 'payment_link.create',
        subject: link.id,
        detail: { currency: link.currency, amount: link.amount, maxPayments: link.max_payments, expiresAt: link.expires_at?.toISOString() ?? null },
      },
      now,
    );
    return link;
  });
}

/** Switches a link off (audited payment_link.deactivate once); null when it is not the store's. */
export async function deactivateDashboardLink(pool: DatabasePool, actor: Actor, storeId: string, linkId: string, now: Date): Promise<PaymentLinkRow | null> {
  return pool.transaction(async (tx) => {
    const link = await deactivatePaymentLink(tx, storeId, linkId, now);
    if (link && link.deactivated_at?.getTime() === now.getTime()) {
      await recordAudit(tx, actor, { storeId, action: 'payment_link.deactivate', subject: link.id, detail: {} }, now);
    }
    return link;
  });
}

/** Makes a one-off payment through the API's create (audited payment.create); its id. */
export async function createDashboardPayment(
  pool: DatabasePool,
  config: CommandConfig,
  actor: Actor,
  storeId: string,
  input: PaymentInput,
  now: Date,
): Promise<string> {
  return pool.transaction(async (tx) => {
    const draft = await draftFromPayment(tx, storeId, input, { network: config.tonNetwork });
    const view = await createPayment(tx, config, storeId, { ...draft, createdVia: 'dashboard' }, now);
    await recordAudit(
      tx,
      actor,
      { storeId, action: 'payment.create', subject: view.id, detail: { amount: input.amount, currency: input.currency, ttl: input.ttl ?? null } },
      now,
    );
    return view.id;
  });
}

/** How many of a link's payments its page shows, newest first. */
const LINK_PAYMENTS_SHOWN = 100;

/** A link's payments (every status), newest first. */
export async function linkPayments(db: Db, storeId: string, linkId: string): Promise<readonly ListedPayment[]> {
  return db.any(sql.type(listedPayment)`
    select p.id, p.status, p.amount::text as amount, p.currency, p.order_id, p.coin_symbol, p.coin_amount::text as coin_amount, p.created_at, p.paid_at,
           p.description, c.decimals::int as coin_decimals, refunds.sale_refunded_base_units
    from payments p left join coins c on c.symbol = p.coin_symbol
    ${REFUNDS_OF_PAYMENT}
    where p.store_id = ${storeId} and p.payment_link_id = ${linkId}
    order by p.created_at desc, p.id desc
    limit ${LINK_PAYMENTS_SHOWN}
  `);
}
