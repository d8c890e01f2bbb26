// From a validated request body to a payment draft: the rules that need the catalogue or the
// store (coin precision, enabled methods, invoice-type rules 1–4 of docs/API.md, POST /v1/payments/create).
import { tokenValidSql, type TokenCheck } from '../auth/tokens.ts';
import type { TonNetwork } from '../config.ts';
import { prepared, sql, z, type Db } from '../db/pool.ts';
import { FIAT_CURRENCIES, isFiatCurrency } from '../rates/fiat.ts';
import { type ApiError, authInvalid, invalidRequest, notFound } from '../errors.ts';
import { decimalPlaces, isPositiveDecimalString } from '../money.ts';
import type { MethodPrefetch, PaymentDraft } from './commands.ts';
import { findStoreMethod, STORE_METHODS, type MethodRow } from './methods.ts';

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
export interface InvoiceInput extends CommonInput {
  invoiceType: 'FIAT' | 'CRYPTO';
  fiatAmount?: string;
  fiatCurrency?: string;
  cryptoAmount?: string;
  paymentMethodID?: string;
}

const DEFAULT_TTL_SECONDS = 3600;

async function coinDecimals(db: Db, symbol: string): Promise<number | null> {
  return db.maybeOneFirst(prepared(sql.type(z.object({ decimals: z.number() }))`select decimals::int as decimals from coins where symbol = ${symbol}`));
}

/**
 * A currency is a fiat code or a coin ticker of the `coins` table (case-sensitive): null for fiat
 * (no coin is named USD, EUR or RUB), the coin's decimals for a coin, currency_not_found otherwise.
 */
async function currencyDecimals(db: Db, currency: string, param: string): Promise<number | null> {
  if (isFiatCurrency(currency)) return null;
  const decimals = await coinDecimals(db, currency);
  if (decimals !== null) return decimals;
  throw await currencyNotFound(db, param);
}

async function currencyNotFound(db: Db, param: string): Promise<ApiError> {
  const coins = await db.anyFirst(sql.type(z.object({ symbol: z.string() }))`select symbol from coins order by symbol`);
  return notFound('currency_not_found', `${param} must be one of ${[...FIAT_CURRENCIES, ...coins].join(', ')}.`, param);
}

/** A known currency (`currencyParam` names it), then a positive amount within the coin's precision when the currency is a coin. */
async function checkAmount(db: Db, amount: string, currency: string, param: string, currencyParam: string): Promise<void> {
  checkAmountIn(amount, currency, await currencyDecimals(db, currency, currencyParam), param);
}

/** A positive amount within the currency's precision (`decimals`: null for fiat). */
function checkAmountIn(amount: string, currency: string, decimals: number | null, param: string): void {
  if (!isPositiveDecimalString(amount)) throw invalidRequest('invalid_amount', `${param} must be a positive decimal.`, param);
  if (decimals !== null && decimalPlaces(amount) > decimals) {
    throw invalidRequest('invalid_amount', `${param} has more decimals than ${currency} allows (${decimals}).`, param);
  }
}

const methodNotFound = (param: string): ApiError => notFound('payment_method_not_found', 'That payment method is not enabled for this store.', param);

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

export interface DraftOptions {
  /**
   * Read the catalogue in one statement (`readCatalogue`), including what fixing the method needs
   * on this network (rate, jetton master, derivation index), handed to `createPayment` with the draft.
   */
  network?: TonNetwork;
  /** The request's token, checked in that same statement (`Guards.merchantInline`; needs `network`). */
  tokenCheck?: TokenCheck;
}

/** POST /v1/payments: Customer Choice without methods, Preselected with exactly one. */
export async function draftFromPayment(db: Db, storeId: string, body: PaymentInput, options: DraftOptions = {}): Promise<PaymentDraft> {
  if (options.network !== undefined) return draftFromCatalogue(db, storeId, body, options.network, options.tokenCheck);
  await checkAmount(db, body.amount, body.currency, 'amount', 'currency');
  const wanted = body.payment_options?.methods?.[0];
  const method = wanted ? await findStoreMethod(db, storeId, wanted) : null;
  return paymentDraft(body, wanted, method);
}

/** The draft of a POST /v1/payments once its method is looked up (`wanted` but not found: payment_method_not_found). */
function paymentDraft(body: PaymentInput, wanted: unknown, method: MethodRow | null, prefetched?: MethodPrefetch): PaymentDraft {
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
    ...common(body),
    ...(prefetched ? { prefetched } : {}),
  };
}

/**
 * What a create reads before it writes, in one statement instead of one each: the token's check
 * (when given), the currency's coin precision, the store's method with its coin and chain, the
 * pair's exchange rate, the coin's jetton master on this network, and — when the method is enabled
 * and the token valid — the next derivation index (`reserveDepositWallet`'s nextval: an index taken
 * by a create that fails later is skipped, as it is when its transaction rolls back). The row is not
 * parsed by a schema (the hot path of create); node-postgres's types are the ones the schemas of
 * `coinDecimals`, `methodRow`, `getRate` and `chooseMethod` check.
 */
