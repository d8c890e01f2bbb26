// Reconciliation: each deposit's books (what came in, less what went out and the fees its
// transactions cost) against what the chain says it holds, per coin. Where they differ, the
// account's history is re-read from the chain and what the books miss is booked through the chain
// reader's own path (`heal`, src/reader/heal.ts: idempotent by chain identity), and only then is the
// difference that remains kept in deposit_reconciliations (reporting.deposit_differences), counted
// by the kassa_deposit_differences metric and logged. A deposit whose last transaction is newer
// than what the chain reader has settled (its books may not have it yet), or with a transfer in
// flight, is looked at next time. Deposits of pending (and recently expired) payments are looked
// at too, booked transfers or not: a transfer the block stream never showed is found there. The
// treasuries customers pay by reference are healed by re-reading their recent history, and their
// jetton wallet of each accepted coin's (healTreasuries).
import { Address } from '@ton/core';
import { toChainApiError } from '../chain/apiError.ts';
import { call, getAccountState, getJettonWalletAddress, type ChainClient } from '../chain/client.ts';
import type { AccountHistory } from '../chain/history.ts';
import type { TonNetwork } from '../config.ts';
import { sql, z, type DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';

interface ReconcileDeps {
  pool: DatabasePool;
  client: ChainClient;
  log: Logger;
  now: () => Date;
  /**
   * Re-reads an account's history and books what is missing (src/reader/heal.ts, the chain
   * reader's booking path, given by the task). Without it differences are only reported.
   */
  heal?: Heal;
  /**
   * The jetton wallets with a balance that some owners have (the indexer's `jetton/wallets`,
   * chain/history.ts): how a deposit's jetton of another accepted coin sent without a notification
   * is found. Without it only the payment's own coin's jetton wallet is reconciled.
   */
  jettonWallets?: AccountHistory['jettonWallets'];
  /**
   * The network read (config.tonNetwork): its jetton masters (jetton_masters) name the treasuries'
   * jetton wallets to heal, those the chain reader has not looked up yet asked of the master. Without
   * it only the treasuries' jetton wallets the reader already knows (jetton_wallets) are healed.
   */
  network?: TonNetwork;
}

/**
 * Re-reads `account`'s history (up to `range.toLt`) and books what is missing; `Result` says what it
 * did. `range.as`: the account is a deposit's jetton wallet of another accepted coin, which the
 * reader does not follow (only its transfers that sent no notification are booked from it).
 */
export type Heal<Result = unknown> = (account: string, range?: { toLt?: string | null; as?: OtherJettonWallet }, signal?: AbortSignal) => Promise<Result>;

/** A deposit's jetton wallet of an accepted coin other than its payment's. */
interface OtherJettonWallet {
  paymentId: string;
  deposit: string;
  coin: string;
  master: string;
}

interface Difference {
  paymentId: string;
  coin: string;
  account: string;
  booked: bigint;
  onChain: bigint;
}

/** A deposit to look at, with how far the chain reader of its network has settled (null: no reader yet). */
const depositRow = z.object({ payment_id: z.string(), address: z.string(), network: z.string(), settled_until: z.date().nullable() });
type Deposit = z.infer<typeof depositRow>;

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
    select d.payment_id, d.address, d.network, c.settled_until from deposit_addresses d
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
  const looked: Deposit[] = [];
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
    looked.push(deposit);
  }
  if (deps.jettonWallets && looked.length > 0) differences.push(...(await otherJettons(deps, deps.jettonWallets, looked)));
  if (deps.heal) await healTreasuries(deps, deps.heal);
  return differences;
}

/**
 * Treasuries that customers pay by reference (treasury settlement, issue 43) have no balance to
 * compare with their books (the merchant spends from them): their recent history is re-read instead,
 * with that of their jetton wallet of each accepted coin (a jetton paid there lands on that wallet,
 * with or without a notification to the treasury), for every treasury with payments still payable
 * there (or expired within a day), and what the block stream missed is booked through the reader's
 * path — on its payment, or as unmatched money; idempotent by chain identity. One history read per
 * such account and run.
 */
async function healTreasuries(deps: ReconcileDeps, heal: Heal): Promise<void> {
  const treasuries = await deps.pool.anyFirst(sql.type(z.object({ address: z.string() }))`
    select distinct p.settlement_address as address from payments p
    where p.settlement = 'treasury'
      and (p.status in ('created', 'pending') or (p.status = 'expired' and p.expired_at > ${sql.timestamp(new Date(deps.now().getTime() - 86_400_000))}))
    limit 200
  `);
  for (const treasury of treasuries) {
    for (const account of [treasury, ...(await treasuryJettonWallets(deps, treasury))]) {
      try {
        await heal(account);
      } catch (error) {
        const failure = toChainApiError(error);
        if (failure.retryable) throw failure;
        deps.log.warn({ treasury, account, error: failure.message }, "a treasury's history could not be re-read; next time");
      }
    }
  }
}

/**
 * `treasury`'s jetton wallet of each accepted coin: those the chain reader found (jetton_wallets,
 * genuine, owned by the treasury), and — with `deps.network` — those it has not looked up yet (a
 * reader that has not run since the store settled there), asked of the master as the reader asks
 * (get_wallet_address) and kept for it. A master that fails to answer leaves only its coin's wallet
 * out, this time.
 */
