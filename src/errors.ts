// The one error vocabulary of Kassa (CONTRACT §2). Every failure a client can see is an ApiError;
// the HTTP layer renders it as {"error": {type, message, code, param?}} with its status.

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'api_error';

const STATUS_BY_TYPE: Record<ErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  not_found_error: 404,
  rate_limit_error: 429,
  api_error: 500,
};

/** Codes whose status is not the one of their type. */
const STATUS_BY_CODE: Record<string, number> = {
  idempotency_key_reused: 422,
  payment_not_cancellable: 409,
  payment_expired: 409,
  method_already_selected: 409,
  payment_not_open: 409,
  method_not_selected: 409,
  payment_not_completed: 409,
  no_webhook_url: 409,
  payload_too_large: 413,
  headers_too_large: 431,
  request_timeout: 408,
  unsupported_media_type: 415,
  method_not_allowed: 405,
  rate_unavailable: 503,
  service_unavailable: 503,
  chain_behind: 503,
  too_many_streams: 503,
  chain_unavailable: 503,
};

export class ApiError extends Error {
  override name = 'ApiError';
  readonly type: ErrorType;
  readonly code: string;
  readonly param: string | undefined;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(type: ErrorType, code: string, message: string, options: { param?: string; headers?: Record<string, string>; status?: number } = {}) {
    super(message);
    this.type = type;
    this.code = code;
    this.param = options.param;
    this.status = options.status ?? STATUS_BY_CODE[code] ?? STATUS_BY_TYPE[type];
    this.headers = options.headers ?? {};
  }

  toJSON(): { error: { type: ErrorType; message: string; code: string; param?: string } } {
    return {
      error: {
        type: this.type,
        message: this.message,
        code: this.code,
        ...(this.param !== undefined ? { param: this.param } : {}),
      },
    };
  }
}

export const invalidRequest = (code: string, message: string, param?: string): ApiError =>
  new ApiError('invalid_request_error', code, message, param === undefined ? {} : { param });

export const notFound = (code: string, message: string, param?: string): ApiError =>
  new ApiError('not_found_error', code, message, param === undefined ? {} : { param });

export const authInvalid = (): ApiError =>
  new ApiError('authentication_error', 'auth_invalid', 'The access token is missing, invalid, expired or revoked.', {
    headers: { 'WWW-Authenticate': 'Bearer' },
  });

export const rateLimited = (retryAfterSeconds: number): ApiError =>
  new ApiError('rate_limit_error', 'rate_limit_exceeded', 'Too many requests; retry after a short delay.', {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });

export const internalError = (): ApiError =>
  new ApiError('api_error', 'internal_error', 'An unexpected error occurred; retry later or contact support.');

export const serviceUnavailable = (): ApiError =>
  new ApiError('api_error', 'service_unavailable', 'The service cannot reach its database right now; retry shortly.', {
    status: 503,
    headers: { 'Retry-After': '5' },
  });

/** The chain reader has not booked the chain up to the time a decision needs (cancel, sandbox expire). */
export const chainBehind = (): ApiError =>
  new ApiError('api_error', 'chain_behind', 'Kassa has not read the chain up to now yet, so it cannot tell whether the payment was paid; retry shortly.', {
    headers: { 'Retry-After': '5' },
  });

/** The process holds CHECKOUT_STREAMS_MAX live-status streams already (the page polls instead). */
export const tooManyStreams = (retryAfterSeconds: number): ApiError =>
  new ApiError('api_error', 'too_many_streams', 'The server holds as many live-status streams as it allows; poll the payment\'s view instead, or retry later.', {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });

/** A refund asks for more of a coin than the payment's deposit holds refundable. */
export const refundExceedsBalance = (refundable: string, coin: string): ApiError =>
  invalidRequest('refund_exceeds_balance', `The payment's refundable ${coin} balance is ${refundable}; a refund cannot exceed it.`, 'amount');

/** Not a TON address of the configured network. */
export const invalidAddress = (problem: string, param = 'address'): ApiError =>
  invalidRequest('invalid_address', `Not a TON address for this network: ${problem}.`, param);