async function readCatalogue(
  db: Db,
  storeId: string,
  currency: string,
  wanted: { coin: string; chain: string } | undefined,
  network: TonNetwork,
  tokenCheck?: TokenCheck,
) {
  const tokenValid = tokenCheck ? tokenValidSql(tokenCheck.token, tokenCheck.now) : sql.fragment`true`;
  const row = (await db.one(
    prepared(sql.unsafe`
    select t.token_valid, (select decimals::int from coins where symbol = ${currency}) as currency_decimals,
           m.id, m.coin_symbol, m.coin_name, m.coin_decimals, m.coin_kind, m.chain_symbol, m.chain_name,
           r.rate::text as rate, r.source as rate_source, r.fetched_at as rate_fetched_at,
           j.master_address, j.wallet_code,
           case when m.id is not null and t.token_valid then nextval('deposit_address_index_seq')::text end as next_index
    from (select ${tokenValid} as token_valid) as t
    left join lateral (${STORE_METHODS} where spm.store_id = ${storeId} and pm.coin_symbol = ${wanted?.coin ?? null} and pm.chain_symbol = ${wanted?.chain ?? null}) as m on true
    left join exchange_rates r on r.currency = ${currency} and r.coin_symbol = m.coin_symbol
    left join jetton_masters j on j.coin_symbol = m.coin_symbol and j.network = ${network} and m.coin_kind = 'jetton'
  `),
  )) as {
    token_valid: boolean;
    currency_decimals: number | null;
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
    master_address: string | null;
    wallet_code: Buffer | null;
    next_index: string | null;
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
    method === null || row.next_index === null
      ? undefined
      : {
          rate: row.rate === null ? null : { rate: row.rate, source: row.rate_source, fetched_at: row.rate_fetched_at },
          jetton: row.master_address === null ? null : { master_address: row.master_address, wallet_code: row.wallet_code },
          derivationIndex: Number(row.next_index),
        };
  return { currencyDecimals: row.currency_decimals, method, prefetched };
}

async function draftFromCatalogue(db: Db, storeId: string, body: PaymentInput, network: TonNetwork, tokenCheck?: TokenCheck): Promise<PaymentDraft> {
  const wanted = body.payment_options?.methods?.[0];
  const { currencyDecimals, method, prefetched } = await readCatalogue(db, storeId, body.currency, wanted, network, tokenCheck);
  // The same checks, in the same order, as checkAmount's: the currency, then the amount.
  if (!isFiatCurrency(body.currency) && currencyDecimals === null) throw await currencyNotFound(db, 'currency');
  checkAmountIn(body.amount, body.currency, currencyDecimals, 'amount');
  return paymentDraft(body, wanted, method, prefetched);
}

const missing = (param: string, why: string): ApiError => invalidRequest('missing_parameter', `${param} is required ${why}.`, param);

/** POST /v1/payments/create: FIAT (rules 1–2) or CRYPTO (rule 3); never both amounts (rule 4). */
export async function draftFromInvoice(db: Db, storeId: string, body: InvoiceInput): Promise<PaymentDraft> {
  if (body.fiatAmount !== undefined && body.cryptoAmount !== undefined) {
    throw invalidRequest('conflicting_amounts', 'fiatAmount must not be combined with cryptoAmount.', 'cryptoAmount');
  }
  if (body.invoiceType === 'FIAT') {
    if (body.fiatAmount === undefined) throw missing('fiatAmount', 'for a FIAT invoice');
    if (body.fiatCurrency === undefined) throw missing('fiatCurrency', 'for a FIAT invoice');
  } else {
    if (body.cryptoAmount === undefined) throw missing('cryptoAmount', 'for a CRYPTO invoice');
    if (body.paymentMethodID === undefined) throw missing('paymentMethodID', 'for a CRYPTO invoice');
  }
  const method = body.paymentMethodID ? await findStoreMethod(db, storeId, { id: body.paymentMethodID }) : null;
  if (body.paymentMethodID && !method) throw methodNotFound('paymentMethodID');
  if (body.invoiceType === 'FIAT') {
    await checkAmount(db, body.fiatAmount!, body.fiatCurrency!, 'fiatAmount', 'fiatCurrency');
    return {
      amount: body.fiatAmount!,
      currency: body.fiatCurrency!,
      method,
      methodParam: 'paymentMethodID',
      fixedCoinAmount: null,
      createdVia: 'invoice',
      invoiceType: 'FIAT',
      fiatCurrency: body.fiatCurrency!,
      ...common(body),
    };
  }
  if (!method || body.cryptoAmount === undefined) throw missing('paymentMethodID', 'for a CRYPTO invoice');
  await checkAmount(db, body.cryptoAmount, method.coin_symbol, 'cryptoAmount', 'paymentMethodID');
  return {
    amount: body.cryptoAmount,
    currency: method.coin_symbol,
    method,
    methodParam: 'paymentMethodID',
    fixedCoinAmount: body.cryptoAmount,
    createdVia: 'invoice',
    invoiceType: 'CRYPTO',
    fiatCurrency: body.fiatCurrency ?? null,
    ...common(body),
  };
}
