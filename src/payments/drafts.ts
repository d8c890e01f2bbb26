// From a validated request body to a payment draft: the rules that need the catalogue or the
// store (coin precision, enabled methods, invoice-type rules 1–4 of docs/API.md, POST /v1/payments/create).
import { tokenValidSql, type TokenCheck } from '../auth/tokens.ts';
import type { TonNetwork } from '../config.ts';
import { prepared, sql, z, type Db, type FragmentSqlToken } from '../db/pool.ts';
import { FIAT_CURRENCIES, isFiatCurrency } from '../rates/fiat.ts';
import { authInvalid, KassaError, requiredFor, tooManyDecimals, unknownCurrency } from '../errors.ts';
import { amountProblem, decimalPlaces } from '../money.ts';
import type { PaymentDraft } from './commands.ts';
import type { MethodPrefetch } from './methodChoice.ts';
import { type MethodKey, type MethodRow, methodWhere, STORE_METHODS } from './methods.ts';

/** What every payment request carries (the JSON Schema `commonProperties` in src/http/routes/payments.schema.ts checks it). */
interface CommonInput {
  ttl?: number;
  order_id?: string;
  description?: string;
  metadata?: Record<string, string>;
  webhookURL?: string;
  returnURL?: string;
}

/** A POST /v1/payments request, as validated. */
export interface PaymentInput extends CommonInput {
  amount: string;
  currency: string;
  payment_options?: { methods?: Array<{ coin: string; chain: string }> };
}

/** A POST /v1/payments/create (invoice) request, as validated. */
interface InvoiceInput extends CommonInput {
  invoiceType: 'FIAT' | 'CRYPTO';
  fiatAmount?: string;
  fiatCurrency?: string;
  cryptoAmount?: string;
  paymentMethodID?: string;
}

const DEFAULT_TTL_SECONDS = 3600;

async function currencyNotFound(db: Db, param: string): Promise<KassaError> {
  const coins = await db.anyFirst(sql.type(z.object({ symbol: z.string() }))`select symbol from coins order by symbol`);
  return unknownCurrency(param, [...FIAT_CURRENCIES, ...coins]);
}

/**
 * A known currency (`currencyParam` names it: a fiat code, or a coin ticker of the `coins` table, whose
 * precision `decimals` is), then a positive amount within the coin's precision.
 */
async function checkAmount(db: Db, amount: string, currency: string, decimals: number | null, param: string, currencyParam: string): Promise<void> {
  if (!isFiatCurrency(currency) && decimals === null) throw await currencyNotFound(db, currencyParam);
  if (amountProblem(amount) !== null) throw new KassaError('invalid_amount', { param });
  if (decimals !== null && decimalPlaces(amount) > decimals) throw tooManyDecimals(param, currency, decimals);
}

const methodNotFound = (param: string): KassaError => new KassaError('payment_method_not_found', { param });

function common(body: PaymentInput | InvoiceInput) {
  return {
    ttlSeconds: body.ttl ?? DEFAULT_TTL_SECONDS,
    orderId: body.order_id ?? null,
    description: body.description ?? null,
    metadata: body.metadata ?? {},
    webhookUrl: body.webhookURL ?? null,
    returnUrl: body.returnURL ?? null,
  };
}

interface DraftOptions {
  /** The network whose jetton masters and deposit wallets the payment uses. */
  network: TonNetwork;
  /** The request's token, checked in the draft's read (`Guards.merchantInline`). */
  tokenCheck?: TokenCheck | undefined;
  /**
   * For `createPaymentOnce` (commands.ts), which writes without reading back: the read also says how
   * the payments row will store the amount and metadata, and, with `prior` (a scalar SQL expression
   * of type text, src/idempotency.ts's `priorAnswerSql`), the idempotency key's earlier answer — when
   * there is one, no derivation index is taken.
   */
  once?: { prior: FragmentSqlToken | null };
}

/** What the catalogue read says, for `draftFromCatalogue`. */
type Catalogue = Awaited<ReturnType<typeof readCatalogue>>;

/** POST /v1/payments: Customer Choice without methods, Preselected with exactly one. */
export async function draftFromPayment(db: Db, storeId: string, body: PaymentInput, options: DraftOptions): Promise<PaymentDraft> {
  return draftFromCatalogue(db, body, await readPaymentCatalogue(db, storeId, body, options));
}

/** The one read of POST /v1/payments (`readCatalogue`). */
export function readPaymentCatalogue(db: Db, storeId: string, body: PaymentInput, options: DraftOptions): Promise<Catalogue> {
  return readCatalogue(db, storeId, { currency: body.currency, method: body.payment_options?.methods?.[0] }, options, body);
}

