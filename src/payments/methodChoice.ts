// Fixing a payment's method, before anything of the payment is written: its price in the coin and
// its deposit wallet (`chooseMethod`), then the writes of its deposit and of the accounts the chain
// reader keeps (`depositWrites`). Used by the create and select-method commands (commands.ts).
import { Address, Cell } from '@ton/core';
import { standardJettonWalletAddress } from '../chain/addresses.ts';
import type { Config } from '../config.ts';
import { insertRow, prepared, sql, z, type Db, type FragmentSqlToken, type ValueExpression } from '../db/pool.ts';
import { noJettonMaster } from '../errors.ts';
import { ratePolicy, type StoredRate } from '../rates/rates.ts';
import { depositAddressInsert, depositPublicKey, depositWalletAt, reserveDepositWallet, type ReservedDeposit } from './deposit.ts';
import type { MethodRow } from './methods.ts';
import { toBaseUnits } from '../money.ts';
import { priceFor, priceFromRow, type Price } from './pricing.ts';

export type CommandConfig = Pick<Config, 'masterKey' | 'depositPublicKey' | 'tonNetwork' | 'ratesMaxDivergencePercent'>;

/** The reads of `chooseMethod`, made beforehand: the pair's rate row, the coin's jetton master, a derivation index. */
export interface MethodPrefetch {
  rate: StoredRate | null;
  jetton: { master_address: string; wallet_code: Buffer | null } | null;
  /** Null for a payment settled to the treasury (no deposit wallet). */
  derivationIndex: number | null;
}

/** What fixing a method decides before anything is written: the price and the deposit wallet. */
export interface MethodChoice {
  method: MethodRow;
  price: Price;
  /** The coin's jetton master on this network; null for the native coin. */
  master: string | null;
  /** Its standard wallet code when known (the deposit's jetton wallet is then computed offline). */
  walletCode: Buffer | null;
  /** The payment's deposit wallet; null when it is paid to the store's treasury (treasury settlement: no deposit, no sweep, no key). */
  deposit: ReservedDeposit | null;
}

/**
 * Prices `amount currency` in the method's coin and reserves the payment's deposit wallet (docs/API.md,
 * Payment statuses: created → pending). Writes nothing but the
 * derivation sequence.
 */
export async function chooseMethod(
  tx: Db,
  config: CommandConfig,
  payment: { amount: string; currency: string },
  method: MethodRow,
  now: Date,
  options: { param: string; fixedCoinAmount?: string | null; prefetched?: MethodPrefetch | undefined; treasurySettled?: boolean },
): Promise<MethodChoice> {
  const { prefetched } = options;
  const price = options.fixedCoinAmount
    ? {
        coinAmount: options.fixedCoinAmount,
        coinAmountBaseUnits: toBaseUnits(options.fixedCoinAmount, method.coin_decimals).toString(),
        rate: '1',
        source: 'identity',
        at: now,
      }
    : prefetched
      ? priceFromRow(payment.amount, payment.currency, method, now, prefetched.rate, ratePolicy(config), options.param)
      : await priceFor(tx, payment.amount, payment.currency, method, now, ratePolicy(config), options.param);
  const jetton =
    method.coin_kind !== 'jetton'
      ? null
      : prefetched
        ? prefetched.jetton
        : await tx.maybeOne(
            prepared(sql.type(z.object({ master_address: z.string(), wallet_code: z.instanceof(Buffer).nullable() }))`
        select master_address, wallet_code from jetton_masters where coin_symbol = ${method.coin_symbol} and network = ${config.tonNetwork}
      `),
          );
  const master = jetton?.master_address ?? null;
  if (method.coin_kind === 'jetton' && master === null) {
    throw noJettonMaster(method.coin_symbol, config.tonNetwork, options.param);
  }
  if (options.treasurySettled) return { method, price, master, walletCode: jetton?.wallet_code ?? null, deposit: null };
  const publicKey = await depositPublicKey(tx, config);
  const deposit =
    prefetched && prefetched.derivationIndex !== null
      ? depositWalletAt(publicKey, prefetched.derivationIndex, config.tonNetwork)
      : await reserveDepositWallet(tx, publicKey, config.tonNetwork);
  return { method, price, master, walletCode: jetton?.wallet_code ?? null, deposit };
}

/**
 * The deposit's jetton wallet of the chosen coin: computed offline when the master's wallet code
 * is known, else `pending:…` until the chain reader asks the master (before it reads on).
 */
function jettonWalletOf(paymentId: string, choice: MethodChoice & { deposit: ReservedDeposit }): string {
  if (choice.master === null) throw new Error('not a jetton');
  if (choice.walletCode === null) return `pending:${paymentId}:${choice.method.coin_symbol}`;
  const code = walletCodeCell(choice.walletCode);
  return standardJettonWalletAddress(Address.parse(choice.master), Address.parse(choice.deposit.address), code).toRawString();
}

/** Parsed jetton wallet codes by their bytes (one per coin and network). */
const walletCodes = new Map<string, Cell>();

/**
 * A wallet code as a cell, parsed once per process: parsing a code's BOC (and hashing its cells)
 * cost about a tenth of a USDT create's CPU, more than the rest of its jetton wallet's derivation.
 */
function walletCodeCell(code: Buffer): Cell {
  const key = code.toString('base64');
  let cell = walletCodes.get(key);
  if (cell === undefined) {
    cell = Cell.fromBoc(code)[0]!;
    if (walletCodes.size < 100) walletCodes.set(key, cell);
  }
  return cell;
}

/**
 * The writes for a payment that now has its method: its deposit address, and the accounts the
 * chain reader keeps — the deposit itself and, for a jetton, the deposit's jetton wallet of that
 * coin. Sent with the payment's own write as one statement (`inOneStatement`); behind `gate` (a WITH
 * item of that statement, `insertRow`) each row is written only when the gate lets the payment through.
 */
export function depositWrites(config: CommandConfig, paymentId: string, choice: MethodChoice, now: Date, gate?: string): FragmentSqlToken[] {
  // Paid to the treasury: no deposit, and the reader watches the treasury itself (by the store's settlement).
  if (choice.deposit === null) return [];
  const withDeposit = { ...choice, deposit: choice.deposit };
  const coin = choice.method.coin_symbol;
  const watches: ValueExpression[][] = [[choice.deposit.address, paymentId, 'deposit', coin, null, sql.timestamp(now)]];
  if (choice.master !== null) watches.push([jettonWalletOf(paymentId, withDeposit), paymentId, 'jetton_wallet', coin, choice.master, sql.timestamp(now)]);
  const watchInsert = (rows: FragmentSqlToken) =>
    sql.fragment`insert into chain_watches (account, payment_id, kind, coin_symbol, jetton_master, created_at) ${rows}`;
  return [
    depositAddressInsert(paymentId, choice.deposit, config.tonNetwork, gate),
    ...(gate === undefined
      ? [
          watchInsert(
            sql.fragment`values ${sql.join(
              watches.map((row) => sql.fragment`(${sql.join(row, sql.fragment`, `)})`),
              sql.fragment`, `,
            )}`,
          ),
        ]
      : watches.map((row) => watchInsert(insertRow(row, gate)))),
  ];
}
