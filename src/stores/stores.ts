// Merchant stores, the payment methods they accept, and the treasury their money goes to.
import { parseNetworkAddress, type TonNetwork } from '../chain/addresses.ts';
import { sql, z, type Db } from '../db/pool.ts';

export interface MethodRef {
  coin: string;
  chain: string;
}

export interface StoreRecord {
  id: string;
  name: string;
  methods: Array<{ id: string; coin: string; chain: string }>;
  /** The store's treasury wallet (raw form), or null: money stays in the deposit wallets. */
  treasury: string | null;
}

/** What `kassa store update` may change; an absent field is left as it is. */
export interface StoreChanges {
  treasury?: string;
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

/** A treasury address given for `network`, in raw form; StoreInputError when it is not one. */
export function parseTreasury(value: string, network: TonNetwork): string {
  const parsed = parseNetworkAddress(value, network);
  if ('problem' in parsed) throw new StoreInputError(`invalid treasury "${value}": ${parsed.problem}`);
  return parsed.address.toRawString();
}

const methodRow = z.object({ id: z.string(), coin: z.string(), chain: z.string() });
const isUuid = (value: string): boolean => z.uuid().safeParse(value).success;

/** The store as `kassa store …` prints it; null when there is none with that id. */
export async function findStore(db: Db, id: string): Promise<StoreRecord | null> {
  if (!isUuid(id)) return null;
  const store = await db.maybeOne(sql.type(z.object({ id: z.string(), name: z.string(), treasury: z.string().nullable() }))`
    select id, name, treasury from stores where id = ${id}
  `);
  if (!store) return null;
  const methods = await db.any(sql.type(methodRow)`
    select m.id, m.coin_symbol as coin, m.chain_symbol as chain
    from store_payment_methods s join payment_methods m on m.id = s.payment_method_id
    where s.store_id = ${id} order by m.coin_symbol, m.chain_symbol
  `);
  return { id: store.id, name: store.name, methods: [...methods], treasury: store.treasury };
}

/** Applies the given changes (each optional) and returns the store; StoreInputError for an unknown id. */
export async function updateStore(db: Db, id: string, changes: StoreChanges): Promise<StoreRecord> {
  const sets = [];
  if (changes.treasury !== undefined) sets.push(sql.fragment`treasury = ${changes.treasury}`);
  if (sets.length === 0) throw new StoreInputError('nothing to update');
  const updated = isUuid(id)
    ? (await db.query(sql.typeAlias('void')`update stores set ${sql.join(sets, sql.fragment`, `)} where id = ${id}`)).rowCount > 0
    : false;
  if (!updated) throw new StoreInputError(`unknown store "${id}"`);
  return (await findStore(db, id))!;
}

export async function createStore(pool: Db & { transaction: Db['transaction'] }, name: string, methods: MethodRef[], options: { treasury?: string | null } = {}): Promise<StoreRecord> {
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
    const treasury = options.treasury ?? null;
    const id = await tx.oneFirst(sql.type(z.object({ id: z.string() }))`insert into stores (name, treasury) values (${trimmed}, ${treasury}) returning id`);
    for (const method of found) {
      await tx.query(sql.typeAlias('void')`insert into store_payment_methods (store_id, payment_method_id) values (${id}, ${method.id})`);
    }
    return { id, name: trimmed, methods: found, treasury };
  });
}
