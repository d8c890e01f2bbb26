// Payment test helpers: a ready app with sandbox rates, and shortcuts for creating payments.
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { fixedProvider } from '../../src/rates/providers.ts';
import { refreshRates } from '../../src/rates/rates.ts';
import { startTestApp, type TestApp, type TestAppOptions, type TestResponse } from './app.ts';

export async function startPaymentsApp(options: TestAppOptions = {}): Promise<TestApp> {
  const app = await startTestApp(options);
  await refreshRates(app.pool, fixedProvider(), 'sandbox', new Date(), pino({ level: 'silent' }));
  return app;
}

export function assertError(response: TestResponse, status: number, type: string, code: string, param?: string): void {
  assert.equal(response.status, status, `${code}: ${response.text}`);
  assert.equal(response.json?.error?.type, type, response.text);
  assert.equal(response.json?.error?.code, code, response.text);
  assert.equal(response.json?.error?.param, param, response.text);
  assert.equal(typeof response.json.error.message, 'string');
  assert.deepEqual(Object.keys(response.json), ['error']);
}
