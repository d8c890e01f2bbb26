// The gas wallet: pays the TON that jetton transfers out of deposit wallets need (a deposit of a
// jetton payment holds no TON of its own). Wallet v5r1 of the deposit key (addresses.ts), so every
// process knows its address; only the signer can spend from it.
import { gasWallet, type DepositWallet } from '../chain/addresses.ts';
import { getAccountState, type ChainClient } from '../chain/client.ts';
import type { Config } from '../config.ts';
import { sql, z, type Db } from '../db/pool.ts';
import { FormProblem } from '../errors.ts';
import { fromBaseUnits } from '../money.ts';
import { isUuid } from '../uuid.ts';
import { depositPublicKey, type DepositKeyConfig } from '../payments/deposit.ts';

/** The gas wallet of this configuration, recorded in gas_wallets (the planners and the reader read it there). */
export async function ensureGasWallet(db: Db, config: DepositKeyConfig): Promise<DepositWallet> {
  const wallet = gasWallet(await depositPublicKey(db, config), config.tonNetwork);
  await db.query(sql.typeAlias('void')`
    insert into gas_wallets (network, address) values (${config.tonNetwork}, ${wallet.raw})
    on conflict (network) do update set address = excluded.address
  `);
  return wallet;
}

export async function gasWalletAddress(db: Db, network: Config['tonNetwork']): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ address: z.string() }))`select address from gas_wallets where network = ${network}`);
}

/** What `kassa gas` prints: the address (to fund it) and its balance (null when the chain API cannot be asked). */
export async function gasReport(
  db: Db,
  config: DepositKeyConfig,
  client: ChainClient | null,
): Promise<{ address: string; addressRaw: string; network: string; balance: string | null; balanceError?: string }> {
  const wallet = await ensureGasWallet(db, config);
  const report = { address: wallet.friendly, addressRaw: wallet.raw, network: config.tonNetwork };
  if (!client) return { ...report, balance: null, balanceError: 'no chain API configured' };
  try {
    const state = await getAccountState(client, wallet.raw);
    return { ...report, balance: fromBaseUnits(state.balance, 9) };
  } catch (error) {
    return { ...report, balance: null, balanceError: error instanceof Error ? error.message : String(error) };
  }
}

/** What the gas wallet owes or will soon owe (`kassa doctor`): planned top-ups and jetton transfers out of deposits not topped up yet. */
interface GasDemand {
  /** Top-ups planned and not signed yet (nanoTON). */
  owedBaseUnits: bigint;
  topUps: number;
  /** Jetton transfers planned out of deposits with no top-up under way: each will need one. */
  jettonSweeps: number;
  jettonRefunds: number;
}

const demandRow = z.object({ owed: z.string(), top_ups: z.number(), sweeps: z.number(), refunds: z.number() });

/** `gas`: the gas wallet's raw address. */
export async function gasDemand(db: Db, network: Config['tonNetwork'], gas: string): Promise<GasDemand> {
  const row = await db.one(sql.type(demandRow)`
    select
      coalesce((select sum(amount_base_units) from outgoing_transfers
                where kind = 'gas_top_up' and state = 'planned' and from_address = ${gas}), 0)::text as owed,
      (select count(*) from outgoing_transfers where kind = 'gas_top_up' and state = 'planned' and from_address = ${gas})::int as top_ups,
      count(*) filter (where o.kind = 'sweep')::int as sweeps,
      count(*) filter (where o.kind = 'refund')::int as refunds
    from outgoing_transfers o
    join deposit_addresses da on da.address = o.from_address and da.network = ${network}
    where o.state = 'planned' and o.coin_symbol <> 'TON' and o.kind in ('sweep', 'refund')
      and not exists (select 1 from outgoing_transfers t where t.for_transfer_id = o.id and t.kind = 'gas_top_up' and t.state in ('planned', 'sent'))
  `);
  return { owedBaseUnits: BigInt(row.owed), topUps: row.top_ups, jettonSweeps: row.sweeps, jettonRefunds: row.refunds };
}

// ---- a store's refund gas account (store_refund_gas, migration 000019) ----------------------

/** nanoTON: what a store paid for its jetton refunds' gas, what they cost, what is left. */
export interface StoreRefundGas {
  paid: bigint;
  spent: bigint;
  available: bigint;
}

const refundGasRow = z.object({ paid: z.string(), spent: z.string(), available: z.string() });

/** The store's refund gas account (the SQL function store_refund_gas). Lock the store row first when acting on it. */
export async function storeRefundGas(db: Db, storeId: string): Promise<StoreRefundGas> {
  const row = await db.one(sql.type(refundGasRow)`
    select paid::text as paid, spent::text as spent, available::text as available from store_refund_gas(${storeId})
  `);
  return { paid: BigInt(row.paid), spent: BigInt(row.spent), available: BigInt(row.available) };
}

/**
 * `kassa gas paid`: records TON a store paid the operator for its jetton refunds' gas (negative: a
 * correction). Returns the store's account after it, in TON.
 */
export async function recordRefundGasPayment(
  db: Db & { transaction: Db['transaction'] },
  args: { storeId: string; amountBaseUnits: bigint; note: string | null; now: Date },
): Promise<{ storeId: string; paid: string; spent: string; available: string }> {
  if (!isUuid(args.storeId)) throw new FormProblem(`unknown store "${args.storeId}"`, 'store');
  return db.transaction(async (tx) => {
    const store = await tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`select id from stores where id = ${args.storeId} for update`);
    if (store === null) throw new FormProblem(`unknown store "${args.storeId}"`, 'store');
    await tx.query(sql.typeAlias('void')`
      insert into store_gas_payments (store_id, amount_base_units, note, recorded_at)
      values (${args.storeId}, ${args.amountBaseUnits.toString()}, ${args.note}, ${sql.timestamp(args.now)})
    `);
    const account = await storeRefundGas(tx, args.storeId);
    return {
      storeId: args.storeId,
      paid: fromBaseUnits(account.paid, 9),
      spent: fromBaseUnits(account.spent, 9),
      available: fromBaseUnits(account.available, 9),
    };
  });
}
