// The dashboard's money pages over real HTTP against the real app and database: a payment's
// timeline and money per coin (deposit_money, the one definition), the refund form's confirm step
// (the first post changes nothing, the second plans the same refund the API plans, audited), the
// store's Money page (reporting.store_money, reconciliation differences, treasury), the Webhooks
// page (key set, rotation by owners only, recent deliveries failed first, the receiver snippet);
// a viewer changes nothing, store A's member sees nothing of store B, bad input changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import { friendlyAddress } from '../../src/chain/addresses.ts';
import { sql, z } from '../../src/db/pool.ts';
import { fromBaseUnits } from '../../src/money.ts';
import { depositMoney } from '../../src/treasury/outgoing.ts';
import type { TestApp } from '../helpers/app.ts';
import { freshAddress } from '../helpers/chain.ts';
import { member } from '../helpers/dashboard.ts';
import { buildPayment } from '../helpers/factories.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let storeA: Awaited<ReturnType<TestApp['store']>>;
let storeB: Awaited<ReturnType<TestApp['store']>>;

before(async () => {
  app = await startPaymentsApp();
  storeA = await app.store({ name: 'Store A' });
  storeB = await app.store({ name: 'Store B' });
});
after(() => app.close());

const count = (query: ReturnType<typeof sql.unsafe>) => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from (${query}) q`);
const outgoingOf = (paymentId: string) => count(sql.unsafe`select 1 from outgoing_transfers where payment_id = ${paymentId}`);
const auditOf = (storeId: string, action: string) =>
  app.pool.any(sql.type(z.object({ actor: z.string(), subject: z.string().nullable() }))`
    select actor, subject from audit_log where store_id = ${storeId} and action = ${action} order by id
  `);
/** A page without its copy buttons (their "Copy" is no part of what a cell or a field says). */
const withoutCopyButtons = (page: string): string => page.replace(/<button[^>]*data-copy-text[^>]*>[\s\S]*?<\/button>/g, '');
/** The text of an element with this id (tags dropped, spaces squeezed). */
const textOf = (html: string, id: string): string => {
  const page = withoutCopyButtons(html);
  const start = page.indexOf(`id="${id}"`);
  assert.ok(start >= 0, `#${id} in the page`);
  const tag = /<(\w+)/.exec(page.slice(page.lastIndexOf('<', start)))![1]!;
  const end = page.indexOf(`</${tag}>`, start);
  return page
    .slice(start, end)
    .replace(/^[^>]*>/, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
};
/** The cells of a table's body rows; an amount cell is its exact value (the page rounds for reading and names the coin). */
const rowsOf = (html: string, id: string): string[][] => {
  const page = withoutCopyButtons(html);
  const start = page.indexOf(`id="${id}"`);
  assert.ok(start >= 0, `#${id} in the page`);
  const body = page.slice(page.indexOf('<tbody>', start), page.indexOf('</tbody>', start));
  return [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map(
      (cell) =>
        /^\s*<data class="amount"[^>]* value="([^"]*)"/.exec(cell[1]!)?.[1] ??
        cell[1]!
          .replace(/<[^>]+>/g, ' ')
          .replace(/\s+/g, ' ')
          .trim(),
    ),
  );
};

/** A completed payment of 1 TON paid with 1.5 TON: 0.5 TON refundable. */
const overpaid = (store: { token: string }, body: Record<string, unknown> = {}) =>
  buildPayment(app, store, {
    status: 'completed',
    body: { amount: '1', currency: 'TON', ...body },
    transfers: [{ baseUnits: 1_500_000_000n, amount: '1.5', effect: 'overpaid' }],
  });

