// Healing: re-reads one of Kassa's accounts' history from the chain API (`/api/v3/transactions`,
// paged by lt, through the request budget) and books every transaction of it through the chain
// reader's own booking path (book.ts's blockBooker: classify.ts's cases, then recordTransfer or the
// treasury's confirmation). The books' chain identity (account, lt, hash)
// makes it idempotent: what the block stream already booked changes nothing, what it never showed
// is booked once. Reconciliation (src/treasury/reconcile.ts) calls it for an account whose balance
// on chain differs from its books.
import type { AccountHistory } from '../chain/history.ts';
import type { ChainBlock } from '../chain/source.ts';
import type { Logger } from '../log.ts';
import type { Heal } from '../treasury/reconcile.ts';
import type { Watch } from './classify.ts';

interface HealResult {
  /** Transactions read from the account's history. */
  read: number;
  /** Incoming transfers booked now (the block stream never booked them). */
  recorded: number;
  requests: number;
  /** False: the history was longer than one call reads; its oldest transactions were not read (the newest always are). */
  complete: boolean;
}

export function accountHealer(deps: {
  history: AccountHistory;
  /** The chain reader's booking of a block's transactions (BlockBooker.book, book.ts); `also`: an unwatched account, booked as this watch. */
  book: (block: ChainBlock, also?: Watch) => Promise<number>;
  log: Logger;
}): Heal<HealResult> {
  return async (account, range = {}, signal) => {
    const history = await deps.history.transactions(account, { toLt: range.toLt ?? null }, signal);
    let recorded = 0;
    if (history.transactions.length > 0) {
      const newest = history.transactions[history.transactions.length - 1]!;
      // Booked as one "block" of this account's transactions, in lt order (seqno 0: no block of the stream).
      // A deposit's jetton wallet of another coin (range.as) is booked as the reader would book it if it followed it.
      const also: Watch | undefined = range.as
        ? {
            account,
            payment_id: range.as.paymentId,
            kind: 'jetton_wallet',
            coin_symbol: range.as.coin,
            jetton_master: range.as.master,
            deposit_address: range.as.deposit,
            unnotifiedOnly: true,
          }
        : undefined;
      recorded = await deps.book({ seqno: 0, time: new Date(newest.now * 1000), transactions: history.transactions, requests: history.requests }, also);
    }
    if (recorded > 0) {
      deps.log.warn({ account, recorded, read: history.transactions.length }, 'reconciliation booked transfers the block stream never showed');
    }
    return { read: history.transactions.length, recorded, requests: history.requests, complete: history.complete };
  };
}
