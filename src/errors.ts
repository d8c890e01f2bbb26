// The one error vocabulary of Kassa (docs/API.md, Errors). Every failure a client can see is a
// KassaError: a code of the catalogue below, a message, the param it is about and, for some, details
// (how long to wait). Domain code throws it and knows nothing of HTTP; the HTTP layer
// (src/http/middleware.ts, `httpError`) renders it as {"error": {type, message, code, param?}} with
// the catalogue's status and the headers its details ask for.

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
}

/**
 * Every error code a client can see, with its type, its status when it is not its type's, and its
 * `Retry-After`. docs/API.md lists them all (test/foundations/errors.test.ts keeps the two in step).
 */
export const ERROR_CATALOGUE = {
  // The request as HTTP
  invalid_json: { type: 'invalid_request_error' },
  payload_too_large: { type: 'invalid_request_error', status: 413 },
  unsupported_media_type: { type: 'invalid_request_error', status: 415 },
  route_not_found: { type: 'not_found_error' },
  method_not_allowed: { type: 'invalid_request_error', status: 405 },
  malformed_request: { type: 'invalid_request_error' },
  headers_too_large: { type: 'invalid_request_error', status: 431 },
  request_timeout: { type: 'invalid_request_error', status: 408 },
  auth_invalid: { type: 'authentication_error' },
  rate_limit_exceeded: { type: 'rate_limit_error' },
  // Parameters
  missing_parameter: { type: 'invalid_request_error' },
  unknown_parameter: { type: 'invalid_request_error' },
  invalid_request: { type: 'invalid_request_error' },
  invalid_amount: { type: 'invalid_request_error' },
  currency_not_found: { type: 'not_found_error' },
  invalid_payment_options: { type: 'invalid_request_error' },
  payment_method_not_found: { type: 'not_found_error' },
  unsupported_payment_method: { type: 'invalid_request_error' },
  invalid_ttl: { type: 'invalid_request_error' },
  invalid_order_id: { type: 'invalid_request_error' },
  invalid_description: { type: 'invalid_request_error' },
  invalid_metadata: { type: 'invalid_request_error' },
  invalid_webhook_url: { type: 'invalid_request_error' },
  invalid_return_url: { type: 'invalid_request_error' },
  invalid_invoice_type: { type: 'invalid_request_error' },
  conflicting_amounts: { type: 'invalid_request_error' },
  invalid_payment_method_id: { type: 'invalid_request_error' },
  invalid_idempotency_key: { type: 'invalid_request_error' },
  idempotency_key_reused: { type: 'invalid_request_error', status: 422 },
  invalid_payment_id: { type: 'invalid_request_error' },
  invalid_status: { type: 'invalid_request_error' },
  invalid_limit: { type: 'invalid_request_error' },
  invalid_created_after: { type: 'invalid_request_error' },
  invalid_starting_after: { type: 'invalid_request_error' },
  invalid_address: { type: 'invalid_request_error' },
  insufficient_funds: { type: 'invalid_request_error' },
  invalid_coin: { type: 'invalid_request_error' },
  // Refunds
  refund_exceeds_balance: { type: 'invalid_request_error' },
  refund_below_minimum: { type: 'invalid_request_error' },
  refund_gas_unpaid: { type: 'invalid_request_error', status: 409 },
  // Payments
  payment_not_found: { type: 'not_found_error' },
  payment_not_cancellable: { type: 'invalid_request_error', status: 409 },
  payment_expired: { type: 'invalid_request_error', status: 409 },
  method_already_selected: { type: 'invalid_request_error', status: 409 },
  payment_not_open: { type: 'invalid_request_error', status: 409 },
  method_not_selected: { type: 'invalid_request_error', status: 409 },
  payment_not_completed: { type: 'invalid_request_error', status: 409 },
  no_webhook_url: { type: 'invalid_request_error', status: 409 },
  // The service
  internal_error: { type: 'api_error' },
  rate_unavailable: { type: 'api_error', status: 503, retryAfter: 30 },
  service_unavailable: { type: 'api_error', status: 503, retryAfter: 5 },
  chain_behind: { type: 'api_error', status: 503, retryAfter: 5 },
  chain_unavailable: { type: 'api_error', status: 503, retryAfter: 5 },
  too_many_streams: { type: 'api_error', status: 503 },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export const statusOf = (code: ErrorCode): number => {
  const entry: CatalogueEntry = ERROR_CATALOGUE[code];
  return entry.status ?? STATUS_BY_TYPE[entry.type];
};

export const typeOf = (code: ErrorCode): ErrorType => ERROR_CATALOGUE[code].type;

/** The catalogue's `Retry-After` of a code, when it has one. */
export const retryAfterOf = (code: ErrorCode): number | undefined => (ERROR_CATALOGUE[code] as CatalogueEntry).retryAfter;

/** What an error may tell beyond its message. */
export interface ErrorDetails {
  /** Seconds to wait before retrying, when they are not the catalogue's. */
  retryAfterSeconds?: number;
  /** The methods the route accepts (method_not_allowed). */
  allowedMethods?: string;
}

/** An error of the catalogue, as Kassa's code says it: no HTTP status or headers (the HTTP layer maps them). */
export class KassaError extends Error {
  override name = 'KassaError';
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, options: { param?: string | undefined; details?: ErrorDetails } = {}) {
    super(message);
    this.code = code;
    this.param = options.param;
    this.details = options.details ?? {};
  }
}