describe("dashboard: a payment's money", () => {
  it('the timeline tells the payment in time order; the Money table is deposit_money to the base unit', async () => {
    const owner = await member(app.url, app.pool, storeA.id, 'ann@example.com', 'owner');
    const payment = await overpaid(storeA);
    const page = (await owner.get(`/dashboard/stores/${storeA.id}/payments/${payment.id}`)).text;
    const timeline = textOf(page, 'timeline');
    assert.match(timeline, /Created.*Method chosen: Gram \(GRAM\) on the TON network: 1 GRAM to pay.*Received 1\.5 GRAM: paid more than the price.*Completed/);
    assert.match(page, new RegExp(`<li class="event-transfer">[^]*?${payment.transferHashes[0]}`));
    const [ton] = await depositMoney(app.pool, payment.id);
    const coin = (units: string) => fromBaseUnits(BigInt(units), 9);
    assert.deepEqual(rowsOf(page, 'money'), [
      ['Gram (GRAM)', coin(ton!.received), coin(ton!.counted), coin(ton!.refunded), coin(ton!.swept), coin(ton!.fees), coin(ton!.refundable)],
    ]);
    // Counted is the completed payment's amount (the merchant's), not every counted transfer.
    assert.deepEqual(rowsOf(page, 'money')[0]!.slice(0, 3), ['Gram (GRAM)', '1.5', '1']);
    assert.equal(textOf(page, 'refundable'), 'Can be refunded : 0.5 GRAM');
  });

  it('refund: the first post shows what is sent, the fee and what arrives and changes nothing; the confirmed post plans the refund the API would, audited', async () => {
    const owner = await member(app.url, app.pool, storeA.id, 'ben@example.com', 'owner');
    const ours = await overpaid(storeA);
    const twin = await overpaid(storeA);
    const to = Address.parse(freshAddress()).toString({ bounceable: false, testOnly: true });
    const path = `/dashboard/stores/${storeA.id}/payments/${ours.id}/refunds`;

    // Bad input: a clear message on the form, nothing changes.
    for (const [fields, field, message] of [
      [
        { coin: 'TON', amount: '0.6', address: to },
        'amount-problem',
        /refundable Gram \(GRAM\): at most 0\.5 GRAM is refundable now: all of it, its fee taken from it \(0\.49 GRAM arrives.*or at most 0\.49 GRAM with its fee paid on top/,
      ],
      [{ coin: 'TON', amount: 'lots', address: to }, 'amount-problem', /positive decimal/],
      [{ coin: 'TON', amount: '0.1', address: 'not an address' }, 'address-problem', /./],
      [{ coin: 'TON', amount: '0.001', address: to }, 'amount-problem', /smallest Gram \(GRAM\) refund is 0\.01/],
      [
        { coin: 'TON', amount: '0.6', address: to, confirmed: 'yes' },
        'amount-problem',
        /refundable Gram \(GRAM\): at most 0\.5 GRAM is refundable now: all of it, its fee taken from it \(0\.49 GRAM arrives.*or at most 0\.49 GRAM with its fee paid on top/,
      ],
    ] as const) {
      const refused = await owner.post(path, fields);
      assert.equal(refused.status, 400, JSON.stringify(fields));
      assert.match(textOf(refused.text, field), message);
      assert.doesNotMatch(refused.text, /id="refund-confirm"/);
      // The coin as people know it (CONTRACT §12: the API's own message keeps TON).
      assert.doesNotMatch(textOf(refused.text, field), /\bTON\b(?! (network|Connect|address))/);
    }
    assert.equal(await outgoingOf(ours.id), 0);

    const review = await owner.post(path, { coin: 'TON', amount: '0.49', address: to });
    assert.equal(review.status, 200);
    assert.equal(textOf(review.text, 'confirm-send'), '0.49 GRAM');
    assert.match(textOf(review.text, 'confirm-fee'), /^0\.01 GRAM/);
    assert.equal(textOf(review.text, 'confirm-arrives'), '0.49 GRAM');
    assert.equal(textOf(review.text, 'confirm-address'), friendlyAddress(Address.parse(to), app.config.tonNetwork));
    assert.match(review.text, /name="confirmed" value="yes"/);
    assert.equal(await outgoingOf(ours.id), 0, 'the review plans nothing');
    assert.equal((await auditOf(storeA.id, 'refund.create')).length, 0);
    const jobs = await count(sql.unsafe`select 1 from graphile_worker.jobs where task_identifier = 'outgoing__send'`);
    assert.equal(jobs, 0, 'the review enqueues nothing');

    // The confirmation carries the review's one-time key (without one it is the review again).
    const key = /name="key" value="([0-9a-f-]{36})"/.exec(review.text)![1]!;
    const done = await owner.post(path, { coin: 'TON', amount: '0.49', address: to, confirmed: 'yes', key });
    assert.equal(done.status, 303);
    assert.equal(done.location, `/dashboard/stores/${storeA.id}/payments/${ours.id}?notice=refund_created`);
    assert.deepEqual(await auditOf(storeA.id, 'refund.create'), [{ actor: 'ben@example.com', subject: ours.id }]);

    // The same refund through the API, of the twin payment: the books cannot tell them apart.
    const api = await app.request('POST', `/v1/payments/${twin.id}/refunds`, { token: storeA.token, body: { coin: 'TON', amount: '0.49', address: to } });
    assert.equal(api.status, 201, api.text);
    const books = (paymentId: string) =>
      app.pool.one(sql.type(z.object({ row: z.record(z.string(), z.unknown()) }))`
        select to_jsonb(o) - array['id', 'payment_id', 'from_address', 'created_at', 'updated_at'] as row from outgoing_transfers o where payment_id = ${paymentId}
      `);
    assert.deepEqual((await books(ours.id)).row, (await books(twin.id)).row);
    const page = (await owner.get(done.location!)).text;
    assert.match(page, /Refund planned/);
    assert.match(textOf(page, 'timeline'), /Refund of 0\.49 GRAM planned/);
    assert.equal(rowsOf(page, 'money')[0]![3], '0.49');
  });

  it('the refund of everything a deposit holds shows its fee taken from what is sent, and about what arrives', async () => {
    const owner = await member(app.url, app.pool, storeA.id, 'cid@example.com', 'owner');
    const late = await buildPayment(app, storeA, {
      status: 'expired',
      body: { amount: '1', currency: 'TON' },
      transfers: [{ baseUnits: 1_500_000_000n, amount: '1.5', effect: 'after_expiry' }],
    });
    const to = Address.parse(freshAddress()).toString({ bounceable: false, testOnly: true });
    const review = await owner.post(`/dashboard/stores/${storeA.id}/payments/${late.id}/refunds`, { coin: 'TON', amount: '1.5', address: to });
    assert.equal(review.status, 200, review.text);
    assert.equal(textOf(review.text, 'confirm-send'), '1.5 GRAM');
    assert.match(textOf(review.text, 'confirm-fee'), /^0\.01 GRAM \(taken from what is sent: this refund empties the payment address\)$/);
    assert.equal(textOf(review.text, 'confirm-arrives'), 'about 1.49 GRAM');
    assert.equal(await outgoingOf(late.id), 0);
  });

  it("a viewer's refund is refused in both steps; another store's payment is not found in both", async () => {
    const viewer = await member(app.url, app.pool, storeA.id, 'vic@example.com', 'viewer');
    const owner = await member(app.url, app.pool, storeA.id, 'eve@example.com', 'owner');
    const ours = await overpaid(storeA);
    const theirs = await overpaid(storeB, { order_id: 'B-secret-order' });
    const fields = { coin: 'TON', amount: '0.1', address: `0:${'1'.repeat(64)}` };
    for (const confirmed of [{}, { confirmed: 'yes' }] as Record<string, string>[]) {
      assert.equal((await viewer.post(`/dashboard/stores/${storeA.id}/payments/${ours.id}/refunds`, { ...fields, ...confirmed })).status, 403);
      for (const path of [`/dashboard/stores/${storeA.id}/payments/${theirs.id}/refunds`, `/dashboard/stores/${storeB.id}/payments/${theirs.id}/refunds`]) {
        const refused = await owner.post(path, { ...fields, ...confirmed });
        assert.equal(refused.status, 404, path);
        assert.doesNotMatch(refused.text, /B-secret-order|Store B/);
      }
    }
    assert.equal(await outgoingOf(ours.id), 0);
    assert.equal(await outgoingOf(theirs.id), 0);
  });
});

describe('dashboard: the Money page', () => {
  it("per coin, the sums of the store's deposit_money; differences link their payment; the treasury; nothing of another store", async () => {
    const store = await app.store({ name: 'Money store' });
    const owner = await member(app.url, app.pool, store.id, 'money@example.com', 'owner');
    const viewer = await member(app.url, app.pool, store.id, 'money-viewer@example.com', 'viewer');
    const empty = await viewer.get(`/dashboard/stores/${store.id}/money`);
    assert.equal(empty.status, 200);
    assert.match(empty.text, /No money has reached the store's payment addresses yet/);
    assert.match(textOf(empty.text, 'treasury'), /^None/);
    assert.match(empty.text, /href="\/dashboard\/stores\/[^"]+\/money" aria-current="page">Money</);

    const a = await overpaid(store);
    const b = await buildPayment(app, store, {
      status: 'completed',
      body: { amount: '2', currency: 'TON' },
      transfers: [{ baseUnits: 2_000_000_000n, amount: '2', effect: 'completed' }],
    });
    const c = await buildPayment(app, store, {
      method: { coin: 'USDT', chain: 'TON' },
      status: 'expired',
      transfers: [{ baseUnits: 3_000_000n, amount: '3', effect: 'after_expiry' }],
    });
    await overpaid(storeB, { order_id: 'B-secret-order' });
    const treasury = freshAddress();
    await app.pool.query(sql.unsafe`update stores set treasury = ${treasury} where id = ${store.id}`);
    await app.pool.query(sql.unsafe`
      insert into deposit_reconciliations (payment_id, coin_symbol, account, booked_base_units, on_chain_base_units, difference_base_units, checked_at)
      values (${b.id}, 'TON', ${b.created.paymentDetails.address}, 2000000000, 2100000000, 100000000, now()),
             (${a.id}, 'TON', ${a.created.paymentDetails.address}, 1500000000, 1500000000, 0, now())
    `);

    const page = await viewer.get(`/dashboard/stores/${store.id}/money`);
    assert.equal(page.status, 200);
    // The figures, summed from each payment's deposit_money.
    const sums = new Map<string, bigint[]>();
    for (const id of [a.id, b.id, c.id]) {
      for (const m of await depositMoney(app.pool, id)) {
        const sum = sums.get(m.coin_symbol) ?? [0n, 0n, 0n, 0n, 0n, 0n, 0n];
        const figures = [m.received, m.counted, m.refunded, m.swept, m.fees, BigInt(m.held) + BigInt(m.merchant_unswept) + BigInt(m.refundable), m.refundable];
        sums.set(
          m.coin_symbol,
          sum.map((value, i) => value + BigInt(figures[i]!)),
        );
      }
    }
    const expected = [...sums]
      .sort(([x], [y]) => (x === 'TON' ? -1 : y === 'TON' ? 1 : x.localeCompare(y)))
      .map(([coin, s]) => {
        const places = coin === 'USDT' ? 6 : 9;
        return [coin === 'TON' ? 'Gram (GRAM)' : coin, ...s.map((value, i) => fromBaseUnits(value, i === 4 ? 9 : places))];
      });
    assert.deepEqual(rowsOf(page.text, 'store-money'), expected);
    assert.deepEqual(rowsOf(page.text, 'store-money'), [
      ['Gram (GRAM)', '3.5', '3', '0', '0', '0', '3.5', '0.5'],
      ['USDT', '3', '0', '0', '0', '0', '3', '3'],
    ]);
    assert.equal(textOf(page.text, 'treasury'), `Sales move to your wallet: ${friendlyAddress(Address.parse(treasury), app.config.tonNetwork)}`);
    const differences = rowsOf(page.text, 'differences');
    assert.deepEqual(
      differences.map((row) => row.slice(0, 5)),
      [[b.id, 'Gram (GRAM)', '2', '2.1', '0.1']],
    );
    assert.match(page.text, new RegExp(`href="/dashboard/stores/${store.id}/payments/${b.id}"`));
    assert.doesNotMatch(page.text, /B-secret-order/);
    // The other store's Money page, by URL: not found.
    const tampered = await owner.get(`/dashboard/stores/${storeB.id}/money`);
    assert.equal(tampered.status, 404);
    assert.doesNotMatch(tampered.text, /Store B/);
  });
});

describe('dashboard: the Webhooks page', () => {
  it('shows the key set; owners rotate it (the CLI command, audited; at most one in 10 minutes); viewers and other stores change nothing', async () => {
    const store = await app.store({ name: 'Hook store' });
    const owner = await member(app.url, app.pool, store.id, 'hooks@example.com', 'owner');
    const viewer = await member(app.url, app.pool, store.id, 'hooks-viewer@example.com', 'viewer');
    const outsider = await member(app.url, app.pool, storeB.id, 'outsider@example.com', 'owner');
    await app.request('GET', '/pay/v1/webhook/keys');
    const kids = () => app.pool.anyFirst(sql.type(z.object({ kid: z.string() }))`select kid from webhook_signing_keys order by created_at, kid`);
    const [first] = await kids();
    assert.ok(first);
    const page = await viewer.get(`/dashboard/stores/${store.id}/webhooks`);
    assert.equal(page.status, 200);
    assert.deepEqual(
      rowsOf(page.text, 'webhook-keys').map((row) => [row[0], row[2]]),
      [[first, 'active']],
    );
    assert.doesNotMatch(page.text, /webhooks\/keys\/rotate/, 'no rotation form for a viewer');
    const rotate = `/dashboard/stores/${store.id}/webhooks/keys/rotate`;

    // Refused: a viewer, another store's owner (not found), a cross-site form. Nothing changes.
    assert.equal((await viewer.post(rotate)).status, 403);
    assert.equal((await outsider.post(rotate)).status, 404);
    assert.equal((await owner.post(rotate, {}, { origin: 'https://evil.example' })).status, 403);
    assert.deepEqual(await kids(), [first]);

    app.clock.set(new Date(Date.now() + 60 * 60_000));
    try {
      const posted = await owner.post(rotate);
      assert.equal(posted.status, 303);
      const after = await kids();
      assert.equal(after.length, 2);
      const second = after.find((kid) => kid !== first)!;
      assert.equal(posted.location, `/dashboard/stores/${store.id}/webhooks?rotated=${encodeURIComponent(second)}`);
      const rotated = await owner.get(posted.location!);
      assert.match(rotated.text, new RegExp(`Key ${second} signs from now on`));
      assert.deepEqual(
        rowsOf(rotated.text, 'webhook-keys').map((row) => [row[0], row[2]!.replace(/ \d.*/, '')]),
        [
          [second, 'active'],
          [first, 'retired'],
        ],
      );
      // The published key set has both (the old one for 24 hours).
      const published = (await app.request('GET', '/pay/v1/webhook/keys')).json.keys.map((k: { kid: string }) => k.kid);
      assert.deepEqual(new Set(published), new Set([first, second]));
      assert.deepEqual(await auditOf(store.id, 'webhook_key.rotate'), [{ actor: 'hooks@example.com', subject: second }]);
      // Again at once: refused with a message, nothing changes.
      const again = await owner.post(rotate);
      assert.equal(again.status, 409);
      assert.match(again.text, /less than 10 minutes ago/);
      assert.equal((await kids()).length, 2);
      app.clock.advance(11 * 60_000);
      assert.equal((await owner.post(rotate)).status, 303);
      assert.equal((await kids()).length, 3);
      // A stale ?rotated= (no longer the active key) tells nothing.
      assert.doesNotMatch((await owner.get(posted.location!)).text, /signs from now on/);
      assert.equal((await auditOf(store.id, 'webhook_key.rotate')).length, 2);
    } finally {
      app.clock.real();
    }
  });

  it("lists the store's recent deliveries, failures first, with their payment, attempts and last answer; a receiver snippet on the receiver kit (kassa-webhooks)", async () => {
    const store = await app.store({ name: 'Delivery store' });
    const viewer = await member(app.url, app.pool, store.id, 'deliveries@example.com', 'viewer');
    const hook = { webhookURL: 'https://shop.example.com/hook' };
    const delivered = await buildPayment(app, store, { status: 'completed', body: { ...hook, order_id: 'ORD-OK' }, webhook: true });
    const failed = await buildPayment(app, store, { status: 'completed', body: { ...hook, order_id: 'ORD-FAIL' }, webhook: true });
    await buildPayment(app, storeB, { status: 'completed', body: { ...hook, order_id: 'B-secret-order' }, webhook: true });
    await app.pool.query(sql.unsafe`
      update webhook_deliveries set status = 'delivered', delivered_at = now(), attempts = 1 where id = ${delivered.deliveryId}
    `);
    await app.pool.query(sql.unsafe`
      update webhook_deliveries set status = 'failed', failed_at = now(), attempts = 2 where id = ${failed.deliveryId}
    `);
    await app.pool.query(sql.unsafe`
      insert into webhook_attempts (delivery_id, attempt, started_at, finished_at, duration_ms, http_status, error) values
        (${delivered.deliveryId}, 1, now(), now(), 12, 200, null),
        (${failed.deliveryId}, 1, now(), now(), 30, 500, null),
        (${failed.deliveryId}, 2, now(), now(), 30000, null, 'timed out after 30 s')
    `);
    const page = await viewer.get(`/dashboard/stores/${store.id}/webhooks`);
    assert.equal(page.status, 200);
    const rows = rowsOf(page.text, 'webhook-deliveries');
    assert.deepEqual(
      rows.map((row) => row.slice(0, 5)),
      [
        [`${failed.id} ORD-FAIL`, 'failed', 'completed', '2', 'timed out after 30 s'],
        [`${delivered.id} ORD-OK`, 'delivered', 'completed', '1', 'HTTP 200'],
      ],
    );
    assert.match(page.text, new RegExp(`href="/dashboard/stores/${store.id}/payments/${failed.id}"`));
    assert.doesNotMatch(page.text, /B-secret-order/);
    const snippet = textOf(page.text, 'receiver-snippet')
      .replace(/&#39;|&apos;/g, "'")
      .replace(/&quot;/g, '"');
    assert.match(snippet, /import \{ createWebhookVerifier \} from 'kassa-webhooks';/);
    assert.ok(snippet.includes(`keysUrl: "${app.config.checkoutBaseUrl}/v1/webhook/keys", storeID: "${store.id}"`), snippet);
    const tampered = await viewer.get(`/dashboard/stores/${storeB.id}/webhooks`);
    assert.equal(tampered.status, 404);
  });
});
