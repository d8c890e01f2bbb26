// The dashboard's forms and query strings under the API's own schemas (issue 33 item 2, issue 35
// items 4 and 9), over real HTTP against the real app and database: input the schemas refuse is a
// form error (400, the message beside its field, nothing changed), never a 500; a refund's
// confirmation carries a one-time key, so a double-submitted confirmation plans one refund.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { freshAddress } from '../helpers/chain.ts';
import { member } from '../helpers/dashboard.ts';
import { buildPayment } from '../helpers/factories.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;

before(async () => {
  app = await startPaymentsApp();
  store = await app.store({ name: 'Store F' });
});
after(() => app.close());

const outgoingOf = (paymentId: string) =>
  app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from outgoing_transfers where payment_id = ${paymentId}`);
const endpointsOf = (storeId: string) =>
  app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from webhook_endpoints where store_id = ${storeId}`);
const tokensOf = (storeId: string) =>
  app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from api_tokens where store_id = ${storeId}`);

/** A completed payment of 1 TON paid with 1.5 TON: 0.5 TON refundable. */
const overpaid = () =>
  buildPayment(app, store, {
    status: 'completed',
    body: { amount: '1', currency: 'TON' },
    transfers: [{ baseUnits: 1_500_000_000n, amount: '1.5', effect: 'overpaid' }],
  });

describe('dashboard: forms under the API schemas', () => {
  it('a refund amount of 00.5 is a form error beside the amount, not a 500', async () => {
    const owner = await member(app.url, app.pool, store.id, 'amy@example.com', 'owner');
    const payment = await overpaid();
    const to = Address.parse(freshAddress()).toString({ bounceable: false, testOnly: true });
    for (const confirmed of [{}, { confirmed: 'yes' }] as Record<string, string>[]) {
      const refused = await owner.post(`/dashboard/stores/${store.id}/payments/${payment.id}/refunds`, {
        coin: 'TON',
        amount: '00.5',
        address: to,
        ...confirmed,
      });
      assert.equal(refused.status, 400, refused.text.slice(0, 300));
      assert.match(refused.text, /id="amount-problem"[^>]*>[^<]*amount/);
    }
    assert.equal(await outgoingOf(payment.id), 0);
  });

  it('a token lifetime of __proto__ (or any other unknown one) is a form error, and no token is issued', async () => {
    const owner = await member(app.url, app.pool, store.id, 'tom@example.com', 'owner');
    const before = await tokensOf(store.id);
    for (const lifetime of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '7d']) {
      const refused = await owner.post(`/dashboard/stores/${store.id}/tokens`, { lifetime, scope: 'full' });
      assert.equal(refused.status, 400, `${lifetime}: ${refused.text.slice(0, 300)}`);
      assert.match(refused.text, /lifetime/);
    }
    assert.equal(await tokensOf(store.id), before);
  });

  it('list and CSV filters of days that do not exist are form errors', async () => {
    const owner = await member(app.url, app.pool, store.id, 'fay@example.com', 'owner');
    for (const query of ['from=2026-02-30', 'to=2026-02-31', 'from=0000-01-01', 'to=2026-13-01', 'from=2026-04-31']) {
      for (const path of ['payments', 'payments.csv']) {
        const refused = await owner.get(`/dashboard/stores/${store.id}/${path}?${query}`);
        assert.equal(refused.status, 400, `${path}?${query}: ${refused.text.slice(0, 300)}`);
        assert.match(refused.text, new RegExp(query.split('=')[0]!));
      }
    }
    assert.equal((await owner.get(`/dashboard/stores/${store.id}/payments?from=2024-02-29&to=2026-02-28`)).status, 200);
  });

  it('a double-submitted refund confirmation plans one refund: the confirmation carries a one-time key, a second post of it answers as the first', async () => {
    const owner = await member(app.url, app.pool, store.id, 'dot@example.com', 'owner');
    const payment = await overpaid();
    const to = Address.parse(freshAddress()).toString({ bounceable: false, testOnly: true });
    const path = `/dashboard/stores/${store.id}/payments/${payment.id}/refunds`;
    const review = await owner.post(path, { coin: 'TON', amount: '0.1', address: to });
    assert.equal(review.status, 200, review.text.slice(0, 300));
    const key = /name="key" value="([0-9a-f-]{36})"/.exec(review.text)?.[1];
    assert.ok(key, 'the confirmation form carries a one-time key');
    const confirmation = { coin: 'TON', amount: '0.1', address: to, confirmed: 'yes', key };
    // Both posts at once (a double click), then once more later: one refund.
    const answers = await Promise.all([owner.post(path, confirmation), owner.post(path, confirmation)]);
    answers.push(await owner.post(path, confirmation));
    for (const answer of answers) {
      assert.equal(answer.status, 303, answer.text.slice(0, 300));
      assert.equal(answer.location, `/dashboard/stores/${store.id}/payments/${payment.id}?notice=refund_created`);
    }
    assert.equal(await outgoingOf(payment.id), 1);
    // A new review gives a new key: a second refund on purpose is planned.
    const again = await owner.post(path, { coin: 'TON', amount: '0.1', address: to });
    const second = /name="key" value="([0-9a-f-]{36})"/.exec(again.text)?.[1];
    assert.ok(second && second !== key);
    assert.equal((await owner.post(path, { ...confirmation, key: second })).status, 303);
    assert.equal(await outgoingOf(payment.id), 2);
    // The same key with another amount is refused, nothing planned.
    const reused = await owner.post(path, { ...confirmation, amount: '0.2' });
    assert.equal(reused.status, 400);
    assert.equal(await outgoingOf(payment.id), 2);
  });

  it('an unknown event type in the Webhooks page’s add form is refused beside the events, as the API refuses it, and no endpoint is added', async () => {
    const owner = await member(app.url, app.pool, store.id, 'eve@example.com', 'owner');
    const path = `/dashboard/stores/${store.id}/webhooks/endpoints`;
    const url = 'https://shop.example/kassa/webhooks';
    const before = await endpointsOf(store.id);
    for (const events of [['payment.bogus'], ['payment.completed', 'payment.bogus'], ['payment.completed', 'payment.completed']]) {
      const refused = await owner.post(path, [['url', url], ...events.map((type): [string, string] => ['events', type])]);
      assert.equal(refused.status, 400, `${events}: ${refused.text.slice(0, 300)}`);
      // The API's own words (invalid_event_types), beside the events; the URL as typed is kept.
      assert.match(refused.text, /id="events-problem"[^>]*>[^<]*events must be a list of 1 to 9 event types/);
      assert.match(refused.text, /id="endpoint-url"[^>]*value="https:\/\/shop\.example\/kassa\/webhooks"/);
      const api = await app.request('POST', '/v1/webhook-endpoints', { token: store.token, body: { url, events } });
      assert.equal(api.status, 400, api.text);
      assert.equal(api.json.error.code, 'invalid_event_types');
    }
    assert.equal(await endpointsOf(store.id), before);
    // Known types alone: added (one or several).
    for (const events of [['payment.completed'], ['payment.completed', 'refund.failed']]) {
      const added = await owner.post(path, [['url', url], ...events.map((type): [string, string] => ['events', type])]);
      assert.equal(added.status, 303, added.text.slice(0, 300));
      assert.match(added.location ?? '', /notice=endpoint_added/);
    }
    assert.equal(await endpointsOf(store.id), before + 2);
    // A malformed endpoint id names nothing: the not-found page, before any query.
    const malformed = await owner.post(`/dashboard/stores/${store.id}/webhooks/endpoints/not-a-uuid/delete`);
    assert.equal(malformed.status, 404);
  });
});
