// From a validated request body to a payment draft: the rules that need the catalogue or the
// store (coin precision, enabled methods, invoice-type rules 1–4 of docs/API.md, POST /v1/payments/create).
import { prepared, sql, z, type Db } from '../db/pool.ts';
import { FIAT_CURRENCIES, isFiatCurrency } from '../rates/fiat.ts';
import { type ApiError, invalidRequest, notFound } from '../errors.ts';
import { decimalPlaces, isPositiveDecimalString } from '../money.ts';
import type { PaymentDraft } from './commands.ts';
import { findStoreMethod } from './methods.ts';

/** What every payment request carries (the JSON Schema `commonProperties` in src/http/schemas checks it). */
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
  const coins = await db.anyFirst(sql.type(z.object({ symbol: z.string() }))`select symbol from coins order by symbol`);
  throw notFound('currency_not_found', `${param} must be one of ${[...FIAT_CURRENCIES, ...coins].join(', ')}.`, param);
}

/** A known currency (`currencyParam` names it), then a positive amount within the coin's precision when the currency is a coin. */
async function checkAmount(db: Db, amount: string, currency: string, param: string, currencyParam: string): Promise<void> {
  const decimals = await currencyDecimals(db, currency, currencyParam);
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

/** POST /v1/payments: Customer Choice without methods, Preselected with exactly one. */
export async function draftFromPayment(db: Db, storeId: string, body: PaymentInput): Promise<PaymentDraft> {
  await checkAmount(db, body.amount, body.currency, 'amount', 'currency');
  const wanted = body.payment_options?.methods?.[0];
  const method = wanted ? await findStoreMethod(db, storeId, wanted) : null;
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
  };
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
