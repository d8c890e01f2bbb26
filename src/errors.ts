// The one error vocabulary of Kassa (docs/API.md, Errors). Every failure a client can see is a
// KassaError: a code of the catalogue below, a message, the param it is about and, for some, details
// (how long to wait). Each code has one default message here; a case that has more to say (a
// limit, a value, a reason) has a named factory below, the only way to word an error otherwise, so
// the texts are written in this file (callers give the facts; the sandbox chain's refusals keep its
// own words). Domain code throws it and knows nothing of HTTP; the HTTP layer (src/http/errorEnvelope.ts)
// renders it, once for both, as the API's {"error": {type, message, code, param?}} (`httpError`) and as
// the checkout's and the dashboard's error page (`errorPage`), with the catalogue's status and the
// headers its details ask for. What a person typed and Kassa refused in their words is a FormProblem (below).

export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'not_found_error' | 'rate_limit_error' | 'api_error';

const STATUS_BY_TYPE: Record<ErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  not_found_error: 404,
  rate_limit_error: 429,
  api_error: 500,
};

interface CatalogueEntry {
  type: ErrorType;
  /** When it is not the status of its type. */
  status?: number;
  /** Seconds a client should wait before retrying, sent as `Retry-After` (an error's details may give their own). */
  retryAfter?: number;
  /**
   * What the error says unless a named factory below says more: `{param}` is the param it is
   * about (a code whose default names it is only raised with one).
   */
  message: string;
}

/**
 * Every error code a client can see, with its type, its status when it is not its type's, its
 * `Retry-After` and its default message. docs/API.md lists them all (test/foundations/errors.test.ts
 * keeps the two in step). A request field's code is set on its JSON Schema (`errorCode`, read by
 * src/http/validate.ts), not here.
 */
