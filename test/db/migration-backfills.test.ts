// The backfills of committed migrations, run against rows as the code before them wrote them: the
// statement is read from the migration file itself, so the test checks what deployments ran: 000038's
// final sweeps, 000058's refund rows naming their refund.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { sql, z } from '../../src/db/pool.ts';
import { appendLedger } from '../../src/subscriptions/records.ts';
import { planOutgoing, type OutgoingPlan } from '../../src/treasury/outgoing.ts';
import type { TestApp } from '../helpers/app.ts';
import { buildPayment } from '../helpers/factories.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

const MIGRATIONS = path.resolve(import.meta.dirname, '../../migrations/committed');

/** The one statement of a committed migration that starts with `prefix` (up to its semicolon). */
function statementOf(file: string, prefix: string): string {
  const text = fs.readFileSync(path.join(MIGRATIONS, file), 'utf8');
  const start = text.indexOf(prefix);
  assert.ok(start >= 0, `${file} has no statement starting "${prefix}"`);
  return text.slice(start, text.indexOf(';', start) + 1);
}

let app: TestApp;
before(async () => {
  app = await startPaymentsApp();
});
after(() => app.close());

describe('000038 final sweep: the backfill marks the final sweeps planned before the column', () => {
  it('a TON leftover, a gas return, the customer dust under 0.01 TON: marked; a sale, held money worth sweeping, a share, a jetton sweep: not', async () => {
    const store = await app.store({ methods: 'TON/TON,USDT/TON' });
    const payment = await buildPayment(app, store, { status: 'completed' });
    const from = `0:${'1'.repeat(64)}`;
    const to = `0:${'2'.repeat(64)}`;
    const plan = (reason: OutgoingPlan['reason'], amount: bigint, extra: Partial<OutgoingPlan> = {}) =>
      planOutgoing(
        app.pool,
        {
          kind: 'sweep',
          reason,
          paymentId: payment.id,
          storeId: store.id,
          from,
          to,
          coin: 'TON',
          decimals: 9,
          amountBaseUnits: amount,
          feeReservedBaseUnits: 0n,
          ...extra,
        },
        new Date(),
      );
    const rows = {
      leftover: await plan('leftover', 7_000_000n),
      gasReturn: await plan('gas_return', 30_000_000n),
      dust: await plan('held_money', 9_999_999n),
      sale: await plan('payment', 1_000_000_000n),
      heldWorthSweeping: await plan('held_money', 10_000_000n),
      jetton: await plan('held_money', 5_000n, { coin: 'USDT', decimals: 6 }),
    };
    const share = await plan('leftover', 3_000_000n, { closingOf: rows.dust!.id });
    // As the code before the column wrote them (planOutgoing now sets it: unset it), then the backfill.
    await app.pool.query(sql.unsafe`update outgoing_transfers set final_sweep = false where payment_id = ${payment.id}`);
    // The statement as the file has it, sent as it is (graphile-migrate sends the file's text the same way).
    const client = new pg.Client({ connectionString: app.db.url });
    await client.connect();
    try {
      await client.query(statementOf('000038-final-sweep.sql', 'update outgoing_transfers set final_sweep = true'));
    } finally {
      await client.end();
    }
    const marked = new Set(
      (await app.pool.anyFirst(sql.unsafe`select id from outgoing_transfers where payment_id = ${payment.id} and final_sweep`)) as readonly string[],
    );
    const expected = { leftover: true, gasReturn: true, dust: true, sale: false, heldWorthSweeping: false, jetton: false };
    assert.deepEqual(Object.fromEntries(Object.entries(rows).map(([name, row]) => [name, marked.has(row!.id)])), expected);
    assert.equal(marked.has(share!.id), false, 'a share of a closing message is not the final sweep');
  });
});

describe('000058 subscription refund given back: the backfill names the refund of the refund rows written before', () => {
  it('a refund row whose note names a refund gets its refund_id; one naming no refund, and a credit, do not; the ledger is append-only again', async () => {
    const store = await app.store({ methods: 'TON/TON' });
    const plan = await app.request('POST', '/v1/plans', { token: store.token, body: { name: 'VPN', currency: 'TON', amount: '1', interval: 'month' } });
    assert.equal(plan.status, 201, plan.text);
    const sub = await app.request('POST', '/v1/subscriptions', { token: store.token, body: { planID: plan.json.id, customer: { reference: 'backfill' } } });
    assert.equal(sub.status, 201, sub.text);
    const paymentId: string = sub.json.renewalPaymentID;
    const refund = await planOutgoing(
      app.pool,
      {
        kind: 'refund',
        reason: 'refund',
        paymentId,
        storeId: store.id,
        from: `0:${'1'.repeat(64)}`,
        to: `0:${'2'.repeat(64)}`,
        coin: 'TON',
        decimals: 9,
        amountBaseUnits: 300_000_000n,
        feeReservedBaseUnits: 0n,
      },
      new Date(),
    );
    // As the code before the column wrote them: no refund_id, the refund named in the note.
    const clock = new Date();
    await app.pool.transaction(async (tx) => {
      await appendLedger(tx, sub.json.id, { kind: 'credit', amount: '1', actor: 'kassa', note: 'payment completed', paymentId }, clock);
      await appendLedger(
        tx,
        sub.json.id,
        { kind: 'refund', amount: '-0.3', actor: 'kassa', note: `refund ${refund!.id} of 0.3 TON, taken from credit`, paymentId },
        clock,
      );
      await appendLedger(
        tx,
        sub.json.id,
        { kind: 'refund', amount: '-0.1', actor: 'kassa', note: 'refund 00000000-0000-4000-8000-000000000000 of 0.1 TON, taken from credit', paymentId },
        clock,
      );
    });
    const file = '000058-subscription-refund-given-back.sql';
    const client = new pg.Client({ connectionString: app.db.url });
    await client.connect();
    try {
      await client.query(statementOf(file, 'alter table subscription_ledger disable trigger'));
      await client.query(statementOf(file, 'update subscription_ledger l set refund_id'));
      await client.query(statementOf(file, 'alter table subscription_ledger enable trigger'));
    } finally {
      await client.end();
    }
    const rows = await app.pool.any(sql.type(z.object({ amount: z.string(), refund_id: z.string().nullable() }))`
      select trim_scale(amount)::text as amount, refund_id from subscription_ledger where subscription_id = ${sub.json.id} order by position
    `);
    assert.deepEqual(rows, [
      { amount: '1', refund_id: null },
      { amount: '-0.3', refund_id: refund!.id },
      { amount: '-0.1', refund_id: null },
    ]);
    await assert.rejects(app.pool.query(sql.unsafe`update subscription_ledger set note = 'x' where subscription_id = ${sub.json.id}`), /append-only/);
  });
});
