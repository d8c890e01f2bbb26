// The error catalogue (src/errors.ts) is the one list of error codes: docs/API.md's table lists
// exactly its codes with the same type and status, and code that builds an ApiError by hand uses
// the type the catalogue gives its code.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ApiError, apiError, ERROR_CATALOGUE, type ErrorCode, statusOf } from '../../src/errors.ts';

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

  it('an ApiError built by hand in src/ has the type the catalogue gives its code', () => {
    const wrong: string[] = [];
    for (const file of fs.globSync('src/**/*.ts', { cwd: ROOT })) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/new ApiError\(\s*'([a-z_]+)',\s*'([a-z_]+)'/g)) {
        const entry = ERROR_CATALOGUE[match[2] as ErrorCode];
        if (entry?.type !== match[1]) wrong.push(`${file}: ${match[2]} as ${match[1]}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('apiError takes type, status and Retry-After from the catalogue; a factory may set its own', () => {
    const rate = apiError('rate_unavailable', 'No rate.');
    assert.ok(rate instanceof ApiError);
    assert.equal(rate.type, 'api_error');
    assert.equal(rate.status, 503);
    assert.deepEqual(rate.headers, { 'Retry-After': '30' });
    const missing = apiError('currency_not_found', 'No such currency.', { param: 'currency' });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.toJSON(), { error: { type: 'not_found_error', message: 'No such currency.', code: 'currency_not_found', param: 'currency' } });
    assert.deepEqual(apiError('too_many_streams', 'Full.', { headers: { 'Retry-After': '7' } }).headers, { 'Retry-After': '7' });
    assert.equal(apiError('payment_not_cancellable', 'No.').status, 409);
  });
});
