// Merchant stores and the payment methods they accept.
import { sql, z, type Db } from '../db/pool.ts';

export interface MethodRef {
  coin: string;
  chain: string;
}

export interface StoreRecord {
  id: string;
  name: string;
  methods: Array<{ id: string; coin: string; chain: string }>;
}

export class StoreInputError extends Error {
  override name = 'StoreInputError';
}

export const DEFAULT_METHODS = 'TON/TON,USDT/TON';

/** Parses "TON/TON,USDT/TON" (coin/chain pairs, case-sensitive). */
export function parseMethodList(text: string): MethodRef[] {
  const methods = text.split(',').map((part) => part.trim()).filter((part) => part !== '').map((part) => {
    const [coin, chain, extra] = part.split('/');
    if (!coin || !chain || extra !== undefined) throw new StoreInputError(`invalid method "${part}" (expected COIN/CHAIN, e.g. USDT/TON)`);
    return { coin, chain };
  });
  if (methods.length === 0) throw new StoreInputError('at least one method is needed (e.g. TON/TON,USDT/TON)');
  return methods;
}

const methodRow = z.object({ id: z.string(), coin: z.string(), chain: z.string() });

export async function createStore(pool: Db & { transaction: Db['transaction'] }, name: string, methods: MethodRef[]): Promise<StoreRecord> {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 200) throw new StoreInputError('the store name must be 1 to 200 characters');
  return pool.transaction(async (tx) => {
    const found: Array<z.infer<typeof methodRow>> = [];
    for (const method of methods) {
      const row = await tx.maybeOne(sql.type(methodRow)`
        select id, coin_symbol as coin, chain_symbol as chain from payment_methods
        where coin_symbol = ${method.coin} and chain_symbol = ${method.chain}
      `);
      if (!row) throw new StoreInputError(`unknown payment method ${method.coin}/${method.chain}`);
      if (!found.some((f) => f.id === row.id)) found.push(row);
    }
    const id = await tx.oneFirst(sql.type(z.object({ id: z.string() }))`insert into stores (name) values (${trimmed}) returning id`);
    for (const method of found) {
      await tx.query(sql.typeAlias('void')`insert into store_payment_methods (store_id, payment_method_id) values (${id}, ${method.id})`);
    }
    return { id, name: trimmed, methods: found };
  });
}
