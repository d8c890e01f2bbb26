// The check test/helpers/app.ts runs on every response (test/helpers/openapi.ts) catches drift:
// an undocumented status, an undocumented or missing property, a missing X-Request-Id.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openApiDocument } from '../../src/http/openapi.ts';
import { responseChecker } from '../helpers/openapi.ts';

const check = responseChecker(JSON.parse(JSON.stringify(openApiDocument('http://127.0.0.1:3000', 'http://127.0.0.1:3000/pay'))));
const headers = (extra: Record<string, string> = {}) => new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r1', ...extra });
const id = '5f0c6c1e-8a4e-4d7a-9a51-0c1f2f3e4d5c';
const error = JSON.stringify({ error: { type: 'not_found_error', message: 'No payment with that id.', code: 'payment_not_found' } });
const status = JSON.stringify({ id, status: 'pending' });

describe('the OpenAPI response check', () => {
  it('passes a documented response', () => {
    assert.deepEqual(check('GET', `/v1/payments/${id}`, 404, headers(), error), []);
    assert.deepEqual(check('GET', `/v1/payments/${id}/status`, 200, headers(), status), []);
  });

  it('flags an undocumented status, an undocumented property, a missing one, and a missing X-Request-Id', () => {
    assert.match(check('GET', `/v1/payments/${id}`, 418, headers(), error).join('\n'), /status is not documented/);
    assert.match(
      check('GET', `/v1/payments/${id}/status`, 200, headers(), JSON.stringify({ id, status: 'pending', extra: 1 })).join('\n'),
      /additional properties/,
    );
    assert.match(check('GET', `/v1/payments/${id}/status`, 200, headers(), JSON.stringify({ id })).join('\n'), /required property 'status'/);
    assert.match(check('GET', `/v1/payments/${id}`, 404, new Headers({ 'content-type': 'application/json' }), error).join('\n'), /X-Request-Id is missing/);
  });

  it('matches literal paths before templates, and leaves undocumented paths alone', () => {
    assert.deepEqual(check('GET', '/v1/payments/methods', 200, headers(), JSON.stringify({ data: [] })), []);
    assert.deepEqual(check('POST', '/sandbox/v1/transfers', 201, headers(), '{"anything":true}'), []);
  });
});
