// What "counted toward the payment" means in SQL, in one place: the transfers whose effect is
// partial, completed or overpaid. Kept free of other imports so every reader can use it.
import { sql } from '../db/pool.ts';

export const COUNTED_EFFECTS = ['partial', 'completed', 'overpaid'] as const;

/** `t.effect` is one that counts (for a query over `transfers t`). */
export const IS_COUNTED = sql.fragment`t.effect = any(${sql.array([...COUNTED_EFFECTS], 'text')})`;

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
