// The payment methods a store accepts (src/presenters/method.ts shows them).
import { type FragmentSqlToken, prepared, sql, z, type Db } from '../db/pool.ts';

const methodRow = z.object({
  id: z.string(),
  coin_symbol: z.string(),
  coin_name: z.string(),
  coin_decimals: z.number(),
  coin_kind: z.enum(['native', 'jetton']),
  chain_symbol: z.string(),
  chain_name: z.string(),
});
export type MethodRow = z.infer<typeof methodRow>;

/** A store's enabled methods with their coin and chain. */
export const STORE_METHODS = sql.fragment`
  select pm.id, c.symbol as coin_symbol, c.name as coin_name, c.decimals as coin_decimals, c.kind as coin_kind,
         ch.symbol as chain_symbol, ch.name as chain_name
  from store_payment_methods spm
  join payment_methods pm on pm.id = spm.payment_method_id
  join coins c on c.symbol = pm.coin_symbol
  join chains ch on ch.symbol = pm.chain_symbol
`;

export async function listStoreMethods(db: Db, storeId: string): Promise<readonly MethodRow[]> {
  return db.any(sql.type(methodRow)`${STORE_METHODS} where spm.store_id = ${storeId} order by c.kind desc, c.symbol`);
}

/** Which method of STORE_METHODS: by id, or by coin and chain symbol (case-sensitive). */
export type MethodKey = { coin: string; chain: string } | { id: string };
export const methodWhere = (by: MethodKey): FragmentSqlToken =>
  'id' in by ? sql.fragment`pm.id = ${by.id}` : sql.fragment`pm.coin_symbol = ${by.coin} and pm.chain_symbol = ${by.chain}`;

/** A store's method, or null when not enabled. */
export async function findStoreMethod(db: Db, storeId: string, by: MethodKey): Promise<MethodRow | null> {
  return db.maybeOne(prepared(sql.type(methodRow)`${STORE_METHODS} where spm.store_id = ${storeId} and ${methodWhere(by)}`));
}
