// Reconciliation: each deposit's books (what came in, less what went out and the fees its
// transactions cost) against what the chain says it holds, per coin. Where they differ, the
// account's history is re-read from the chain and what the books miss is booked through the chain
// reader's own path (`heal`, src/reader/heal.ts: idempotent by chain identity), and only then is the
// difference that remains kept in deposit_reconciliations (reporting.deposit_differences), counted
// by the kassa_deposit_differences metric and logged. A deposit whose last transaction is newer
// than what the chain reader has settled (its books may not have it yet), or with a transfer in
// flight, is looked at next time. Deposits of pending (and recently expired) payments are looked
// at too, booked transfers or not: a transfer the block stream never showed is found there.
import { Address } from '@ton/core';
import { call, getAccountState, type ChainClient } from '../chain/client.ts';
import { sql, z, type DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';

export interface ReconcileDeps {
  pool: DatabasePool;
  client: ChainClient;
  log: Logger;
  now: () => Date;
  /**
   * Re-reads an account's history and books what is missing (src/reader/heal.ts, the chain
   * reader's booking path, given by the task). Without it differences are only reported.
   */
  heal?: Heal;
}

/** Re-reads `account`'s history (up to `range.toLt`) and books what is missing; `Result` says what it did. */
export type Heal<Result = unknown> = (account: string, range?: { toLt?: string | null }, signal?: AbortSignal) => Promise<Result>;

export interface Difference {
  paymentId: string;
  coin: string;
  account: string;
  booked: bigint;
  onChain: bigint;
}

/** A deposit to look at, with how far the chain reader of its network has settled (null: no reader yet). */
const depositRow = z.object({ payment_id: z.string(), address: z.string(), settled_until: z.date().nullable() });

/** Books of TON on a deposit: credited incoming less their fees, less what left and its fees (nanoTON). */
const tonBooks = (account: string) => sql.type(z.object({ booked: z.string() }))`
  select (
    coalesce((select sum(t.amount_base_units) - coalesce(sum(t.fee_base_units), 0) from transfers t
              where t.account = ${account} and t.coin_symbol = 'TON' and t.effect <> 'not_credited'), 0)
    - coalesce((select sum(case when o.coin_symbol = 'TON' then coalesce(o.sent_amount_base_units, 0) else 0 end + o.fee_base_units)
                from outgoing_transfers o where o.from_address = ${account} and o.transaction_hash is not null), 0)
  )::text as booked
`;

/** Books of a jetton on a deposit's jetton wallet: credited incoming less what was sent out (base units). */
const jettonBooks = (deposit: string, wallet: string, coin: string) => sql.type(z.object({ booked: z.string() }))`
  select (
    coalesce((select sum(t.amount_base_units) from transfers t where t.account = ${wallet} and t.effect <> 'not_credited'), 0)
    - coalesce((select sum(o.sent_amount_base_units) from outgoing_transfers o
                where o.from_address = ${deposit} and o.coin_symbol = ${coin} and o.state = 'confirmed'), 0)
  )::text as booked
`;

/** Reconciles up to `limit` deposits, those looked at least recently first. Returns the differences found. */
export async function reconcileDeposits(deps: ReconcileDeps, options: { limit?: number } = {}): Promise<Difference[]> {
  const { pool } = deps;
  const deposits = await pool.any(sql.type(depositRow)`
    select d.payment_id, d.address, c.settled_until from deposit_addresses d
    left join chain_reader c on c.network = d.network
    left join lateral (select min(r.checked_at) as checked_at from deposit_reconciliations r where r.payment_id = d.payment_id) r on true
    join payments p on p.id = d.payment_id
    where (exists (select 1 from transfers t where t.payment_id = d.payment_id)
           or p.status = 'pending' or (p.status = 'expired' and p.expired_at > ${sql.timestamp(new Date(deps.now().getTime() - 86_400_000))}))
      -- A sandbox chain started afresh on these books (sandbox_chain_epochs.reset) holds nothing of
      -- the deposits issued before it: said once at its start, not as missing money at every run.
      and not (d.network = 'sandbox' and d.created_at < coalesce((select max(e.started_at) from sandbox_chain_epochs e where e.reset), '-infinity'))
      and not exists (select 1 from outgoing_transfers o where o.from_address = d.address
                      and (o.state = 'sent' or (o.state = 'confirmed' and o.confirmed_at > ${sql.timestamp(new Date(deps.now().getTime() - 60_000))})))
    order by r.checked_at nulls first, d.payment_id
    limit ${options.limit ?? 200}
  `);
  const differences: Difference[] = [];
  for (const deposit of deposits) {
    const settled = deposit.settled_until;
    const state = await getAccountState(deps.client, deposit.address);
    if (state.lastTransaction !== null) {
      const [last] = await call(() => deps.client.getTransactions(Address.parse(deposit.address), { limit: 1 }));
      // The reader has not settled the chain a second past the deposit's last transaction (chain
      // time has whole seconds): its books may not have it yet; next time.
      if (!settled || (last && (last.now + 1) * 1000 >= settled.getTime())) continue;
    }
    const tonBooked = async () => BigInt((await pool.one(tonBooks(deposit.address))).booked);
    let booked = await tonBooked();
    if (booked !== state.balance && deps.heal) {
      // Re-read the deposit's history up to the transaction the balance was read at, book what is missing.
      await deps.heal(deposit.address, { toLt: state.lastTransaction?.lt ?? null });
      booked = await tonBooked();
    }
    const found = [await record(deps, deposit.payment_id, 'TON', deposit.address, booked, state.balance)];
    const jettonWallets = await pool.any(sql.type(z.object({ account: z.string(), coin_symbol: z.string() }))`
      select w.account, w.coin_symbol from chain_watches w
      where w.payment_id = ${deposit.payment_id} and w.kind = 'jetton_wallet' and w.account not like 'pending:%'
    `);
    for (const jetton of jettonWallets) {
      const jettonBooked = async () => BigInt(await pool.oneFirst(jettonBooks(deposit.address, jetton.account, jetton.coin_symbol)));
      const onChain = await jettonBalance(deps.client, jetton.account);
      let books = await jettonBooked();
      if (books !== onChain && deps.heal) {
        await deps.heal(jetton.account);
        books = await jettonBooked();
      }
      found.push(await record(deps, deposit.payment_id, jetton.coin_symbol, jetton.account, books, onChain));
    }
    for (const difference of found) if (difference) differences.push(difference);
  }
  return differences;
}

async function jettonBalance(client: ChainClient, wallet: string): Promise<bigint> {
  const state = await getAccountState(client, wallet);
  if (state.state !== 'active') return 0n; // never deployed: it holds nothing
  const result = await call(() => client.runMethod(Address.parse(wallet), 'get_wallet_data'));
  return result.stack.readBigNumber();
}

async function record(deps: ReconcileDeps, paymentId: string, coin: string, account: string, booked: bigint, onChain: bigint): Promise<Difference | null> {
  const difference = onChain - booked;
  await deps.pool.query(sql.typeAlias('void')`
    insert into deposit_reconciliations (payment_id, coin_symbol, account, booked_base_units, on_chain_base_units, difference_base_units, checked_at)
    values (${paymentId}, ${coin}, ${account}, ${booked.toString()}, ${onChain.toString()}, ${difference.toString()}, ${sql.timestamp(deps.now())})
    on conflict (payment_id, coin_symbol) do update set account = excluded.account, booked_base_units = excluded.booked_base_units,
      on_chain_base_units = excluded.on_chain_base_units, difference_base_units = excluded.difference_base_units, checked_at = excluded.checked_at
  `);
  if (difference === 0n) return null;
  deps.log.warn(
    { paymentId, coin, account, booked: booked.toString(), onChain: onChain.toString(), difference: difference.toString() },
    'a deposit holds other than its books say',
  );
  return { paymentId, coin, account, booked, onChain };
}
