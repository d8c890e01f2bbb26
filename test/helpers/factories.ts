// Test factories with overridable defaults (as Outline's test/factories.ts): a payment in any
// status, created through the real API and then moved where a test needs it, with transfers in
// its books as the chain reader records them.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { issueToken } from '../../src/auth/tokens.ts';
import { type DatabasePool, sql, z } from '../../src/db/pool.ts';
import type { PaymentStatus } from '../../src/payments/transitions.ts';
import { createStore, parseMethodList, type StoreView } from '../../src/stores/stores.ts';
import { enqueueWebhookDelivery } from '../../src/webhooks/deliveries.ts';
import type { TestApp } from './app.ts';

export interface StoreSpec {
  name?: string;
  /** `COIN/CHAIN,…` as `kassa store create --methods` takes it; default TON/TON,USDT/TON. */
  methods?: string;
  /** The store's treasury (a raw address); default none. */
  treasury?: string;
  /** The store's refund window in days; default 0 (sales swept at completion, what most tests are about — a new store's default is 7). */
  refundWindowDays?: number;
}

/** A store, straight in the database as `kassa store create` makes it (its refund window 0 unless asked), and a token for it without expiry. */
export async function createTestStore(pool: DatabasePool, spec: StoreSpec = {}): Promise<StoreView & { token: string }> {
  const store = await createStore(pool, spec.name ?? 'Test store', parseMethodList(spec.methods ?? 'TON/TON,USDT/TON'), {
    ...(spec.treasury ? { treasury: spec.treasury } : {}),
    refundWindowDays: spec.refundWindowDays ?? 0,
  });
  const { token } = await issueToken(pool, store.id, null, new Date());
  return { ...store, token };
}

export interface TransferSpec {
  coin?: string;
  baseUnits: bigint;
  amount: string;
  /** The effect the chain reader decided (completed, partial, overpaid, wrong_coin, …). */
  effect: string;
}

export interface PaymentSpec {
  /** Default `created` without a method, `pending` with one. */
  status?: PaymentStatus;
  /** `{coin, chain}` for a Preselected payment; null for Customer Choice. Default: TON/TON unless status is `created`. */
  method?: { coin: string; chain: string } | null;
  /** Further fields of the POST /v1/payments body (amount, currency, webhookURL, metadata, …). */
  body?: Record<string, unknown>;
  transfers?: TransferSpec[];
  /** For `completed`: also record the completed webhook delivery, as completing does. */
  webhook?: boolean;
}

export interface BuiltPayment {
  id: string;
  /** The created payment object, as POST /v1/payments answered it. */
  created: any;
  transferHashes: string[];
  deliveryId: string | null;
}

/** Records a transfer in the books the way the chain reader does (its effect already decided). */
export async function recordTestTransfer(app: TestApp, paymentId: string, transfer: TransferSpec): Promise<string> {
  const hash = crypto.randomBytes(32).toString('hex');
  const address = await app.pool.oneFirst(sql.type(z.object({ address: z.string() }))`select address from deposit_addresses where payment_id = ${paymentId}`);
  await app.pool.query(sql.unsafe`
    insert into transfers (account, lt, hash, payment_id, deposit_address, coin_symbol, amount_base_units, amount, chain_time, effect)
    values (${address}, ${String(Date.now()) + String(Math.floor(Math.random() * 1000))}, ${hash}, ${paymentId}, ${address}, ${transfer.coin ?? 'TON'},
            ${transfer.baseUnits.toString()}, ${transfer.amount}, now(), ${transfer.effect})
  `);
  return hash;
}

/** Moves a payment to a final status as its command would, with the time column that status needs. */
export async function setTestPaymentStatus(
  app: TestApp,
  paymentId: string,
  status: 'completed' | 'expired' | 'cancelled',
  options: { webhook?: boolean } = {},
): Promise<string | null> {
  const column = { completed: sql.fragment`paid_at = now()`, expired: sql.fragment`expired_at = now()`, cancelled: sql.fragment`cancelled_at = now()` }[status];
  return app.pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`update payments set status = ${status}, ${column} where id = ${paymentId}`);
    return status === 'completed' && options.webhook ? enqueueWebhookDelivery(tx, paymentId, 'completed', new Date()) : null;
  });
}

/** A payment of `store`: defaults 10.50 USD paid in TON, pending; every part overridable. */
export async function buildPayment(app: TestApp, store: { token: string }, spec: PaymentSpec = {}): Promise<BuiltPayment> {
  const method = spec.method !== undefined ? spec.method : spec.status === 'created' ? null : { coin: 'TON', chain: 'TON' };
  const response = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount: '10.50', currency: 'USD', ...(method ? { payment_options: { methods: [method] } } : {}), ...spec.body },
  });
  assert.equal(response.status, 201, response.text);
  const id = response.json.id as string;
  const transferHashes: string[] = [];
  for (const transfer of spec.transfers ?? []) transferHashes.push(await recordTestTransfer(app, id, { coin: method?.coin ?? 'TON', ...transfer }));
  const status = spec.status ?? (method ? 'pending' : 'created');
  const deliveryId = status === 'created' || status === 'pending' ? null : await setTestPaymentStatus(app, id, status, { webhook: spec.webhook ?? false });
  return { id, created: response.json, transferHashes, deliveryId };
}
