// The one money module. Amounts travel as decimal strings (API, Postgres numeric) and base units
// (nanoTON, micro-USDT) as bigint; Decimal lives here and nowhere else, and nothing becomes a float.
import decimalJs from 'decimal.js';
import type { Decimal as DecimalClass } from 'decimal.js';

// decimal.mjs has only a default export (the class), while its CommonJS-style typings describe the
// default import as the module object: say what it really is.
const Decimal = decimalJs as unknown as typeof DecimalClass;

/**
 * A private Decimal: 60 significant digits, and every inexact step rounds away from zero
 * (ROUND_UP), so a rounded intermediate never lets a final "round up" come out below the exact
 * value. Never uses exponent notation when printed. The global Decimal is left untouched.
 */
const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_UP, toExpNeg: -9e15, toExpPos: 9e15 });
type Dec = InstanceType<typeof D>;

/**
 * Other tickers of a coin, taken wherever a coin symbol is (CONTRACT §12, "The native coin's name"):
 * Toncoin was renamed Gram (GRAM) in June 2026; the network is still TON, and Kassa's books,
 * answers and coins table keep `TON`, so `GRAM` means that coin and becomes `TON` where it is read.
 */
const COIN_ALIASES: Readonly<Record<string, string>> = Object.freeze({ GRAM: 'TON' });

/**
 * A coin's ticker as people are shown it: TON is Gram's `GRAM` (the checkout, the element, the Mini
 * App, the dashboard); the books, the API's answers and the database keep `TON`.
 */
export const shownTicker = (symbol: string): string => (symbol === 'TON' ? 'GRAM' : symbol);

/** A coin's name where a page names a coin alone (a choice of coin, a table's row): TON is "Gram (GRAM)"; others their ticker. */
export const shownCoinName = (symbol: string): string => (symbol === 'TON' ? 'Gram (GRAM)' : symbol);

/**
 * A message of the API (its `message`, which keeps `TON`: CONTRACT §12) as the dashboard shows it:
 * an amount's `TON` becomes `GRAM` and the coin named alone "Gram (GRAM)"; the network keeps its
 * name (the TON network, TON Connect, a TON address), and `nanoTON` or `ton://` are left as they are.
 */
export const shownCoinText = (text: string): string =>
  text.replace(/(\d) TON\b/g, '$1 GRAM').replace(/\bTON\b(?! (?:network|Connect|address|chain)\b)/g, 'Gram (GRAM)');

/** A coin symbol as the books know it: `GRAM` → `TON`; anything else unchanged (symbols are case-sensitive). */
export const coinSymbol = (text: string): string => (Object.hasOwn(COIN_ALIASES, text) ? COIN_ALIASES[text]! : text);

/** The API's amount pattern (docs/API.md, `invalid_amount`): no sign, no leading zeros on the integer part, no exponent. */
const DECIMAL_PATTERN = /^(0|[1-9]\d*)(\.\d+)?$/;
/** A signed plain decimal (what Postgres prints for numeric): what the arithmetic helpers accept. */
const SIGNED_DECIMAL = /^-?\d+(\.\d+)?$/;
/** A JSON number literal (or the same text in a string), exponent allowed. */
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?(\d+))?$/;

/** True for a string in the API's amount pattern whose value is greater than zero. */
export function isPositiveDecimalString(value: unknown): value is string {
  return typeof value === 'string' && DECIMAL_PATTERN.test(value) && /[1-9]/.test(value);
}

/** The longest amount the API takes (docs/API.md, `invalid_amount`): its schema's maxLength, and the link page's. */
export const AMOUNT_MAX_LENGTH = 40;

/**
 * The API's amount rule, the one every amount a payment is made with passes (POST /v1/payments and
 * the link page alike): a positive decimal in the API's pattern of at most AMOUNT_MAX_LENGTH
 * characters. 'long' names the length apart, so a person can be told which rule they broke.
 */
export function amountProblem(value: unknown): 'invalid' | 'long' | null {
  if (!isPositiveDecimalString(value)) return 'invalid';
  if (value.length > AMOUNT_MAX_LENGTH) return 'long';
  return null;
}

function parse(value: string, what = 'amount'): Dec {
  if (typeof value !== 'string' || !SIGNED_DECIMAL.test(value)) {
    throw new RangeError(`${what} must be a plain decimal string, got ${JSON.stringify(value)}`);
  }
  return new D(value);
}

/** A decimal as a plain string: no exponent, no trailing zeros ("2", "2.5", "0.000001"). */
function plain(value: Dec): string {
  return value.toFixed();
}

/**
 * Digits after the point that the VALUE needs: trailing zeros do not count
 * ("10.50" → 1, "1.000" → 0, "0.000001" → 6). Compare it with a coin's decimals.
 */
export function decimalPlaces(value: string): number {
  parse(value);
  const fraction = value.split('.')[1] ?? '';
  return fraction.replace(/0+$/, '').length;
}

function checkDecimals(decimals: number): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255) {
    throw new RangeError(`decimals must be an integer from 0 to 255, got ${decimals}`);
  }
}

/**
 * "1.5" TON (9 decimals) → 1500000000n. Exact string arithmetic. Throws a RangeError when the
 * amount is not a non-negative decimal in the API's pattern or needs more decimals than allowed.
 */
export function toBaseUnits(amount: string, decimals: number): bigint {
  checkDecimals(decimals);
  if (typeof amount !== 'string' || !DECIMAL_PATTERN.test(amount)) {
    throw new RangeError(`amount must be a non-negative decimal string, got ${JSON.stringify(amount)}`);
  }
  const [whole = '0', rawFraction = ''] = amount.split('.');
  const fraction = rawFraction.replace(/0+$/, '');
  if (fraction.length > decimals) {
    throw new RangeError(`amount ${amount} has more than ${decimals} decimal places`);
  }
  return BigInt(whole + fraction.padEnd(decimals, '0'));
}

