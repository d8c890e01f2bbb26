// Payment test helpers: a ready app with sandbox rates, and shortcuts for creating payments.
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { sql, type DatabasePool } from '../../src/db/pool.ts';
import { fixedProvider } from '../../src/rates/providers.ts';
import { refreshRates } from '../../src/rates/rates.ts';
import { startTestApp, type TestApp, type TestAppOptions, type TestResponse } from './app.ts';

export async function startPaymentsApp(options: TestAppOptions = {}): Promise<TestApp> {
  const app = await startTestApp(options);
  await refreshRates(app.pool, fixedProvider(), 'sandbox', new Date(), pino({ level: 'silent' }));
  await chainReadFarAhead(app.pool);
  return app;
}

/**
 * For apps without a chain: the chain counts as read far into the future, so a cancel of a
 * pending payment is decided at once (no chain reader runs to wait for). startChainApp undoes it.
 */
export async function chainReadFarAhead(pool: DatabasePool): Promise<void> {
  await pool.query(sql.unsafe`
    insert into chain_reader (network, last_block_seqno, last_block_time, settled_until, latest_block_seqno, latest_block_time)
    values ('sandbox', 0, '9999-01-01', '9999-01-01', 0, '9999-01-01') on conflict (network) do nothing
  `);
}

export function assertError(response: TestResponse, status: number, type: string, code: string, param?: string): void {
  assert.equal(response.status, status, `${code}: ${response.text}`);
  assert.equal(response.json?.error?.type, type, response.text);
  assert.equal(response.json?.error?.code, code, response.text);
  assert.equal(response.json?.error?.param, param, response.text);
  assert.equal(typeof response.json.error.message, 'string');
  assert.deepEqual(Object.keys(response.json), ['error']);
}