export const paymentNotFound = (): KassaError => new KassaError('payment_not_found', 'No payment with that id.');

export const authInvalid = (): KassaError => new KassaError('auth_invalid', 'The access token is missing, invalid, expired or revoked.');

export const rateLimited = (retryAfterSeconds: number): KassaError =>
  new KassaError('rate_limit_exceeded', 'Too many requests; retry after a short delay.', { details: { retryAfterSeconds } });

export const internalError = (): KassaError => new KassaError('internal_error', 'An unexpected error occurred; retry later or contact support.');

export const serviceUnavailable = (): KassaError => new KassaError('service_unavailable', 'The service cannot reach its database right now; retry shortly.');

/** The chain reader has not booked the chain up to the time a decision needs (cancel, sandbox expire). */
export const chainBehind = (): KassaError =>
  new KassaError('chain_behind', 'Kassa has not read the chain up to now yet, so it cannot tell whether the payment was paid; retry shortly.');

/** The process holds CHECKOUT_STREAMS_MAX live-status streams already (the page polls instead). */
export const tooManyStreams = (retryAfterSeconds: number): KassaError =>
  new KassaError('too_many_streams', "The server holds as many live-status streams as it allows; poll the payment's view instead, or retry later.", {
    details: { retryAfterSeconds },
  });

/** A refund asks for more of a coin than the payment's deposit holds refundable. */
export const refundExceedsBalance = (refundable: string, coin: string): KassaError =>
  new KassaError(
    'refund_exceeds_balance',
    `The payment's refundable ${coin} balance allows a refund of at most ${refundable} (a TON refund's fee comes out of the refundable TON); a refund cannot exceed it.`,
    { param: 'amount' },
  );

/** A jetton refund whose gas the store has not paid for (treasury/refunds.ts, the store's refund gas account). */
export const refundGasUnpaid = (needed: string, available: string): KassaError =>
  new KassaError(
    'refund_gas_unpaid',
    `A jetton refund needs ${needed} TON of gas from Kassa's shared gas wallet, and this store has ${available} TON paid for refund gas left; the operator records what the store pays with \`kassa gas paid\`.`,
  );

/** A refund's destination Kassa will not send to (src/treasury/destinations.ts says why). */
export const unusableDestination = (problem: string, param = 'address'): KassaError =>
  new KassaError('invalid_address', `Kassa cannot send there: ${problem}.`, { param });

/** Not a TON address of the configured network. */
export const invalidAddress = (problem: string, param = 'address'): KassaError =>
  new KassaError('invalid_address', `Not a TON address for this network: ${problem}.`, { param });

/**
 * A job's failure that is not Kassa's fault — a merchant's webhook receiver that answered 500 or
 * did not answer — thrown so that the queue retries the job. The code that met it logs one `warn`
 * line saying what happened; the queue's own failure line for it drops to `debug`, without a
 * stack (src/db/migrate.ts, graphileLogger): `error` lines are kept for Kassa's own faults.
 */
export class ExternalFailure extends Error {
  override name = 'ExternalFailure';
}