/** 1500000000n with 9 decimals → "1.5". No trailing zeros, no exponent; negative units keep their sign. */
export function fromBaseUnits(units: bigint, decimals: number): string {
  checkDecimals(decimals);
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * What the customer must send: amount × rate, rounded UP (away from zero) to the coin's decimals,
 * as a plain string ("2", "2.5", "0.000001"). For positive inputs the result is at least one base
 * unit. `rate` is coins per one unit of the amount's currency.
 */
export function coinAmountFor(amount: string, rate: string, decimals: number): string {
  checkDecimals(decimals);
  if (!isPositiveDecimalString(amount)) throw new RangeError(`amount must be a positive decimal string, got ${JSON.stringify(amount)}`);
  if (!isPositiveDecimalString(rate)) throw new RangeError(`rate must be a positive decimal string, got ${JSON.stringify(rate)}`);
  return plain(new D(amount).times(rate).toDecimalPlaces(decimals, D.ROUND_UP));
}

/** -1, 0 or 1 as a < b, a = b, a > b ("1.50" equals "1.5"). */
export function compareDecimal(a: string, b: string): -1 | 0 | 1 {
  return parse(a, 'a').comparedTo(parse(b, 'b')) as -1 | 0 | 1;
}

/** a + b as a plain decimal string. */
export function addDecimal(a: string, b: string): string {
  return plain(parse(a, 'a').plus(parse(b, 'b')));
}

/**
 * True when two positive prices are at most `percent` % apart, measured against the lower one:
 * |a − b| ≤ min(a, b) × percent / 100 (so "2" % lets 100 and 102 agree, not 100 and 102.01).
 */
export function withinPercent(a: string, b: string, percent: string): boolean {
  const x = parse(a, 'a');
  const y = parse(b, 'b');
  const low = x.lessThan(y) ? x : y;
  return x
    .minus(y)
    .abs()
    .lessThanOrEqualTo(low.times(parse(percent, 'percent')).div(100));
}

/**
 * a ÷ b as a plain decimal string with at most `significantDigits` significant digits, rounded
 * up. Used for exchange rates (coins per unit = usd price of the unit ÷ usd price of the coin).
 */
export function divideDecimal(a: string, b: string, significantDigits = 30): string {
  const divisor = parse(b, 'b');
  if (divisor.isZero()) throw new RangeError('division by zero');
  return plain(parse(a, 'a').div(divisor).toSignificantDigits(significantDigits, D.ROUND_UP));
}

/**
 * The exact text of a JSON number (for example "5.1" or "1.23e-5", as taken from the raw JSON)
 * as a plain decimal string ("0.0000123"), never through a float. Throws a RangeError for anything
 * else, or for an exponent beyond ±100 (no price needs one, and it would blow the string up).
 */
export function plainDecimal(literal: string): string {
  const match = typeof literal === 'string' && literal.length <= 100 ? JSON_NUMBER.exec(literal) : null;
  if (!match || (match[4] !== undefined && Number(match[4]) > 100)) {
    throw new RangeError(`not a decimal number: ${JSON.stringify(literal)}`);
  }
  return plain(new D(literal));
}

/**
 * A figure rounded for reading (half away from zero), never for arithmetic: `decimals` places
 * (`fixed`: always that many, as fiat's "10.50"; else trailing zeros dropped), or — when that would
 * show a value that is not zero as 0 — its first two significant digits ("0.0000123" → "0.000012").
 * The dashboard shows it with the exact value beside it (on hover, and in the element's value).
 */
export function readableDecimal(value: string, decimals: number, fixed = false): string {
  const exact = parse(value);
  let rounded = exact.toDecimalPlaces(decimals, D.ROUND_HALF_UP);
  if (rounded.isZero() && !exact.isZero()) rounded = exact.toSignificantDigits(2, D.ROUND_HALF_UP);
  const text = fixed && rounded.decimalPlaces() <= decimals ? rounded.toFixed(decimals) : plain(rounded);
  return text === '-0' ? '0' : text;
}

/**
 * `part` of a payment's coin amount in the payment's price currency: part × amount ÷ coinAmount,
 * to `decimals` places (half away from zero) — what a coin figure was worth at the payment's own
 * rate. Display only ("about 4.20 USD" beside "1.3 TON").
 */
export function priceShare(part: string, amount: string, coinAmount: string, decimals: number): string {
  const divisor = parse(coinAmount, 'coinAmount');
  if (divisor.isZero()) throw new RangeError('division by zero');
  return parse(part, 'part').times(parse(amount)).div(divisor).toDecimalPlaces(decimals, D.ROUND_HALF_UP).toFixed(decimals);
}

/** The sum of decimal strings (exact). */
export function sumDecimals(values: readonly string[]): string {
  return plain(values.reduce((sum, value) => sum.plus(parse(value)), new D(0)));
}

/** part ÷ whole as a number from 0 to 1, for drawing only (a chart's bar), never for money. */
export function shareForDrawing(part: string, whole: string): number {
  const w = parse(whole, 'whole');
  if (w.isZero()) return 0;
  return Math.min(1, Math.max(0, parse(part, 'part').div(w).toDecimalPlaces(6, D.ROUND_HALF_UP).toNumber()));
}

/** The largest of decimal strings ("0" for none). */
export function maxDecimal(values: readonly string[]): string {
  return plain(values.reduce((max, value) => D.max(max, parse(value)), new D(0)));
}