/** POST /v1/payments's draft from its catalogue read: the currency, then the amount, then the method. */
export async function draftFromCatalogue(
  db: Db,
  body: PaymentInput,
  { currencyDecimals, method, prefetched, telegramMiniApp, settlementTreasury }: Catalogue,
): Promise<PaymentDraft> {
  const wanted = body.payment_options?.methods?.[0];
  await checkAmount(db, body.amount, body.currency, currencyDecimals, 'amount', 'currency');
  if (wanted && !method) throw methodNotFound('payment_options.methods');
  return {
    amount: body.amount,
    currency: body.currency,
    method,
    methodParam: 'payment_options.methods',
    fixedCoinAmount: null,
    createdVia: 'payments',
    invoiceType: null,
    fiatCurrency: null,
    telegramMiniApp,
    settlementTreasury,
    ...common(body),
    ...(prefetched ? { prefetched } : {}),
  };
}

/**
 * A payment link's price terms, checked as a create checks its own (src/paymentLinks/links.ts): the
 * currency, each amount (the field named beside it) within the currency's precision, the method
 * enabled for the store. Nothing is written.
 */
export async function checkPriceTerms(
  db: Db,
  storeId: string,
  terms: { currency: string; amounts: ReadonlyArray<readonly [string, string]>; method: MethodKey | undefined },
  options: DraftOptions,
): Promise<void> {
  const { currencyDecimals, method } = await readCatalogue(db, storeId, { currency: terms.currency, method: terms.method }, options);
  if (!isFiatCurrency(terms.currency) && currencyDecimals === null) throw await currencyNotFound(db, 'currency');
  for (const [amount, param] of terms.amounts) await checkAmount(db, amount, terms.currency, currencyDecimals, param, 'currency');
  if (terms.method && !method) throw methodNotFound('payment_options.methods');
}

/**
 * What a create reads before it writes, in one statement instead of one each — the one read of both
 * create operations: the token's check (when given), the currency's coin precision, the store's
 * method (by coin and chain, or by id) with its coin and chain, the pair's exchange rate, the coin's
 * jetton master on this network, and — when the method is enabled and the token valid — the next
 * derivation index (`reserveDepositWallet`'s nextval: an index taken by a create that fails later is
 * skipped, as it is when its transaction rolls back). `currency: null` is the method's own coin (a
 * CRYPTO invoice). The row is not parsed by a schema (the hot path of create); node-postgres's types
 * are the ones the schemas of `methodRow`, `getRate` and `chooseMethod` check.
 */
async function readCatalogue(
  db: Db,
  storeId: string,
  wanted: { currency: string | null; method: MethodKey | undefined },
  { network, tokenCheck, once }: DraftOptions,
  stored?: { amount: string; metadata?: Record<string, string> | undefined },
) {
  const prior = once?.prior ?? null;
  const tokenValid = tokenCheck ? tokenValidSql(tokenCheck.token, tokenCheck.now) : sql.fragment`true`;
  const which = wanted.method === undefined ? sql.fragment`false` : methodWhere(wanted.method);
  const currency = wanted.currency === null ? sql.fragment`m.coin_symbol` : sql.fragment`${wanted.currency}::text`;
  // The amount and metadata as the payments row will hold them (numeric's text, jsonb's key order).
  const asStored =
    once && stored
      ? sql.fragment`, ${prior ? sql.fragment`t.prior_answer` : sql.fragment`null::text`} as prior_answer, ${stored.amount}::numeric::text as amount_stored, ${sql.jsonb(stored.metadata ?? {})} as metadata_stored`
      : sql.fragment``;
  const row = (await db.one(
    prepared(sql.unsafe`
    select t.token_valid${asStored}, (select decimals::int from coins where symbol = ${currency}) as currency_decimals,
           (select s.telegram_bot || '/' || s.telegram_app from stores s where s.id = ${storeId}) as telegram_mini_app,
           st.treasury as settlement_treasury,
           m.id, m.coin_symbol, m.coin_name, m.coin_decimals, m.coin_kind, m.chain_symbol, m.chain_name,
           r.rate::text as rate, r.source as rate_source, r.fetched_at as rate_fetched_at,
           r.confirming_source, r.confirming_rate::text as confirming_rate, r.confirming_fetched_at,
           j.master_address, j.wallet_code,
           case when m.id is not null and t.token_valid${prior ? sql.fragment` and t.prior_answer is null` : sql.fragment``} and st.treasury is null then nextval('deposit_address_index_seq')::text end as next_index
    from (select ${tokenValid} as token_valid${prior ? sql.fragment`, ${prior} as prior_answer` : sql.fragment``}) as t
    left join lateral (select s.treasury from stores s where s.id = ${storeId} and s.settlement = 'treasury') as st on true
    left join lateral (${STORE_METHODS} where spm.store_id = ${storeId} and ${which}) as m on true
    left join exchange_rates r on r.currency = ${currency} and r.coin_symbol = m.coin_symbol
    left join jetton_masters j on j.coin_symbol = m.coin_symbol and j.network = ${network} and m.coin_kind = 'jetton'
  `),
  )) as {
    token_valid: boolean;
    currency_decimals: number | null;
    telegram_mini_app: string | null;
    settlement_treasury: string | null;
    id: string | null;
    coin_symbol: string;
    coin_name: string;
    coin_decimals: number;
    coin_kind: 'native' | 'jetton';
    chain_symbol: string;
    chain_name: string;
    rate: string | null;
    rate_source: string;
    rate_fetched_at: Date;
    confirming_source: string | null;
    confirming_rate: string | null;
    confirming_fetched_at: Date | null;
    master_address: string | null;
    wallet_code: Buffer | null;
    next_index: string | null;
    prior_answer?: string | null;
    amount_stored?: string;
    metadata_stored?: Record<string, string>;
  };
  if (!row.token_valid) throw authInvalid();
  if (tokenCheck) tokenCheck.checked = true;
  const method: MethodRow | null =
    row.id === null
      ? null
      : {
          id: row.id,
          coin_symbol: row.coin_symbol,
          coin_name: row.coin_name,
          coin_decimals: row.coin_decimals,
          coin_kind: row.coin_kind,
          chain_symbol: row.chain_symbol,
          chain_name: row.chain_name,
        };
  const prefetched: MethodPrefetch | undefined =
    method === null || (row.next_index === null && row.settlement_treasury === null) || !row.token_valid
      ? undefined
      : {
          rate:
            row.rate === null
              ? null
              : {
                  rate: row.rate,
                  source: row.rate_source,
                  fetched_at: row.rate_fetched_at,
                  confirming_source: row.confirming_source,
                  confirming_rate: row.confirming_rate,
                  confirming_fetched_at: row.confirming_fetched_at,
                },
          jetton: row.master_address === null ? null : { master_address: row.master_address, wallet_code: row.wallet_code },
          derivationIndex: row.next_index === null ? null : Number(row.next_index),
        };
  return {
    currencyDecimals: row.currency_decimals,
    /** The store's Telegram Mini App ("<bot>/<app>") for the payment's telegramURL, or null. */
    telegramMiniApp: row.telegram_mini_app,
    /** The store's treasury when it settles there (the payment is paid there, by reference), else null. */
    settlementTreasury: row.settlement_treasury,
    method,
    prefetched,
    /** The key's earlier answer (with `prior`): null when it has none. */
    priorAnswer: row.prior_answer ?? null,
    /** The amount and metadata as stored (with `prior`). */
    stored: row.amount_stored === undefined ? null : { amount: row.amount_stored, metadata: row.metadata_stored! },
  };
}