export const ERROR_CATALOGUE = {
  // The request as HTTP
  invalid_json: { type: 'invalid_request_error', message: 'The request body is not valid JSON (an object is expected).' },
  payload_too_large: { type: 'invalid_request_error', status: 413, message: 'The request body is larger than 64 KiB (65536 bytes).' },
  unsupported_media_type: { type: 'invalid_request_error', status: 415, message: 'Request bodies must be sent as Content-Type: application/json.' },
  route_not_found: { type: 'not_found_error', message: 'There is no such route.' },
  method_not_allowed: { type: 'invalid_request_error', status: 405, message: 'This route does not accept that HTTP method (Allow lists those it does).' },
  malformed_request: { type: 'invalid_request_error', message: 'The HTTP request could not be parsed.' },
  headers_too_large: { type: 'invalid_request_error', status: 431, message: 'The request headers are larger than 16 KiB.' },
  request_timeout: { type: 'invalid_request_error', status: 408, message: 'The request was not received in time.' },
  auth_invalid: { type: 'authentication_error', message: 'The access token is missing, invalid, expired or revoked.' },
  insufficient_scope: { type: 'authentication_error', status: 403, message: "This token's scope does not allow this request." },
  rate_limit_exceeded: { type: 'rate_limit_error', message: 'Too many requests; retry after a short delay.' },
  // Parameters
  missing_parameter: { type: 'invalid_request_error', message: '{param} is required.' },
  unknown_parameter: { type: 'invalid_request_error', message: '{param} is not a known parameter.' },
  invalid_request: { type: 'invalid_request_error', message: '{param} is not valid.' },
  invalid_amount: {
    type: 'invalid_request_error',
    message: '{param} must be a positive decimal string without leading zeros, e.g. "10.50", of at most 40 characters.',
  },
  currency_not_found: { type: 'not_found_error', message: '{param} is not a currency Kassa supports.' },
  invalid_payment_options: {
    type: 'invalid_request_error',
    message:
      'payment_options must be {"methods": [{"coin", "chain"}]}: exactly one method, its coin and chain strings of at most 32 characters ({param} is not).',
  },
  payment_method_not_found: { type: 'not_found_error', message: 'That payment method is not enabled for this store.' },
  unsupported_payment_method: { type: 'invalid_request_error', message: 'The store cannot take this payment in that method.' },
  invalid_ttl: { type: 'invalid_request_error', message: 'ttl must be an integer from 900 to 43200 (seconds).' },
  invalid_order_id: { type: 'invalid_request_error', message: 'order_id must be a string of 1 to 128 characters.' },
  invalid_description: { type: 'invalid_request_error', message: 'description must be a string of at most 512 characters.' },
  invalid_metadata: {
    type: 'invalid_request_error',
    message: 'metadata must be an object of at most 10 keys of 1 to 64 characters, each value a string of at most 512 characters ({param} is not).',
  },
  invalid_webhook_url: { type: 'invalid_request_error', message: 'webhookURL must be an absolute https URL of at most 512 characters with a public host.' },
  invalid_return_url: { type: 'invalid_request_error', message: 'returnURL must be an absolute https URL of at most 512 characters with a public host.' },
  invalid_invoice_type: { type: 'invalid_request_error', message: 'invoiceType must be FIAT or CRYPTO.' },
  conflicting_amounts: { type: 'invalid_request_error', message: 'fiatAmount must not be combined with cryptoAmount.' },
  invalid_payment_method_id: { type: 'invalid_request_error', message: 'paymentMethodID must be a UUID.' },
  invalid_idempotency_key: { type: 'invalid_request_error', message: 'X-Idempotency-Key must be a UUID.' },
  idempotency_key_reused: { type: 'invalid_request_error', status: 422, message: 'This X-Idempotency-Key was already used with another request body.' },
  invalid_payment_id: { type: 'invalid_request_error', message: 'paymentID must be a UUID.' },
  invalid_status: { type: 'invalid_request_error', message: 'status must be one of created, pending, completed, expired, cancelled.' },
  invalid_limit: { type: 'invalid_request_error', message: 'limit must be an integer from 1 to 100.' },
  invalid_unmatched_state: { type: 'invalid_request_error', message: 'state must be one of open, refunding, assigned, refunded, kept.' },
  invalid_unmatched_transfer_id: { type: 'invalid_request_error', message: 'The unmatched transfer id must be a UUID.' },
  invalid_note: { type: 'invalid_request_error', message: 'note must be a string of 1 to 500 characters.' },
  unmatched_transfer_not_found: { type: 'not_found_error', message: 'No unmatched transfer with that id.' },
  unmatched_transfer_not_open: {
    type: 'invalid_request_error',
    status: 409,
    message: 'The unmatched transfer is no longer open: it was assigned, refunded or kept already, or a refund of it awaits the signature.',
  },
  payment_not_paid_to_treasury: {
    type: 'invalid_request_error',
    message:
      "paymentID must be a payment of the store settled to the treasury this money reached (its own deposit payments and other treasuries' cannot take it).",
  },
  invalid_created_after: { type: 'invalid_request_error', message: 'created_after must be an RFC 3339 time.' },
  invalid_starting_after: {
    type: 'invalid_request_error',
    message: "starting_after must be the id of an item of this store's list (the last of the previous page).",
  },
  invalid_address: { type: 'invalid_request_error', message: '{param} must be a basechain (workchain 0) TON address, raw (0:<64 hex>) or user-friendly.' },
  insufficient_funds: { type: 'invalid_request_error', message: 'The sandbox customer wallet holds less than that.' },
  invalid_coin: { type: 'invalid_request_error', message: '{param} must be the symbol of a coin Kassa knows, such as TON or USDT (case-sensitive).' },
  // Refunds
  refund_exceeds_balance: { type: 'invalid_request_error', message: "The refund is more than the payment's refundable balance of that coin." },
  refund_below_minimum: { type: 'invalid_request_error', message: "The refund is below the coin's smallest refund." },
  refund_gas_unpaid: {
    type: 'invalid_request_error',
    status: 409,
    message: "A jetton refund's gas (from Kassa's shared gas wallet) is more than the store has paid for refund gas.",
  },
  // Payments
  payment_not_found: { type: 'not_found_error', message: 'No payment with that id.' },
  payment_not_cancellable: { type: 'invalid_request_error', status: 409, message: 'Only created and pending payments can be cancelled.' },
  payment_expired: { type: 'invalid_request_error', status: 409, message: 'The payment has expired.' },
  method_already_selected: { type: 'invalid_request_error', status: 409, message: 'A payment method was already chosen for this payment.' },
  payment_not_open: { type: 'invalid_request_error', status: 409, message: 'The payment is no longer open: it has ended, or nothing is left to pay on it.' },
  method_not_selected: { type: 'invalid_request_error', status: 409, message: 'Choose a payment method first.' },
  payment_not_completed: { type: 'invalid_request_error', status: 409, message: 'Only a completed payment has a webhook to redeliver.' },
  // The checkout as a Telegram Mini App (docs/API.md, Telegram Mini App)
  telegram_init_data_invalid: {
    type: 'invalid_request_error',
    message: "initData is not Telegram's init data for this payment: not signed by Telegram for the store's bot, or launched for another payment.",
  },
  telegram_init_data_expired: { type: 'invalid_request_error', message: 'initData is older than an hour (its auth_date): open the Mini App again.' },
  telegram_not_configured: {
    type: 'invalid_request_error',
    status: 409,
    message: "The store has no Telegram bot id: its Mini App's init data cannot be checked.",
  },
  no_webhook_url: { type: 'invalid_request_error', status: 409, message: 'The payment was created without a webhookURL; there is nowhere to deliver to.' },
  // Store webhook endpoints
  invalid_endpoint_url: { type: 'invalid_request_error', message: 'url must be an absolute https URL of at most 512 characters with a public host.' },
  invalid_event_types: {
    type: 'invalid_request_error',
    message:
      'events must be a list of 1 to 9 event types, each once: payment.pending, payment.completed, payment.expired, payment.cancelled, payment.money_received, refund.confirmed, refund.failed, sweep.confirmed, sweep.failed.',
  },
  invalid_webhook_endpoint_id: { type: 'invalid_request_error', message: 'The webhook endpoint id must be a UUID.' },
  invalid_delivery_id: { type: 'invalid_request_error', message: 'The delivery id must be a UUID.' },
  webhook_endpoint_not_found: { type: 'not_found_error', message: 'No webhook endpoint with that id.' },
  webhook_delivery_not_found: { type: 'not_found_error', message: 'No delivery with that id to this webhook endpoint.' },
  too_many_webhook_endpoints: {
    type: 'invalid_request_error',
    status: 409,
    message: 'The store has 16 webhook endpoints, the most it may have; delete one first.',
  },
  // Payment links
  invalid_payment_link_id: { type: 'invalid_request_error', message: 'The payment link id must be a UUID.' },
  payment_link_not_found: { type: 'not_found_error', message: 'No payment link with that id.' },
  invalid_link_amount: {
    type: 'invalid_request_error',
    message: 'A payment link has either amount (a fixed price) or minAmount/maxAmount (an open amount, minAmount at most maxAmount), not both ({param}).',
  },
  invalid_max_payments: { type: 'invalid_request_error', message: 'maxPayments must be an integer from 1 to 1000000.' },
  invalid_expires_at: { type: 'invalid_request_error', message: 'expiresAt must be an RFC 3339 time in the future.' },
  // Subscriptions
  invalid_plan_id: { type: 'invalid_request_error', message: 'The plan id must be a UUID.' },
  plan_not_found: { type: 'not_found_error', message: 'No plan with that id.' },
  plan_archived: { type: 'invalid_request_error', status: 409, message: 'The plan is archived: it takes no new subscriptions.' },
  invalid_plan_name: { type: 'invalid_request_error', message: 'name must be 1 to 200 characters, not all blank.' },
  invalid_interval: { type: 'invalid_request_error', message: 'interval must be day, week, month or year; intervalCount an integer from 1 to 365.' },
  invalid_days: { type: 'invalid_request_error', message: '{param} must be a whole number of days (trialDays 0–365, graceDays and reminderDays 0–90).' },
  invalid_subscription_id: { type: 'invalid_request_error', message: 'The subscription id must be a UUID.' },
  subscription_not_found: { type: 'not_found_error', message: 'No subscription with that id.' },
  invalid_subscription_status: { type: 'invalid_request_error', message: 'status must be one of trialing, active, past_due, expired, cancelled.' },
  subscription_ended: { type: 'invalid_request_error', status: 409, message: 'The subscription has ended (expired or cancelled).' },
  invalid_customer: {
    type: 'invalid_request_error',
    message: 'customer needs reference (1 to 200 characters); email and telegramUserID are optional ({param}).',
  },
  invalid_seconds: { type: 'invalid_request_error', message: 'seconds must be an integer from 1 to 315360000 (ten years).' },
  // The service
  internal_error: { type: 'api_error', message: 'An unexpected error occurred; retry later or contact support.' },
  rate_unavailable: { type: 'api_error', status: 503, retryAfter: 30, message: 'No fresh exchange rate is available right now; retry shortly.' },
  service_unavailable: { type: 'api_error', status: 503, retryAfter: 5, message: 'The service cannot reach its database right now; retry shortly.' },
  chain_behind: {
    type: 'api_error',
    status: 503,
    retryAfter: 5,
    message: 'Kassa has not read the chain up to now yet, so it cannot tell whether the payment was paid; retry shortly.',
  },
  chain_unavailable: {
    type: 'api_error',
    status: 503,
    retryAfter: 5,
    message: 'The TON network cannot be reached right now; retry shortly, or pay with the QR code.',
  },
  too_many_streams: {
    type: 'api_error',
    status: 503,
    message: "The server holds as many live-status streams as it allows; poll the payment's view instead, or retry later.",
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Every code, for checks that a name is one (the `errorCode` schema keyword's allowed values). */
export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

export const statusOf = (code: ErrorCode): number => {
  const entry: CatalogueEntry = ERROR_CATALOGUE[code];
  return entry.status ?? STATUS_BY_TYPE[entry.type];
};

export const typeOf = (code: ErrorCode): ErrorType => ERROR_CATALOGUE[code].type;

/** The catalogue's `Retry-After` of a code, when it has one. */
export const retryAfterOf = (code: ErrorCode): number | undefined => (ERROR_CATALOGUE[code] as CatalogueEntry).retryAfter;

/** A code's default message about `param` (`{param}` in the catalogue's text). */
const defaultMessage = (code: ErrorCode, param?: string): string => ERROR_CATALOGUE[code].message.replaceAll('{param}', param ?? 'a parameter');

/** What an error may tell beyond its message. */
interface ErrorDetails {
  /** Seconds to wait before retrying, when they are not the catalogue's. */
  retryAfterSeconds?: number;
  /** The methods the route accepts (method_not_allowed). */
  allowedMethods?: string;
  /** What a token refund needs of the store's refund gas and what is left, in TON (refund_gas_unpaid; the dashboard words it). */
  refundGas?: { needed: string; available: string };
}

interface ErrorOptions {
  param?: string | undefined;
  details?: ErrorDetails;
}

/**
 * An error of the catalogue, as Kassa's code says it: no HTTP status or headers (the HTTP layer
 * maps them). Its message is its code's default (about its param), or a named factory's below.
 */
export class KassaError extends Error {
  override name = 'KassaError';
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, options: ErrorOptions = {}) {
    super(defaultMessage(code, options.param));
    this.code = code;
    this.param = options.param;
    this.details = options.details ?? {};
  }
}

/** An error worded for its case: the named factories' one way to say more than the default. */
const said = (code: ErrorCode, message: string, options: ErrorOptions = {}): KassaError => {
  const error = new KassaError(code, options);
  error.message = message;
  return error;
};

// ---- The named factories: each says what its case adds to the code's default.

export const paymentNotFound = (): KassaError => new KassaError('payment_not_found');

export const authInvalid = (): KassaError => new KassaError('auth_invalid');

/** A valid token whose scope does not allow the request (src/auth/scopes.ts): which scope it has, which it needs. */
export const insufficientScope = (scope: string, needed: string): KassaError =>
  said('insufficient_scope', `This token's scope (${scope}) does not allow this request; it needs a token with scope ${needed}.`);

export const rateLimited = (retryAfterSeconds: number): KassaError => new KassaError('rate_limit_exceeded', { details: { retryAfterSeconds } });

export const internalError = (): KassaError => new KassaError('internal_error');

export const serviceUnavailable = (): KassaError => new KassaError('service_unavailable');

/** The chain reader has not booked the chain up to the time a decision needs (cancel, sandbox expire). */
export const chainBehind = (): KassaError => new KassaError('chain_behind');

/** The process holds CHECKOUT_STREAMS_MAX live-status streams already (the page polls instead). */
export const tooManyStreams = (retryAfterSeconds: number): KassaError => new KassaError('too_many_streams', { details: { retryAfterSeconds } });

/** No route at this path (and, when given, with this method). */
export const routeNotFound = (method: string, path: string): KassaError => said('route_not_found', `There is no route ${method} ${path}.`);

export const methodNotAllowed = (allowedMethods: string): KassaError => new KassaError('method_not_allowed', { details: { allowedMethods } });

/** An HTTP/1.1 request without a Host header (RFC 9112 §3.2). */
export const missingHost = (): KassaError => said('malformed_request', 'An HTTP/1.1 request needs a Host header.');

export const unsupportedCharset = (charset: string): KassaError =>
  said('unsupported_media_type', `The request body must be UTF-8 JSON, not charset=${charset}.`);

export const unsupportedEncoding = (coding: string): KassaError =>
  said('unsupported_media_type', `Content-Encoding ${coding} is not supported; send identity, gzip or deflate.`);

/** A chunked body whose chunk extensions exceed Node's limit (answered before any route). */
export const chunkExtensionsTooLarge = (): KassaError => said('payload_too_large', 'The chunk extensions of the request body are too large.');

export const bodyNotUtf8 = (): KassaError => said('invalid_json', 'The request body is not valid UTF-8.');

export const bodyUnreadable = (): KassaError => said('invalid_json', 'The request body could not be read (broken compression or an aborted upload).');

const UNSAFE_TEXT = 'not contain U+0000 or unpaired UTF-16 surrogates';

/**
 * Text Kassa will not take (docs/API.md, Errors): `what` contains U+0000 or a lone surrogate —
 * `percentEncoded` when it arrived in the URL, where a bad percent escape is refused too. `code`
 * is the field's own (its schema's `errorCode`), invalid_request otherwise.
 */
export const unsafeText = (what: string, options: { code?: ErrorCode; param?: string; percentEncoded?: boolean } = {}): KassaError =>
  said(options.code ?? 'invalid_request', `${what} must ${options.percentEncoded ? 'be percent-encoded UTF-8 and ' : ''}${UNSAFE_TEXT}.`, {
    param: options.param,
  });

/** A request field without a code of its own that breaks its schema's `rule` ("must be a string"). */
export const fieldBreaksRule = (param: string, rule: string): KassaError => said('invalid_request', `${param} ${rule}.`, { param });

/** A field the invoice type needs (`POST /v1/payments/create`). */
export const requiredFor = (param: string, invoiceType: 'FIAT' | 'CRYPTO'): KassaError =>
  said('missing_parameter', `${param} is required for a ${invoiceType} invoice.`, { param });

/** A currency Kassa does not know, with the ones it does. */
export const unknownCurrency = (param: string, supported: readonly string[]): KassaError =>
  said('currency_not_found', `${param} must be one of ${supported.join(', ')}.`, { param });

/** An amount finer than its coin. */
export const tooManyDecimals = (param: string, coin: string, decimals: number): KassaError =>
  said('invalid_amount', `${param} has more decimals than ${coin} has (${decimals}).`, { param });

/** A webhookURL or returnURL that is not a public HTTPS URL: `reason` says which rule (src/net/addresses.ts). */
export const unusableUrl = (code: 'invalid_webhook_url' | 'invalid_return_url' | 'invalid_endpoint_url', param: string, reason: string): KassaError =>
  said(code, reason, { param });

/** No rate between the payment's currency and the method's coin. */
export const noRateBetween = (currency: string, coin: string, chain: string, param: string): KassaError =>
  said('unsupported_payment_method', `A payment in ${currency} cannot be paid in ${coin} on ${chain}.`, { param });

/** A jetton whose master Kassa has not configured on this network. */
export const noJettonMaster = (coin: string, network: string, param: string | undefined): KassaError =>
  said('unsupported_payment_method', `${coin} has no jetton master configured on ${network}; it cannot be paid here yet.`, { param });

/** The checkout's TON Connect request for a jetton that has no master on this network. */
export const coinNotOnNetwork = (): KassaError => said('payment_not_open', 'This coin cannot be paid on this network.');

/** No fresh rate to price a payment (rate_unavailable's 503 and Retry-After). */
export const rateUnavailable = (currency: string, coin: string): KassaError =>
  said('rate_unavailable', `No fresh ${currency}/${coin} exchange rate is available right now; retry shortly.`);

/** A refund asks for more of a coin than the payment's deposit holds refundable. */
export const refundExceedsBalance = (coin: string, why: string): KassaError =>
  said('refund_exceeds_balance', `The refund is more than the payment's refundable ${coin}: ${why}`, { param: 'amount' });

/** A jetton refund whose gas the store has not paid for (treasury/refunds.ts, the store's refund gas account). */
export const refundGasUnpaid = (needed: string, available: string): KassaError =>
  said(
    'refund_gas_unpaid',
    `A jetton refund needs ${needed} TON of gas from Kassa's shared gas wallet, and this store has ${available} TON paid for refund gas left; an owner adds some from their wallet on the dashboard's Money page (or the operator records a payment with \`kassa gas paid\`).`,
    { details: { refundGas: { needed, available } } },
  );

/** A refund smaller than its coin's minimum (it would cost about as much as it moves). */
export const refundBelowMinimum = (coin: string, minimum: string): KassaError =>
  said('refund_below_minimum', `The smallest ${coin} refund is ${minimum}: a smaller one would cost about as much as it moves.`, { param: 'amount' });

/** A refund's destination Kassa will not send to (src/treasury/destinations.ts says why). */
export const unusableDestination = (problem: string, param = 'address'): KassaError =>
  said('invalid_address', `Kassa cannot send there: ${problem}.`, { param });

/** The chain API could not say whether a refund's destination is one of Kassa's own jetton wallets (treasury/destinations.ts). */
export const destinationUncheckable = (): KassaError =>
  said('chain_unavailable', "The TON network cannot be reached right now to check that the destination is none of Kassa's own jetton wallets; retry shortly.");

/** The chain API could not give the treasury's jetton wallet (its master's get_wallet_address) for a treasury refund. */
/** An unmatched transfer no longer open for a decision: what became of it (a refund of it in a wallet until `heldUntil`). */
export const unmatchedTransferNotOpen = (state: string, heldUntil: Date | null = null): KassaError =>
  state === 'refunding'
    ? said(
        'unmatched_transfer_not_open',
        `A refund of this unmatched transfer is awaiting the treasury's signature${heldUntil ? ` (held until ${heldUntil.toISOString()})` : ''}: sign or decline it; it is open again if it expires unseen.`,
        { param: 'id' },
      )
    : said('unmatched_transfer_not_open', `The unmatched transfer is no longer open: it was ${state} already.`, { param: 'id' });

export const treasuryJettonWalletUnknown = (coin: string): KassaError =>
  said('chain_unavailable', `The TON network cannot be reached right now to ask the ${coin} master for the treasury's jetton wallet; retry shortly.`);

/** The sandbox chain refuses a transfer's input, in its own words (src/chain/sandbox/chain.ts). */
export const sandboxRefusal = (
  code: 'invalid_amount' | 'invalid_address' | 'insufficient_funds' | 'invalid_request',
  message: string,
  param?: string,
): KassaError => said(code, message, { param });

/**
 * A problem with what a person typed — a dashboard form's field or a `kassa` command's option —
 * in words for them; nothing was changed. Not of the catalogue: the API's refusals are KassaErrors,
 * and this one's words are the page's or the command line's (a form shows it beside its field, the
 * CLI prints it as one line). `field`: the form field, or the option without its dashes, it is
 * about (null: the whole form or command).
 */
export class FormProblem extends Error {
  override name = 'FormProblem';
  readonly field: string | null;
  constructor(message: string, field: string | null = null) {
    super(message);
    this.field = field;
  }
}

/**
 * A job's failure that is not Kassa's fault — a merchant's webhook receiver that answered 500 or
 * did not answer — thrown so that the queue retries the job. The code that met it logs one `warn`
 * line saying what happened; the queue's own failure line for it drops to `debug`, without a
 * stack (src/db/migrate.ts, graphileLogger): `error` lines are kept for Kassa's own faults.
 */
export class ExternalFailure extends Error {
  override name = 'ExternalFailure';
}
