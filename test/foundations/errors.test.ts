// The error catalogue (src/errors.ts) is the one list of error codes: docs/API.md's table lists
// exactly its codes with the same type and status, the HTTP layer (`httpError`) takes an error's
// type, status and headers from it, and an error says its code's default message unless a named
// factory of src/errors.ts words it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  authInvalid,
  chainBehind,
  ERROR_CATALOGUE,
  type ErrorCode,
  KassaError,
  rateLimited,
  refundExceedsBalance,
  statusOf,
  tooManyStreams,
} from '../../src/errors.ts';
import { httpError } from '../../src/http/errorEnvelope.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The rows of docs/API.md's error table: `| \`code\`, \`code\` | type | status | when |`. */
function documentedCodes(): Map<string, { type: string; status: number }> {
  const text = fs.readFileSync(path.join(ROOT, 'docs/API.md'), 'utf8');
  const rows = new Map<string, { type: string; status: number }>();
  for (const line of text.split('\n')) {
    const match = /^\| (`[a-z_]+`(?:, `[a-z_]+`)*) \| ([a-z_]+_error) \| (\d{3}) \|/.exec(line);
    if (!match) continue;
    for (const code of match[1]!.match(/[a-z_]+/g)!) rows.set(code, { type: match[2]!, status: Number(match[3]) });
  }
  return rows;
}

describe('the error catalogue', () => {
  it('docs/API.md lists every code of the catalogue with its type and status, and no other', () => {
    const documented = documentedCodes();
    assert.ok(documented.size > 30, `${documented.size} documented codes`);
    const catalogue = new Map(Object.entries(ERROR_CATALOGUE).map(([code, entry]) => [code, { type: entry.type, status: statusOf(code as ErrorCode) }]));
    assert.deepEqual(new Map([...documented].sort()), new Map([...catalogue].sort()));
  });

  it("HTTP maps an error to the envelope with its code's type and status, and the headers its details ask for", () => {
    const rate = httpError(new KassaError('rate_unavailable'));
    assert.equal(rate.status, 503);
    assert.deepEqual(rate.headers, { 'Retry-After': '30' });
    assert.deepEqual(rate.body, {
      error: { type: 'api_error', message: 'No fresh exchange rate is available right now; retry shortly.', code: 'rate_unavailable' },
    });
    const missing = httpError(new KassaError('currency_not_found', { param: 'fiatCurrency' }));
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.headers, {});
    assert.deepEqual(missing.body, {
      error: { type: 'not_found_error', message: 'fiatCurrency is not a currency Kassa supports.', code: 'currency_not_found', param: 'fiatCurrency' },
    });
    assert.deepEqual(httpError(tooManyStreams(7)).headers, { 'Retry-After': '7' }, "an error's own seconds win over the catalogue's");
    assert.deepEqual(httpError(rateLimited(3)).headers, { 'Retry-After': '3' });
    assert.deepEqual(httpError(chainBehind()).headers, { 'Retry-After': '5' });
    assert.deepEqual(httpError(authInvalid()).headers, { 'WWW-Authenticate': 'Bearer' });
    assert.deepEqual(httpError(new KassaError('method_not_allowed', { details: { allowedMethods: 'GET, HEAD' } })).headers, { Allow: 'GET, HEAD' });
    assert.equal(httpError(new KassaError('payment_not_cancellable')).status, 409);
  });

  it('an error names its code, message, param and details, and nothing of HTTP', () => {
    const error = chainBehind();
    assert.ok(error instanceof KassaError);
    assert.deepEqual(Object.keys(error).sort(), ['code', 'details', 'name', 'param']);
  });

  it('every code has one default message, a sentence about its param when it names one', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE) as Array<[ErrorCode, (typeof ERROR_CATALOGUE)[ErrorCode]]>) {
      assert.match(entry.message, /^[A-Z{a-z].*\.$/, code);
      const error = new KassaError(code, { param: 'metadata.color' });
      assert.equal(error.message, entry.message.replaceAll('{param}', 'metadata.color'), code);
      assert.ok(!error.message.includes('{param}'), code);
    }
    assert.equal(new KassaError('invalid_amount', { param: 'fiatAmount' }).message.split(' ')[0], 'fiatAmount');
  });

  it('a named factory says more than the default, under the same code; nothing else words a message', () => {
    // @ts-expect-error: a message is the catalogue's or a named factory's (src/errors.ts), never written at the throw.
    assert.equal(new KassaError('payment_not_open', 'Some other text.').message, ERROR_CATALOGUE.payment_not_open.message);
    const error = refundExceedsBalance('TON', 'at most 0.49 TON is refundable now.');
    assert.equal(error.code, 'refund_exceeds_balance');
    assert.equal(error.param, 'amount');
    assert.match(error.message, /refundable TON: at most 0\.49 TON/);
    assert.notEqual(error.message, ERROR_CATALOGUE.refund_exceeds_balance.message);
  });
});
