// GET /v1/payments: a store's payments, newest first, with cursor pagination (and filters: status,
// order id, creation time, payment link).
import { sql, type Db } from '../db/pool.ts';
import { findStorePayment, PAYMENT_VIEW, paymentView, type PaymentView } from './view.ts';
import type { PaymentStatus } from './transitions.ts';

interface ListQuery {
  status?: PaymentStatus;
  /** The merchant's order id, exactly (index payments_by_store_order_id). */
  orderId?: string;
  /** Only the payments of this payment link (index payments_by_payment_link). */
  paymentLinkId?: string;
  createdAfter?: Date;
  limit: number;
  /** Id of the last payment of the previous page. */
  startingAfter?: string;
}

export async function listPayments(db: Db, storeId: string, query: ListQuery): Promise<{ data: readonly PaymentView[]; hasMore: boolean } | null> {
  let cursor = sql.fragment`true`;
  if (query.startingAfter) {
    if (!(await findStorePayment(db, storeId, query.startingAfter))) return null;
    cursor = sql.fragment`(p.created_at, p.id) < (select created_at, id from payments where id = ${query.startingAfter})`;
  }
  const rows = await db.any(sql.type(paymentView)`
    ${PAYMENT_VIEW}
    where p.store_id = ${storeId}
      and ${query.status ? sql.fragment`p.status = ${query.status}` : sql.fragment`true`}
      and ${query.orderId !== undefined ? sql.fragment`p.order_id = ${query.orderId}` : sql.fragment`true`}
      and ${query.paymentLinkId !== undefined ? sql.fragment`p.payment_link_id = ${query.paymentLinkId}` : sql.fragment`true`}
      and ${query.createdAfter ? sql.fragment`p.created_at > ${sql.timestamp(query.createdAfter)}` : sql.fragment`true`}
      and ${cursor}
    order by p.created_at desc, p.id desc
    limit ${query.limit + 1}
  `);
  return { data: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}
