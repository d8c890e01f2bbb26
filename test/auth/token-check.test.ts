// The token's database check exists twice — `checkTokenRow` (the guard's own statement) and
// `tokenValidSql` (folded into the first statement of create, retrieve and status) — so this pins
// the two to one rule over every way a row can refuse its token. The rule includes the scope (issue
// 35): the API enforces the token's signed claim and the lists show the row, so a row whose scope
// differs from its token's claim refuses the token — what a list shows is what the API allows.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { checkTokenRow, issueToken, tokenValidSql, verifyToken, type VerifiedToken } from '../../src/auth/tokens.ts';
import { sql, z } from '../../src/db/pool.ts';
import { assertError, startPaymentsApp } from '../helpers/payments.ts';
import type { TestApp } from '../helpers/app.ts';

let app: TestApp;
before(async () => {
  app = await startPaymentsApp();
});
after(() => app.close());

const now = new Date('2026-03-01T00:00:00Z');

async function bothChecks(token: VerifiedToken, at: Date): Promise<{ row: boolean; sql: boolean }> {
  const row = await checkTokenRow(app.pool, token, at).then(
    () => true,
    () => false,
  );
  const inline = await app.pool.oneFirst(sql.type(z.object({ ok: z.boolean() }))`select ${tokenValidSql(token, at)} as ok`);
  return { row, sql: inline };
}

describe("a token's database check: the guard's and the inline one agree", () => {
  it('over a valid row, a revoked one, an expired one, another store, an unknown jti and a row whose scope was edited', async () => {
    const store = await app.store();
    const other = await app.store();
    const cases: Array<[string, (jti: string) => Promise<unknown>, boolean, Partial<VerifiedToken>?]> = [
      ['valid', async () => {}, true],
      ['revoked', (jti) => app.pool.query(sql.unsafe`update api_tokens set revoked_at = ${sql.timestamp(now)} where jti = ${jti}`), false],
      ['expired', (jti) => app.pool.query(sql.unsafe`update api_tokens set expires_at = ${sql.timestamp(now)} where jti = ${jti}`), false],
      [
        'expires later',
        (jti) => app.pool.query(sql.unsafe`update api_tokens set expires_at = ${sql.timestamp(new Date(now.getTime() + 1000))} where jti = ${jti}`),
        true,
      ],
      ['another store', async () => {}, false, { storeId: other.id }],
      ['unknown jti', async () => {}, false, { jti: crypto.randomUUID() }],
      ['row widened by hand', (jti) => app.pool.query(sql.unsafe`update api_tokens set scope = 'full' where jti = ${jti}`), false],
      ['row narrowed by hand', (jti) => app.pool.query(sql.unsafe`update api_tokens set scope = 'read_only' where jti = ${jti}`), false],
    ];
    for (const [name, change, valid, claims] of cases) {
      const issued = await issueToken(app.pool, store.id, null, new Date(now.getTime() - 60_000), 'create_payments');
      await change(issued.jti);
      const token: VerifiedToken = { storeId: store.id, jti: issued.jti, scope: 'create_payments', ...claims };
      assert.deepEqual(await bothChecks(token, now), { row: valid, sql: valid }, name);
    }
  });

  it('a token whose row says another scope is refused (401) by the guard and by the inline read, as the list shows its row', async () => {
    const store = await app.store();
    const issued = await issueToken(app.pool, store.id, null, new Date(), 'read_only');
    assert.equal((await app.request('GET', '/v1/payments', { token: issued.token })).status, 200);
    // Widened in the table by hand: the token does not get full access, it stops working.
    await app.pool.query(sql.unsafe`update api_tokens set scope = 'full' where jti = ${issued.jti}`);
    assertError(await app.request('GET', '/v1/payments', { token: issued.token }), 401, 'authentication_error', 'auth_invalid');
    assertError(await app.request('GET', `/v1/payments/${crypto.randomUUID()}`, { token: issued.token }), 401, 'authentication_error', 'auth_invalid');
    assertError(
      await app.request('POST', '/v1/payments', { token: issued.token, body: { amount: '1', currency: 'USD' } }),
      401,
      'authentication_error',
      'auth_invalid',
    );
  });

  it('a jti refused for good (revoked) is refused from memory afterwards, without its row; a refusal of claims (another store) is not remembered', async () => {
    const other = await app.store();
    const store = await app.store();
    const issued = await issueToken(app.pool, store.id, null, new Date());
    const verified = await verifyToken(app.pool, issued.token, new Date());
    // The same jti with another store's claim is refused, and the token itself still works.
    await assert.rejects(checkTokenRow(app.pool, { ...verified, storeId: other.id }, new Date()));
    await checkTokenRow(app.pool, await verifyToken(app.pool, issued.token, new Date()), new Date());
    await app.pool.query(sql.unsafe`update api_tokens set revoked_at = now() where jti = ${issued.jti}`);
    await assert.rejects(checkTokenRow(app.pool, verified, new Date()));
    // Even with its row gone, the process remembers the refusal (a revoked token never comes back).
    await app.pool.query(sql.unsafe`delete from api_tokens where jti = ${issued.jti}`);
    await assert.rejects(verifyToken(app.pool, issued.token, new Date()), (error: { code?: string }) => error.code === 'auth_invalid');
  });
});
