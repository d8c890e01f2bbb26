// POST /v1/payments answers with a view made before its write (`createPaymentOnce`: the key's row
// holds the answer, written in the same statement as the payment). This pins that view to the rule
// it stands in for — the payment as PostgreSQL stores it, read through the one reader — for the
// forms that differ between what a request says and what the row holds: metadata keys in any order
// (jsonb orders them by length, then bytes), amounts with trailing zeros (numeric keeps the scale),
// a coin amount priced with many decimals, Customer Choice and Preselected (TON and a jetton), with
// and without an idempotency key. Byte for byte: the answer's text against a GET's, and its replay.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startPaymentsApp } from '../helpers/payments.ts';
import type { TestApp } from '../helpers/app.ts';

let app: TestApp;
let token: string;
before(async () => {
  app = await startPaymentsApp();
  token = (await app.store()).token;
});
after(() => app.close());

const metadata = { zeta: '1', a: 'short key', é: 'two bytes', bb: 'x', Z: 'upper', 'a long key indeed': 'y', ab: '', '10': 'digits' };

describe('the create’s answer, made before its write, is the payment as stored', () => {
  const bodies: Array<[string, Record<string, unknown>]> = [
    ['Customer Choice, fiat, trailing zeros, metadata in any order', { amount: '10.50', currency: 'USD', metadata, order_id: 'pin-1', description: 'Tea' }],
    [
      'Preselected TON in TON, many decimals',
      { amount: '1.123456789', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] }, metadata },
    ],
    ['Preselected USDT priced from EUR', { amount: '0.10', currency: 'EUR', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] }, ttl: 900 }],
    [
      'Preselected TON priced from USD',
      { amount: '3.3300', currency: 'USD', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] }, returnURL: 'https://shop.example/back' },
    ],
  ];
  for (const [name, body] of bodies) {
    for (const keyed of [true, false]) {
      it(`${name}${keyed ? ', with an idempotency key' : ''}`, async () => {
        const headers: Record<string, string> = keyed ? { 'x-idempotency-key': crypto.randomUUID() } : {};
        const created = await app.request('POST', '/v1/payments', { token, body, headers });
        assert.equal(created.status, 201, created.text);
        const read = await app.request('GET', `/v1/payments/${created.json.id}`, { token });
        assert.equal(created.text, read.text);
        if (keyed) {
          const replayed = await app.request('POST', '/v1/payments', { token, body, headers });
          assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
          assert.equal(replayed.text, created.text);
        }
      });
    }
  }
});
