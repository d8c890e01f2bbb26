// Booking a block: the transactions of Kassa's accounts (chain_watches: every deposit address and
// deposit jetton wallet ever issued, and the gas wallet; the treasuries customers pay by reference
// and their jetton wallets; the accounts a treasury refund or a jetton transfer on its way is watched
// on) put on the books as classify.ts decides. `blockBooker` reads once what the books know of the
// block's accounts (and who sent a jetton notification), then books each transaction's cases
// (classify.ts casesOf), one function a case: treasuryRefund (treasury/treasuryConfirmations.ts),
// jettonDelivery and moneyOut (Kassa's own messages out: treasury/confirmations.ts), treasuryPayment
// (payments/treasuryTransfers.ts), gasArrival (treasury/refundFees.ts) and moneyIn (recordTransfer,
// with the completion and late-money hooks). Idempotent: a block booked twice changes nothing (the books
// are keyed by the chain's identity of each transaction). The chain reader books every block it
// reads through it; reconciliation's task (tasks/deposits__reconcile.ts) builds one and heals an
// account's history through it (heal.ts).
import { Address } from '@ton/core';
import type { TonNetwork } from '../config.ts';
import { prepared, sql, z, type DatabasePool, type Db } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { chainWatchesSetAside } from '../metrics.ts';
import { recordTransfer, type IncomingTransfer } from '../payments/transfers.ts';
import { confirmOutgoing, jettonTransferBounced, jettonTransferDelivered, jettonTransferRefused } from '../treasury/confirmations.ts';
import { confirmTreasuryRefund, treasuryJettonBounced } from '../treasury/treasuryConfirmations.ts';
import { treasuryTransferSeen, treasuryWatchRow, type TreasuryWatch } from '../treasury/treasuryRefunds.ts';
import { planSaleSweep } from '../treasury/sweeps.ts';
import { subscriptionMoneyHooks } from '../subscriptions/engine.ts';
import { toChainApiError } from '../chain/apiError.ts';
import { call, getJettonWalletAddress, type ChainClient } from '../chain/client.ts';
import type { ChainBlock } from '../chain/source.ts';
import type { ChainTransaction } from '../chain/transactions.ts';
import { bookTreasuryTransfer } from '../payments/treasuryTransfers.ts';
import {
  type BlockAccounts,
  type Case,
  casesOf,
  classifyIncoming,
  classifyTreasuryIncoming,
  classifyTreasuryJettonIncoming,
  deliveryOutcome,
  type JettonDelivery,
  type Notifier,
  type SettlementTreasury,
  type Watch,
} from './classify.ts';
import { detectBouncedJettonTransfer, detectTonTransfer } from '../chain/detect.ts';
import { bookGasArrival } from '../treasury/refundFees.ts';
import { transferQueryId } from '../chain/jettonTransfer.ts';

const watchRow = z.object({
  account: z.string(),
  payment_id: z.string(),
  kind: z.enum(['deposit', 'jetton_wallet']),
  coin_symbol: z.string().nullable(),
  jetton_master: z.string().nullable(),
  deposit_address: z.string(),
});

const pendingRow = z.object({
  account: z.string(),
  payment_id: z.string(),
  coin_symbol: z.string(),
  jetton_master: z.string(),
  deposit_address: z.string(),
});

const rawOf = (address: Address | string): string => (typeof address === 'string' ? Address.parse(address) : address).toRawString();

