// The chain watcher: reads every watched account (deposit addresses and their jetton wallets)
// from a toncenter-compatible API with per-account cursors, and records what arrived in the books.
// I/O lives here; what a transfer does to its payment is decided in payments/transfers.ts.
import { Address, type Transaction } from '@ton/core';
import type { Config } from '../config.ts';
import { sql, z, type DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { recordTransfer, type IncomingTransfer } from '../payments/transfers.ts';
import { ChainApiError, fetchNewTransactions, getJettonWalletAddress, toChainApiError, type ChainClient } from './client.ts';
import { detectJettonTransfer, detectTonTransfer, OP_JETTON_TRANSFER_NOTIFICATION } from './detect.ts';

/** How often an account is read while its payment is pending, and afterwards (late money). */
export const PENDING_INTERVAL_MS = 1_000;
export const ENDED_INTERVAL_MS = 60_000;
/** Deposit addresses stay watched this long after a payment ends. */
export const WATCH_AFTER_END_MS = 24 * 60 * 60 * 1000;
/**
 * A claimed account is not claimed again by another worker for this long. A round renews the
 * lease of the accounts it has not read yet while it works, so a long round keeps them, and a
 * worker that dies mid-round holds them at most this long.
 */
const LEASE_MS = 10_000;
const MAX_BACKOFF_MS = 5 * 60_000;

export interface WatcherDeps {
  pool: DatabasePool;
  config: Pick<Config, 'tonNetwork'>;
  client: ChainClient;
  log: Logger;
  now: () => Date;
}

const watchRow = z.object({
  account: z.string(),
  payment_id: z.string(),
  kind: z.enum(['deposit', 'jetton_wallet']),
  coin_symbol: z.string().nullable(),
  jetton_master: z.string().nullable(),
  cursor_lt: z.string().nullable(),
  cursor_hash: z.string().nullable(),
  consecutive_failures: z.number(),
  deposit_address: z.string(),
  open: z.boolean(),
});
export type Watch = z.infer<typeof watchRow>;

/** Accounts worth reading: the payment is pending, or ended less than 24 hours ago. */
function watchableAt(now: Date) {
  return sql.fragment`(p.status = 'pending' or greatest(p.expires_at, coalesce(p.paid_at, p.cancelled_at, p.expired_at, p.expires_at)) > ${sql.timestamp(new Date(now.getTime() - WATCH_AFTER_END_MS))})`;
}

/** Claims up to `limit` due accounts (skip locked, leased), so several workers share the work. */
export async function claimDueWatches(pool: DatabasePool, now: Date, limit: number): Promise<readonly Watch[]> {
  return pool.any(sql.type(watchRow)`
    with due as (
      select w.account from chain_watches w join payments p on p.id = w.payment_id
      where w.next_check_at <= ${sql.timestamp(now)} and ${watchableAt(now)}
      order by (p.status = 'pending') desc, w.next_check_at
      limit ${limit}
      for update of w skip locked
    ), claimed as (
      update chain_watches w set next_check_at = ${sql.timestamp(new Date(now.getTime() + LEASE_MS))}
      from due where w.account = due.account
      returning w.*
    )
    select c.account, c.payment_id, c.kind, c.coin_symbol, c.jetton_master, c.cursor_lt::text as cursor_lt, c.cursor_hash,
           c.consecutive_failures, d.address as deposit_address, p.status = 'pending' as open
    from claimed c join deposit_addresses d on d.payment_id = c.payment_id join payments p on p.id = c.payment_id
  `);
}

async function watchesOfPayment(pool: DatabasePool, paymentId: string): Promise<readonly Watch[]> {
  return pool.any(sql.type(watchRow)`
    select w.account, w.payment_id, w.kind, w.coin_symbol, w.jetton_master, w.cursor_lt::text as cursor_lt, w.cursor_hash,
           w.consecutive_failures, d.address as deposit_address, p.status = 'pending' as open
    from chain_watches w join deposit_addresses d on d.payment_id = w.payment_id join payments p on p.id = w.payment_id
    where w.payment_id = ${paymentId}
    order by w.kind desc
  `);
}

/**
 * A comment as the books keep it: PostgreSQL text cannot hold U+0000 (anyone can send one to a
 * deposit address), and nobody needs more than 1,000 characters of it.
 */
export function bookComment(comment: string | undefined): string | null {
  if (comment === undefined) return null;
  return comment.replaceAll('\u0000', '\uFFFD').slice(0, 1000);
}

const rawOf = (address: Address | string): string => (typeof address === 'string' ? Address.parse(address) : address).toRawString();

/** transfer_notification#7362d09c query_id:uint64 amount:Coins sender:MsgAddress … */
function parseNotification(tx: Transaction): { amount: bigint; sender: string | null } | null {
  const body = tx.inMessage?.body;
  if (!body) return null;
  try {
    const s = body.beginParse();
    if (s.loadUint(32) !== OP_JETTON_TRANSFER_NOTIFICATION) return null;
    s.loadUintBig(64);
    const amount = s.loadCoins();
    const sender = s.loadMaybeAddress();
    return { amount, sender: sender ? sender.toRawString() : null };
  } catch {
    return null;
  }
}

export function createChainWatcher(deps: WatcherDeps) {
  const { pool, client, log } = deps;
  const masterCoins = new Map<string, string | null>();

  async function coinOfMaster(master: string): Promise<string | null> {
    if (!masterCoins.has(master)) {
      const coin = await pool.maybeOneFirst(sql.type(z.object({ coin_symbol: z.string() }))`
        select coin_symbol from jetton_masters where master_address = ${master} and network = ${deps.config.tonNetwork}
      `);
      masterCoins.set(master, coin);
    }
    return masterCoins.get(master) ?? null;
  }

  /** A jetton notification on the deposit: which jetton is it, and is it one Kassa accepts? */
  async function attributeNotification(watch: Watch, source: string): Promise<{ coin: string | null; master: string | null }> {
    let master: string;
    try {
      const data = await client.runMethod(Address.parse(source), 'get_wallet_data');
      data.stack.readBigNumber();
      data.stack.readAddress();
      master = data.stack.readAddress().toRawString();
    } catch (error) {
      const chainError = toChainApiError(error);
      if (chainError.retryable) throw chainError;
      return { coin: null, master: null };
    }
    const coin = await coinOfMaster(master);
    if (coin === null) return { coin: null, master };
    // Only the master's own wallet for this owner is that coin; anything else is a look-alike.
    const canonical = rawOf(await getJettonWalletAddress(client, master, watch.deposit_address));
    return canonical === source ? { coin, master } : { coin: null, master };
  }

  async function transfersOf(watch: Watch, tx: Transaction): Promise<IncomingTransfer | null> {
    const base = { account: watch.account, paymentId: watch.payment_id, depositAddress: watch.deposit_address };
    if (watch.kind === 'jetton_wallet') {
      const jetton = detectJettonTransfer(tx);
      if (!jetton) return null;
      return {
        ...base,
        lt: jetton.lt,
        hash: jetton.hash,
        coinSymbol: watch.coin_symbol,
        jettonMaster: watch.jetton_master,
        amountBaseUnits: jetton.amount,
        sender: jetton.sender,
        comment: bookComment(jetton.comment),
        chainTime: new Date(jetton.utime * 1000),
        credited: jetton.counted,
        payment: true,
        detail: jetton.reason ?? null,
      };
    }
    const ton = detectTonTransfer(tx);
    if (!ton) return null;
    const common = { ...base, lt: ton.lt, hash: ton.hash, chainTime: new Date(ton.utime * 1000), comment: bookComment(ton.comment) };
    if (ton.reason === 'jetton_notification' && ton.sender) {
      const notified = parseNotification(tx);
      // The payment's own jetton wallet needs no questions: its transfer is counted there.
      const own = await pool.exists(sql.unsafe`select 1 from chain_watches where payment_id = ${watch.payment_id} and kind = 'jetton_wallet' and account = ${ton.sender}`);
      const { coin, master } = own ? { coin: watch.coin_symbol, master: null } : await attributeNotification(watch, ton.sender);
      const ownCoin = coin !== null && coin === watch.coin_symbol;
      if (notified && !ownCoin) {
        // Another accepted jetton (wrong coin) or a token Kassa does not accept: the notification
        // is the only trace on our side, so it is what the books record.
        return {
          ...common,
          coinSymbol: coin,
          jettonMaster: master,
          amountBaseUnits: notified.amount,
          sender: notified.sender,
          credited: true,
          payment: true,
          detail: `jetton_notification from ${ton.sender}; ${ton.amount} nanoTON forwarded`,
        };
      }
    }
    return {
      ...common,
      coinSymbol: 'TON',
      jettonMaster: null,
      amountBaseUnits: ton.amount,
      sender: ton.sender,
      credited: ton.reason !== 'value_returned',
      payment: ton.counted,
      detail: ton.reason ?? null,
    };
  }

  /** Reads one account once: new transactions into the books, then the cursor. */
  async function scan(watch: Watch): Promise<{ recorded: number; completed: boolean }> {
    let account = watch.account;
    if (watch.kind === 'jetton_wallet' && account.startsWith('pending:')) {
      const wallet = rawOf(await getJettonWalletAddress(client, watch.jetton_master!, watch.deposit_address));
      await pool.query(sql.typeAlias('void')`update chain_watches set account = ${wallet} where account = ${account}`);
      account = wallet;
    }
    const current: Watch = { ...watch, account };
    const cursor = watch.cursor_lt && watch.cursor_hash ? { lt: watch.cursor_lt, hash: watch.cursor_hash } : null;
    const page = await fetchNewTransactions(client, account, cursor, { limit: 50, maxPages: 40 });
    if (page.truncated) log.warn({ account, paymentId: watch.payment_id }, 'more new transactions than one read covers; continuing next round');
    let recorded = 0;
    let completed = false;
    for (const tx of page.transactions) {
      const transfer = await transfersOf(current, tx);
      if (!transfer) continue;
      const outcome = await recordTransfer(pool, transfer, deps.now());
      if (outcome.recorded) {
        recorded += 1;
        completed ||= outcome.completed;
        log.info({ paymentId: watch.payment_id, account, hash: transfer.hash, coin: transfer.coinSymbol, amount: transfer.amountBaseUnits.toString(), effect: outcome.effect }, 'transfer recorded');
      }
    }
    const next = new Date(deps.now().getTime() + (watch.open && !completed ? PENDING_INTERVAL_MS : ENDED_INTERVAL_MS));
    const newest = page.cursor;
    await pool.query(sql.typeAlias('void')`
      update chain_watches set
        cursor_lt = ${newest ? newest.lt : null}, cursor_hash = ${newest ? newest.hash : null},
        last_checked_at = ${sql.timestamp(deps.now())}, next_check_at = ${sql.timestamp(next)}, consecutive_failures = 0
      where account = ${account}
    `);
    return { recorded, completed };
  }

  async function backOff(watch: Watch, error: ChainApiError): Promise<void> {
    const failures = watch.consecutive_failures + 1;
    const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(failures, 12));
    await pool.query(sql.typeAlias('void')`
      update chain_watches set consecutive_failures = ${failures}, next_check_at = ${sql.timestamp(new Date(deps.now().getTime() + delay))}
      where account = ${watch.account}
    `);
    log.warn({ account: watch.account, status: error.status, failures, delayMs: delay, err: error.message }, 'chain API error; backing off');
  }

  return {
    /**
     * One round: claims due accounts and reads each. A rate limit (429) or server error ends the
     * round early (the remaining accounts keep their lease and are read later). Returns counts.
     */
    async round(limit = 100): Promise<{ claimed: number; scanned: number; recorded: number; backedOff: boolean }> {
      const watches = await claimDueWatches(pool, deps.now(), limit);
      const claimed = watches.length;
      let scanned = 0;
      let recorded = 0;
      let leaseEnds = deps.now().getTime() + LEASE_MS;
      for (const [index, watch] of watches.entries()) {
        if (deps.now().getTime() >= leaseEnds - LEASE_MS / 2) {
          leaseEnds = deps.now().getTime() + LEASE_MS;
          const rest = watches.slice(index).map((w) => w.account);
          await pool.query(sql.typeAlias('void')`
            update chain_watches set next_check_at = ${sql.timestamp(new Date(leaseEnds))} where account = any(${sql.array(rest, 'text')})
          `);
        }
        try {
          const result = await scan(watch);
          scanned += 1;
          recorded += result.recorded;
        } catch (error) {
          // One account's failure never stops the others: it backs off alone. Only a failure of
          // the chain API itself (rate limit, server error) ends the round for everyone.
          const chainError = error instanceof ChainApiError ? error : toChainApiError(error);
          if (!(error instanceof ChainApiError)) log.error({ err: error, account: watch.account, paymentId: watch.payment_id }, 'reading an account failed');
          await backOff(watch, chainError);
          if (error instanceof ChainApiError && chainError.retryable) {
            // Give back the rest of the round so it is read again soon, after the pause.
            const rest = watches.slice(watches.indexOf(watch) + 1).map((w) => w.account);
            if (rest.length > 0) {
              await pool.query(sql.typeAlias('void')`
                update chain_watches set next_check_at = ${sql.timestamp(new Date(deps.now().getTime() + 2000))} where account = any(${sql.array(rest, 'text')})
              `);
            }
            return { claimed, scanned, recorded, backedOff: true };
          }
        }
      }
      return { claimed, scanned, recorded, backedOff: false };
    },

    /** Reads every account of one payment now (the expiry's last look at the chain). Throws on chain errors. */
    async scanPayment(paymentId: string): Promise<void> {
      for (const watch of await watchesOfPayment(pool, paymentId)) await scan(watch);
    },
  };
}

export type ChainWatcher = ReturnType<typeof createChainWatcher>;
