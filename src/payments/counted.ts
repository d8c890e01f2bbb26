// What "counted toward the payment" and "credited to the deposit" mean in SQL, in one place: counted
// are the transfers whose effect is partial, completed or overpaid; credited is all the money that
// stayed in the deposit as the store's (counted or not: wrong coin, late, overpaid…), as
// deposit_money (migration 000014) sums it. Kept free of other imports so every reader can use it.
import { sql } from '../db/pool.ts';

export const COUNTED_EFFECTS = ['partial', 'completed', 'overpaid'] as const;

/** `t.effect` is one that counts (for a query over `transfers t`). */
export const IS_COUNTED = sql.fragment`t.effect = any(${sql.array([...COUNTED_EFFECTS], 'text')})`;

/** The effects of value that is not the store's money in the deposit: it bounced (not_credited), a notification's or excess TON (not_counted), a look-alike jetton (unknown_token). */
const UNCREDITED_EFFECTS = ['not_credited', 'not_counted', 'unknown_token'] as const;

/** `t.effect` is money credited to the deposit, as deposit_money's `credited` (for a query over `transfers t`). */
export const IS_CREDITED = sql.fragment`t.effect <> all(${sql.array([...UNCREDITED_EFFECTS], 'text')})`;

/**
 * A lateral join `counted` on payment `p`: the counted transfers' hashes in chain order, their sum
 * in base units (`total_base_units`), and the effects of all the payment's transfers (`effects`,
 * for its anomalies), in one pass over its books.
 */
export const COUNTED_OF_PAYMENT = sql.fragment`
  left join lateral (
    select array_agg(t.hash order by t.chain_time, t.lt) filter (where ${IS_COUNTED}) as hashes,
           sum(t.amount_base_units) filter (where ${IS_COUNTED}) as total_base_units,
           array_agg(distinct t.effect) as effects
    from transfers t where t.payment_id = p.id
  ) counted on true
`;

/**
 * A lateral join `refunds` on payment `p`: what of its coin went back to the customer
 * (`refunded_base_units`: refunds from its payment address planned, sent or confirmed — what each
 * refunded, its network fee included when taken from it — and refunds from the store's treasury once confirmed, with what a wallet
 * paid again), and the part of the sale that was (`sale_refunded_base_units`: a completed
 * payment's refunds less the money beyond its price they gave back first — overpaid, late — at most
 * the sale; refunds from the treasury are the sale's). The API's `refunded`; the dashboard's net
 * sales and "refunded in full / in part".
 */
export const REFUNDS_OF_PAYMENT = sql.fragment`
  left join lateral (
    select x.refunded::text as refunded_base_units,
           (case when p.status = 'completed' and p.coin_amount_base_units is not null
                 then least(p.coin_amount_base_units, x.treasury + greatest(0, x.deposit - greatest(0, x.credited - p.coin_amount_base_units)))
                 else 0 end)::text as sale_refunded_base_units
    from (
      select y.deposit + y.treasury as refunded, y.deposit, y.treasury, y.credited from (
        select
          coalesce((select sum(o.amount_base_units)
                    from outgoing_transfers o where o.payment_id = p.id and o.kind = 'refund' and o.source = 'deposit' and o.state <> 'failed'
                      and o.coin_symbol = p.coin_symbol), 0) as deposit,
          coalesce((select sum(coalesce(o.sent_amount_base_units, o.amount_base_units))
                    from outgoing_transfers o where o.payment_id = p.id and o.kind = 'refund' and o.source = 'treasury' and o.state = 'confirmed'
                      and o.coin_symbol = p.coin_symbol), 0)
          + coalesce((select sum(r.amount_base_units) from treasury_refund_repeats r join outgoing_transfers o on o.id = r.transfer_id
                      where o.payment_id = p.id and o.coin_symbol = p.coin_symbol), 0) as treasury,
          coalesce((select sum(t.amount_base_units) from transfers t where t.payment_id = p.id and t.coin_symbol = p.coin_symbol and ${IS_CREDITED}), 0) as credited
      ) y
    ) x
  ) refunds on true
`;