export function blockBooker(deps: {
  pool: DatabasePool;
  network: TonNetwork;
  /** For get methods: pending jetton wallets, and attributing jetton notifications. */
  client: ChainClient;
  log: Logger;
  now: () => Date;
}) {
  const { pool, network, client, log } = deps;
  /** What completion sets going: the sale's sweep, and a subscription's credit (and its engine run). */
  const subscriptionHooks = subscriptionMoneyHooks(network);
  const onCompleted = async (tx: Db, paymentId: string, now: Date): Promise<void> => {
    await planSaleSweep(tx, paymentId, now);
    await subscriptionHooks.onCompleted(tx, paymentId);
  };
  const { onLateMoney } = subscriptionHooks;
  const masterCoins = new Map<string, string | null>();
  let gasWallet: string | null = null;
  /** When the gas wallet was last looked for and not found (every process records it at start, before its reader runs; asked again at most every 5 s). */
  let gasLookedFor = 0;

  /** Kassa's gas wallet (gas_wallets): its outgoing transactions are confirmed like the deposits'. */
  async function gas(): Promise<string | null> {
    if (gasWallet === null && Date.now() - gasLookedFor >= 5_000) {
      gasWallet = await pool.maybeOneFirst(sql.type(z.object({ address: z.string() }))`select address from gas_wallets where network = ${network}`);
      if (gasWallet === null) gasLookedFor = Date.now();
    }
    return gasWallet;
  }

  async function coinOfMaster(master: string): Promise<string | null> {
    if (!masterCoins.has(master)) {
      const coin = await pool.maybeOneFirst(sql.type(z.object({ coin_symbol: z.string() }))`
        select coin_symbol from jetton_masters where master_address = ${master} and network = ${network}
      `);
      masterCoins.set(master, coin);
    }
    return masterCoins.get(master) ?? null;
  }

  /**
   * Who sent a jetton notification to `deposit`: asked of the chain once per sending wallet ever
   * (jetton_wallets), so a flood of notifications from fake wallets costs nothing after the first.
   * Genuine: the master the wallet names confirms it as `deposit`'s wallet.
   */
  async function attribute(wallet: string, deposit: string): Promise<{ master: string | null; genuine: boolean; owner: string | null }> {
    const cached = await pool.maybeOne(sql.type(
      z.object({ master_address: z.string().nullable(), owner_address: z.string().nullable(), genuine: z.boolean() }),
    )`
      select master_address, owner_address, genuine from jetton_wallets where address = ${wallet}
    `);
    if (cached) return { master: cached.master_address, owner: cached.owner_address, genuine: cached.genuine };
    let master: string | null = null;
    let owner: string | null = null;
    let genuine = false;
    try {
      const data = await call(() => client.runMethod(Address.parse(wallet), 'get_wallet_data'));
      data.stack.readBigNumber();
      owner = data.stack.readAddress().toRawString();
      master = data.stack.readAddress().toRawString();
    } catch (error) {
      const chainError = toChainApiError(error);
      if (chainError.retryable) throw chainError;
    }
    if (master !== null && owner === deposit && (await coinOfMaster(master)) !== null) {
      genuine = rawOf(await getJettonWalletAddress(client, master, deposit)) === wallet;
    }
    await pool.query(sql.typeAlias('void')`
      insert into jetton_wallets (address, master_address, owner_address, genuine) values (${wallet}, ${master}, ${owner}, ${genuine})
      on conflict (address) do nothing
    `);
    return { master, owner, genuine };
  }

  /** Who sent a jetton notification to `watch`'s deposit (classify.ts decides what that makes of it). */
  async function notifierOf(wallet: string, watch: Watch): Promise<Notifier> {
    const own = await pool.exists(
      sql.unsafe`select 1 from chain_watches where payment_id = ${watch.payment_id} and kind = 'jetton_wallet' and account = ${wallet}`,
    );
    if (own) return { own: true };
    const who = await attribute(wallet, watch.deposit_address);
    return { own: false, master: who.master, coin: who.genuine && who.master !== null ? await coinOfMaster(who.master) : null };
  }

  /** What one transaction on a watched account puts on the books (null: nothing incoming). */
  async function transferOf(watch: Watch, tx: ChainTransaction, gasWallet: string | null): Promise<IncomingTransfer | null> {
    const decided = classifyIncoming(watch, tx, { gasWallet });
    if (decided === null || !('needs' in decided)) return decided;
    const settled = classifyIncoming(watch, tx, { gasWallet, notifier: await notifierOf(decided.wallet, watch) });
    if (settled !== null && 'needs' in settled) throw new Error('classifyIncoming asked twice who sent a notification');
    return settled;
  }

  /** Jetton wallets whose address could not be computed offline: asked of their master, before any block is read. */
  async function resolvePendingJettonWallets(): Promise<void> {
    const pending = await pool.any(sql.type(pendingRow)`
      select w.account, w.payment_id, w.coin_symbol, w.jetton_master, d.address as deposit_address
      from chain_watches w join deposit_addresses d on d.payment_id = w.payment_id
      where w.account like 'pending:%' and w.set_aside_at is null
    `);
    for (const row of pending) {
      let wallet: string;
      try {
        wallet = rawOf(await getJettonWalletAddress(client, row.jetton_master, row.deposit_address));
      } catch (error) {
        const failure = toChainApiError(error);
        if (failure.retryable) throw failure;
        await setAside(row, failure.message);
        continue;
      }
      await pool.query(sql.typeAlias('void')`update chain_watches set account = ${wallet} where account = ${row.account}`);
    }
  }

  /**
   * A jetton wallet its master will not give (get_wallet_address failed for good: an odd master, an
   * exotic wallet): asked no more, so the reader reads on for every other payment; reported (the log,
   * kassa_chain_watches_set_aside_total, kassa doctor's `watches set aside`).
   */
  async function setAside(row: z.infer<typeof pendingRow>, reason: string): Promise<void> {
    await pool.query(sql.typeAlias('void')`
      update chain_watches set set_aside_at = ${sql.timestamp(deps.now())}, set_aside_reason = ${reason} where account = ${row.account}
    `);
    chainWatchesSetAside.inc();
    log.error(
      { paymentId: row.payment_id, coin: row.coin_symbol, master: row.jetton_master, deposit: row.deposit_address, reason },
      "the deposit's jetton wallet cannot be computed (its master's get_wallet_address failed for good): set aside, the reader reads on; this payment cannot be booked in that coin (kassa doctor)",
    );
  }

  async function watchesOf(accounts: string[]): Promise<Map<string, Watch>> {
    if (accounts.length === 0) return new Map();
    const rows = await pool.any(
      prepared(sql.type(watchRow)`
      select w.account, w.payment_id, w.kind, w.coin_symbol, w.jetton_master, d.address as deposit_address
      from chain_watches w join deposit_addresses d on d.payment_id = w.payment_id
      where w.account = any(${sql.array(accounts, 'text')})
    `),
    );
    return new Map(rows.map((row) => [row.account, row]));
  }

  /**
   * The treasury refunds watching these accounts (a store's treasury, or its jetton wallet: the
   * merchant's wallet signs them, treasuryRefunds.ts; and a TON refund's customer, paid through its
   * ton:// link from another account), by account. Every one ever made, confirmed
   * too: a request signed twice pays twice, and the repeat is booked.
   */
  async function treasuryWatchesOf(accounts: string[]): Promise<Map<string, TreasuryWatch[]>> {
    if (accounts.length === 0) return new Map();
    const rows = await pool.any(
      prepared(sql.type(treasuryWatchRow)`
      select id, from_address, to_address, watch_account, coin_symbol, amount_base_units::text as amount_base_units, reference
      from outgoing_transfers where source = 'treasury' and watch_account = any(${sql.array(accounts, 'text')})
      union
      select id, from_address, to_address, watch_account, coin_symbol, amount_base_units::text as amount_base_units, reference
      from outgoing_transfers where source = 'treasury' and coin_symbol = 'TON' and to_address = any(${sql.array(accounts, 'text')})
    `),
    );
    const byAccount = new Map<string, TreasuryWatch[]>();
    const add = (account: string, row: TreasuryWatch) => byAccount.set(account, [...(byAccount.get(account) ?? []), row]);
    const wanted = new Set(accounts);
    for (const row of rows) {
      if (wanted.has(row.watch_account)) add(row.watch_account, row);
      // TON paid through the refund's ton:// link from any account: seen where it arrives.
      if (row.coin_symbol === 'TON' && row.to_address !== row.watch_account && wanted.has(row.to_address)) add(row.to_address, row);
    }
    return byAccount;
  }

  /**
   * The treasuries among these accounts that customers pay by reference (CONTRACT §12), and those
   * treasuries' jetton wallets of the accepted coins (resolveTreasuryJettonWallets found them), with
   * the stores they are paid for: a store settling there now, or one whose payments created to
   * settle there are still open (a store that switched back to deposits strands none of them).
   */
  async function settlementTreasuriesOf(accounts: string[]): Promise<Map<string, SettlementTreasury>> {
    if (accounts.length === 0) return new Map();
    const wanted = sql.array(accounts, 'text');
    const rows = await pool.any(
      prepared(sql.type(
        z.object({
          account: z.string(),
          store_id: z.string(),
          treasury: z.string(),
          coin_symbol: z.string().nullable(),
          jetton_master: z.string().nullable(),
          decimals: z.number().nullable(),
        }),
      )`
      select s.treasury as account, s.id as store_id, s.treasury, null::text as coin_symbol, null::text as jetton_master, null::int as decimals
      from stores s where s.settlement = 'treasury' and s.treasury = any(${wanted})
      union
      select p.settlement_address, p.store_id, p.settlement_address, null, null, null from payments p
      where p.settlement = 'treasury' and p.reference is not null and p.status in ('created', 'pending') and p.settlement_address = any(${wanted})
      union
      select w.address, t.store_id, w.owner_address, m.coin_symbol, m.master_address, c.decimals::int
      from jetton_wallets w
      join jetton_masters m on m.master_address = w.master_address and m.network = ${network}
      join coins c on c.symbol = m.coin_symbol
      cross join lateral (
        select s.id as store_id from stores s where s.settlement = 'treasury' and s.treasury = w.owner_address
        union
        select p.store_id from payments p
        where p.settlement = 'treasury' and p.reference is not null and p.status in ('created', 'pending') and p.settlement_address = w.owner_address
      ) t
      where w.genuine and w.address = any(${wanted})
    `),
    );
    const byAccount = new Map<string, SettlementTreasury>();
    for (const row of rows) {
      const jetton =
        row.coin_symbol !== null && row.jetton_master !== null && row.decimals !== null
          ? { treasury: row.treasury, coinSymbol: row.coin_symbol, jettonMaster: row.jetton_master, decimals: row.decimals }
          : null;
      const seen = byAccount.get(row.account);
      byAccount.set(row.account, { stores: [...(seen?.stores ?? []), row.store_id], jetton: seen?.jetton ?? jetton });
    }
    return byAccount;
  }

  /**
   * The jetton transfers out of deposits on their way (confirmed when they left, not delivered yet)
   * whose receiving or sending jetton wallet is among these accounts, by account: the receiving
   * wallet's internal_transfer delivers one, the sending wallet's bounce fails it — whatever its coin
   * (a deposit's jetton wallet of another coin than the payment's is no watch of its own).
   */
  async function deliveriesOf(accounts: string[]): Promise<Map<string, JettonDelivery[]>> {
    if (accounts.length === 0) return new Map();
    const rows = await pool.any(
      prepared(sql.type(
        z.object({
          id: z.string(),
          from_address: z.string(),
          coin_symbol: z.string(),
          jetton_wallet: z.string(),
          destination_jetton_wallet: z.string(),
          query_id: z.string(),
          amount_base_units: z.string(),
        }),
      )`
      select id, from_address, coin_symbol, jetton_wallet, destination_jetton_wallet, query_id::text as query_id, amount_base_units::text as amount_base_units
      from outgoing_transfers
      where state = 'confirmed' and delivered_at is null and query_id is not null and jetton_wallet is not null and destination_jetton_wallet is not null
        and (destination_jetton_wallet = any(${sql.array(accounts, 'text')}) or jetton_wallet = any(${sql.array(accounts, 'text')}))
    `),
    );
    const byAccount = new Map<string, JettonDelivery[]>();
    for (const row of rows)
      for (const account of new Set([row.destination_jetton_wallet, row.jetton_wallet])) byAccount.set(account, [...(byAccount.get(account) ?? []), row]);
    return byAccount;
  }

  /** Whether `sender` is one of Kassa's wallets (a deposit or the gas wallet): its transfers into a treasury are Kassa's own. */
  async function sentByKassa(sender: string | null, gasAccount: string | null): Promise<boolean> {
    if (sender === null) return false;
    if (sender === gasAccount) return true;
    return pool.exists(sql.unsafe`select 1 from deposit_addresses where address = ${sender}`);
  }

  /** Treasury and master pairs whose jetton wallet is known (in jetton_wallets), so not asked again. */
  const treasuryWalletsKnown = new Set<string>();
  /** When a pair's master last failed to answer for good (asked again after a minute). */
  const treasuryWalletsFailed = new Map<string, number>();

  /**
   * The jetton wallet of every accepted coin (jetton_masters) of each treasury customers pay by
   * reference, asked of the master (get_wallet_address, as for deposits) once per treasury and coin
   * and kept in jetton_wallets as genuine (owner: the treasury): the reader then reads those wallets
   * block by block like the treasury itself. Before any block is read, so a store switched to the
   * treasury has its jetton wallets read from the next block on.
   */
  async function resolveTreasuryJettonWallets(): Promise<void> {
    const pairs = await pool.any(
      prepared(sql.type(z.object({ treasury: z.string(), master: z.string() }))`
      select t.treasury, m.master_address as master
      from (select s.treasury from stores s where s.settlement = 'treasury'
            union
            select p.settlement_address from payments p where p.settlement = 'treasury' and p.reference is not null and p.status in ('created', 'pending')) t
      cross join jetton_masters m where m.network = ${network} and t.treasury is not null
    `),
    );
    for (const { treasury, master } of pairs) {
      const key = `${treasury}|${master}`;
      if (treasuryWalletsKnown.has(key) || Date.now() - (treasuryWalletsFailed.get(key) ?? 0) < 60_000) continue;
      const known = await pool.exists(sql.unsafe`select 1 from jetton_wallets where owner_address = ${treasury} and master_address = ${master} and genuine`);
      if (!known) {
        let wallet: string;
        try {
          wallet = rawOf(await getJettonWalletAddress(client, master, treasury));
        } catch (error) {
          const failure = toChainApiError(error);
          if (failure.retryable) throw failure;
          treasuryWalletsFailed.set(key, Date.now());
          log.error(
            { treasury, master, reason: failure.message },
            "the treasury's jetton wallet cannot be computed (its master's get_wallet_address failed): its jettons are not read yet",
          );
          continue;
        }
        await pool.query(sql.typeAlias('void')`
          insert into jetton_wallets (address, master_address, owner_address, genuine) values (${wallet}, ${master}, ${treasury}, true)
          on conflict (address) do update set master_address = excluded.master_address, owner_address = excluded.owner_address, genuine = true
        `);
      }
      treasuryWalletsKnown.add(key);
    }
  }

  /** What one block's booking knows: its accounts as the books have them, and what it has booked. */
  interface Booking {
    block: ChainBlock;
    accounts: BlockAccounts;
    /** The block's accounts (to read the deliveries again). */
    touched: string[];
    /** Reconciliation's heal of an account the reader does not follow (book's `also`). */
    also: Watch | undefined;
  }

  /** A transfer leaving a store's treasury (or its jetton wallet) for a treasury refund, matched by its reference; or its jettons back. */
  async function treasuryRefund(tx: ChainTransaction, refunds: TreasuryWatch[], { block }: Booking): Promise<number> {
    const seen = treasuryTransferSeen(tx, refunds);
    if (seen) {
      const outcome = await confirmTreasuryRefund(pool, seen, tx, deps.now(), log);
      log.info({ refundId: seen.refundId, account: tx.account, hash: tx.hash, outcome, block: block.seqno }, 'treasury refund transfer seen');
    }
    // A treasury jetton refund the customer's jetton wallet refused, back at the treasury's jetton wallet (its query id is the refund's).
    const back = detectBouncedJettonTransfer(tx);
    // Its amount is checked against what the refund moved, read under lock (treasuryJettonBounced): the
    // rows here were read before this block, whose transfer out may have been signed for another
    // amount than asked and confirmed so a moment ago (issue 48.13).
    const refund = back && refunds.find((r) => r.coin_symbol !== 'TON' && transferQueryId(r.id) === back.queryId);
    if (refund && back) await treasuryJettonBounced(pool, refund.id, back.amount, tx, deps.now(), log);
    return 0;
  }

  /** A jetton transfer out of a deposit on its way: refused by the sending jetton wallet, delivered, or bounced at its destination. */
  async function jettonDelivery(tx: ChainTransaction, deliveries: JettonDelivery[]): Promise<number> {
    for (const delivery of deliveries) {
      const deposit = { deposit: delivery.from_address, coin: delivery.coin_symbol };
      // The sending jetton wallet refused the deposit's transfer itself (any coin; the payment's own is also a watch).
      if (tx.account === delivery.jetton_wallet && tx.inMessage?.source === delivery.from_address)
        await jettonTransferRefused(pool, deposit, tx, deps.now(), log);
      const seen = deliveryOutcome(tx, delivery);
      if (seen?.outcome === 'delivered') await jettonTransferDelivered(pool, delivery.id, tx, deps.now(), log);
      else if (seen?.outcome === 'bounced') await jettonTransferBounced(pool, deposit, seen, tx, deps.now(), log);
    }
    return 0;
  }

  /** Money into a treasury that customers pay by reference (TON, or jettons into its jetton wallet): on its payment, or kept as unmatched. */
  async function treasuryPayment(tx: ChainTransaction, treasury: SettlementTreasury, { block, accounts }: Booking): Promise<number> {
    const incoming = treasury.jetton ? classifyTreasuryJettonIncoming(tx, treasury.jetton) : classifyTreasuryIncoming(tx);
    if (!incoming) return 0;
    if (await sentByKassa(incoming.sender, accounts.gasWallet)) {
      // A deposit's sweep or a closing message's carry-all (of a payment made before the store settled
      // to its treasury), or the gas wallet's: booked as it left, never a customer's money to match.
      log.info({ account: tx.account, hash: tx.hash, sender: incoming.sender, block: block.seqno }, "Kassa's own transfer into a treasury: not a customer's");
      return 0;
    }
    const outcome = await bookTreasuryTransfer(pool, treasury.stores, incoming, deps.now(), subscriptionHooks);
    log.info(
      { ...outcome, account: tx.account, hash: incoming.hash, coin: incoming.coinSymbol, amount: incoming.amountBaseUnits.toString(), block: block.seqno },
      outcome.booked === 'payment' ? 'treasury transfer recorded' : 'treasury transfer matched no payment',
    );
    return outcome.booked !== 'nothing' && outcome.recorded ? 1 : 0;
  }

  /**
   * TON into the gas wallet from outside Kassa: a store's refund fee top-up (by its reference), or
   * money with no known owner, kept (refundFees.ts). Kassa's own coming back (a payment address's
   * unused TON, token change, a bounce) is already on the books as it left.
   */
  async function gasArrival(tx: ChainTransaction, { accounts }: Booking): Promise<number> {
    const ton = detectTonTransfer(tx);
    if (ton?.counted && ton.sender !== null && ton.amount > 0n && !(await sentByKassa(ton.sender, accounts.gasWallet)))
      await bookGasArrival(pool, { network, tx, transfer: { ...ton, sender: ton.sender }, now: deps.now() }, log);
    return 0;
  }

  /** A transaction of a deposit or the gas wallet started by an external message (Kassa's signer): money out, confirmed. */
  async function moneyOut(tx: ChainTransaction, paymentId: string | null, booking: Booking): Promise<number> {
    const outcome = await confirmOutgoing(pool, tx, deps.now(), log);
    log.info({ paymentId, account: tx.account, hash: tx.hash, outcome, block: booking.block.seqno }, 'outgoing transaction seen');
    // Read again: the jettons of a transfer out this block confirms may arrive further on in the same block.
    if (!booking.also) booking.accounts.deliveries = await deliveriesOf(booking.touched);
    return 0;
  }

  /**
   * A transaction on a deposit or its jetton wallet: the deposit's jetton transfer refused or back,
   * and what came in, recorded on its payment. A completed payment's counted amount moves to the
   * store's treasury (when it has one), planned in the completing transaction (onCompleted).
   */
  async function moneyIn(tx: ChainTransaction, route: Extract<Case, { kind: 'moneyIn' }>, { block, accounts }: Booking): Promise<number> {
    const { watch } = route;
    const own = { deposit: watch.deposit_address, coin: watch.coin_symbol };
    if (route.jettonTransferOut) await jettonTransferRefused(pool, own, tx, deps.now(), log);
    if (route.jettonTransferBack) await jettonTransferBounced(pool, own, route.jettonTransferBack, tx, deps.now(), log);
    const transfer = await transferOf(watch, tx, accounts.gasWallet);
    if (!transfer) return 0;
    const outcome = await recordTransfer(pool, transfer, deps.now(), { onCompleted, onLateMoney });
    if (!outcome.recorded) return 0;
    log.info(
      {
        paymentId: watch.payment_id,
        account: tx.account,
        hash: transfer.hash,
        coin: transfer.coinSymbol,
        amount: transfer.amountBaseUnits.toString(),
        effect: outcome.effect,
        block: block.seqno,
      },
      'transfer recorded',
    );
    return 1;
  }

  /** Books one case of a transaction (classify.ts's casesOf): how many transfers it recorded. */
  function bookCase(tx: ChainTransaction, what: Case, booking: Booking): Promise<number> {
    switch (what.kind) {
      case 'treasuryRefund':
        return treasuryRefund(tx, what.refunds, booking);
      case 'jettonDelivery':
        return jettonDelivery(tx, what.deliveries);
      case 'treasuryPayment':
        return treasuryPayment(tx, what.treasury, booking);
      case 'gasArrival':
        return gasArrival(tx, booking);
      case 'moneyOut':
        return moneyOut(tx, what.paymentId, booking);
      case 'moneyIn':
        return moneyIn(tx, what, booking);
    }
  }

  /** What the books know of the block's accounts. Reconciliation's heal (`also`) books deposits only: no treasury or delivery is read. */
  async function accountsOf(touched: string[], also: Watch | undefined): Promise<BlockAccounts> {
    const watches = await watchesOf(touched);
    if (also && !watches.has(also.account)) watches.set(also.account, also);
    return {
      watches,
      treasuryRefunds: also ? new Map() : await treasuryWatchesOf(touched),
      treasuries: also ? new Map() : await settlementTreasuriesOf(touched),
      deliveries: also ? new Map() : await deliveriesOf(touched),
      gasWallet: await gas(),
    };
  }

  /**
   * Books every transaction of `block` on Kassa's accounts, case by case (classify.ts's casesOf).
   * Idempotent: a block read twice changes nothing. `also`: an account the reader does not follow,
   * booked as this watch (reconciliation's heal of a deposit's jetton wallet of another coin).
   */
  async function book(block: ChainBlock, also?: Watch): Promise<number> {
    const touched = [...new Set(block.transactions.map((tx) => tx.account))];
    const booking: Booking = { block, accounts: await accountsOf(touched, also), touched, also };
    let recorded = 0;
    for (const tx of block.transactions) for (const what of casesOf(tx, booking.accounts)) recorded += await bookCase(tx, what, booking);
    return recorded;
  }

  return { book, resolvePendingJettonWallets, resolveTreasuryJettonWallets };
}

export type BlockBooker = ReturnType<typeof blockBooker>;