/** POST /v1/payments/create: FIAT (rules 1–2) or CRYPTO (rule 3); never both amounts (rule 4). */
export async function draftFromInvoice(db: Db, storeId: string, body: InvoiceInput, options: DraftOptions): Promise<PaymentDraft> {
  if (body.fiatAmount !== undefined && body.cryptoAmount !== undefined) {
    throw new KassaError('conflicting_amounts', { param: 'cryptoAmount' });
  }
  if (body.invoiceType === 'FIAT') {
    if (body.fiatAmount === undefined) throw requiredFor('fiatAmount', 'FIAT');
    if (body.fiatCurrency === undefined) throw requiredFor('fiatCurrency', 'FIAT');
  } else {
    if (body.cryptoAmount === undefined) throw requiredFor('cryptoAmount', 'CRYPTO');
    if (body.paymentMethodID === undefined) throw requiredFor('paymentMethodID', 'CRYPTO');
  }
  const fiat = body.invoiceType === 'FIAT';
  const { currencyDecimals, method, prefetched, telegramMiniApp, settlementTreasury } = await readCatalogue(
    db,
    storeId,
    { currency: fiat ? body.fiatCurrency! : null, method: body.paymentMethodID === undefined ? undefined : { id: body.paymentMethodID } },
    options,
  );
  if (body.paymentMethodID && !method) throw methodNotFound('paymentMethodID');
  const shared = {
    method,
    methodParam: 'paymentMethodID',
    createdVia: 'invoice' as const,
    telegramMiniApp,
    settlementTreasury,
    ...common(body),
    ...(prefetched ? { prefetched } : {}),
  };
  if (fiat) {
    await checkAmount(db, body.fiatAmount!, body.fiatCurrency!, currencyDecimals, 'fiatAmount', 'fiatCurrency');
    return { ...shared, amount: body.fiatAmount!, currency: body.fiatCurrency!, fixedCoinAmount: null, invoiceType: 'FIAT', fiatCurrency: body.fiatCurrency! };
  }
  if (!method || body.cryptoAmount === undefined) throw requiredFor('paymentMethodID', 'CRYPTO');
  await checkAmount(db, body.cryptoAmount, method.coin_symbol, currencyDecimals, 'cryptoAmount', 'paymentMethodID');
  return {
    ...shared,
    amount: body.cryptoAmount,
    currency: method.coin_symbol,
    fixedCoinAmount: body.cryptoAmount,
    invoiceType: 'CRYPTO',
    fiatCurrency: body.fiatCurrency ?? null,
  };
}
