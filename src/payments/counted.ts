// What "counted toward the payment" and "credited to the deposit" mean in SQL, in one place: counted
// are the transfers whose effect is partial, completed or overpaid; credited is all the money that
// stayed in the deposit as the store's (counted or not: wrong coin, late, overpaid…), as
// deposit_money (migration 000014) sums it. Kept free of other imports so every reader can use it.
import { sql } from '../db/pool.ts';

export const COUNTED_EFFECTS = ['partial', 'completed', 'overpaid'] as const;

/** `t.effect` is one that counts (for a query over `transfers t`). */
export const IS_COUNTED = sql.fragment`t.effect = any(${sql.array([...COUNTED_EFFECTS], 'text')})`;

/** The effects of value that is not the store's money in the deposit: it bounced (not_credited), a notification's or excess TON (not_counted), a look-alike jetton (unknown_token). */
export const UNCREDITED_EFFECTS = ['not_credited', 'not_counted', 'unknown_token'] as const;

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