async function treasuryJettonWallets(deps: ReconcileDeps, treasury: string): Promise<readonly string[]> {
  const { pool } = deps;
  if (deps.network) {
    const unknown = await pool.anyFirst(sql.type(z.object({ master_address: z.string() }))`
      select m.master_address from jetton_masters m
      where m.network = ${deps.network}
        and not exists (select 1 from jetton_wallets w where w.owner_address = ${treasury} and w.master_address = m.master_address and w.genuine)
    `);
    for (const master of unknown) {
      let wallet: string;
      try {
        wallet = (await getJettonWalletAddress(deps.client, master, treasury)).toRawString();
      } catch (error) {
        const failure = toChainApiError(error);
        if (failure.retryable) throw failure;
        deps.log.warn({ treasury, master, error: failure.message }, "the treasury's jetton wallet could not be asked of its master; next time");
        continue;
      }
      await pool.query(sql.typeAlias('void')`
        insert into jetton_wallets (address, master_address, owner_address, genuine) values (${wallet}, ${master}, ${treasury}, true)
        on conflict (address) do update set master_address = excluded.master_address, owner_address = excluded.owner_address, genuine = true
      `);
    }
  }
  return pool.anyFirst(sql.type(z.object({ address: z.string() }))`
    select distinct w.address from jetton_wallets w join jetton_masters m on m.master_address = w.master_address
    where w.owner_address = ${treasury} and w.genuine ${deps.network ? sql.fragment`and m.network = ${deps.network}` : sql.fragment``}
    order by w.address
  `);
}

/** Books of another accepted coin on a deposit: credited incoming of that coin (booked from notifications or the wallet's history) less what was sent out (base units). */
const otherJettonBooks = (paymentId: string, deposit: string, coin: string) => sql.type(z.object({ booked: z.string() }))`
  select (
    coalesce((select sum(t.amount_base_units) from transfers t where t.payment_id = ${paymentId} and t.coin_symbol = ${coin} and t.effect <> 'not_credited'), 0)
    - coalesce((select sum(o.sent_amount_base_units) from outgoing_transfers o
                where o.from_address = ${deposit} and o.coin_symbol = ${coin} and o.state = 'confirmed'), 0)
  )::text as booked
`;

/**
 * The deposits' jetton wallets of accepted coins the reader does not follow (coins other than the
 * payment's): one indexer request per OWNERS_PER_REQUEST deposits lists those with a balance; one
 * that holds other than its books is checked against its master (once: jetton_wallets) and its
 * history booked (heal with `as`), which finds a jetton sent with `forward_ton_amount = 0` — no
 * notification, so the block stream shows the deposit nothing — and books it as a wrong coin, or a
 * refund of it that bounced. What still differs is recorded like any other difference.
 */
async function otherJettons(deps: ReconcileDeps, list: NonNullable<ReconcileDeps['jettonWallets']>, deposits: readonly Deposit[]): Promise<Difference[]> {
  const { pool } = deps;
  let wallets: Awaited<ReturnType<typeof list>>['wallets'];
  try {
    ({ wallets } = await list(deposits.map((d) => d.address)));
  } catch (error) {
    // An indexer without the endpoint (or refusing the request) leaves only this part undone.
    const chainError = toChainApiError(error);
    if (chainError.retryable) throw chainError;
    deps.log.warn(
      { err: chainError.message },
      "the chain API did not list the deposits' jetton wallets; jettons sent without a notification are not looked for",
    );
    return [];
  }
  if (wallets.length === 0) return [];
  const byOwner = new Map(deposits.map((d) => [d.address, d]));
  const masters = await pool.any(sql.type(z.object({ network: z.string(), master_address: z.string(), coin_symbol: z.string() }))`
    select network, master_address, coin_symbol from jetton_masters
  `);
  const coinOf = new Map(masters.map((m) => [`${m.network}|${m.master_address}`, m.coin_symbol]));
  const differences: Difference[] = [];
  for (const wallet of wallets) {
    const deposit = byOwner.get(wallet.owner);
    // A token Kassa does not accept is nobody's money on the books (as its notification is not).
    const coin = deposit ? coinOf.get(`${deposit.network}|${wallet.master}`) : undefined;
    if (!deposit || coin === undefined) continue;
    // The payment's own coin: the reader follows that wallet, reconciled above.
    if (await pool.exists(sql.unsafe`select 1 from chain_watches where account = ${wallet.address}`)) continue;
    const books = async () => BigInt(await pool.oneFirst(otherJettonBooks(deposit.payment_id, deposit.address, coin)));
    let booked = await books();
    if (booked !== wallet.balance && deps.heal && (await isDepositsWallet(deps, wallet.address, wallet.master, deposit.address))) {
      await deps.heal(wallet.address, { as: { paymentId: deposit.payment_id, deposit: deposit.address, coin, master: wallet.master } });
      booked = await books();
    }
    const difference = await record(deps, deposit.payment_id, coin, wallet.address, booked, wallet.balance);
    if (difference) differences.push(difference);
  }
  return differences;
}

/** Whether `master` confirms `wallet` as `deposit`'s jetton wallet (the indexer's word is not enough): asked once, kept in jetton_wallets. */
async function isDepositsWallet(deps: ReconcileDeps, wallet: string, master: string, deposit: string): Promise<boolean> {
  const cached = await deps.pool.maybeOneFirst(sql.type(z.object({ genuine: z.boolean() }))`
    select genuine from jetton_wallets where address = ${wallet} and master_address = ${master} and owner_address = ${deposit}
  `);
  if (cached !== null) return cached;
  const genuine = (await getJettonWalletAddress(deps.client, master, deposit)).toRawString() === wallet;
  await deps.pool.query(sql.typeAlias('void')`
    insert into jetton_wallets (address, master_address, owner_address, genuine) values (${wallet}, ${master}, ${deposit}, ${genuine})
    on conflict (address) do nothing
  `);
  return genuine;
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
