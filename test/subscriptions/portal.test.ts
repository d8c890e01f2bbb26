// The customer's portal of a subscription over HTTP (issue 45 item 5; docs/API.md, Subscriptions):
// {checkout_base_url}/s/{token} shows the plan, status, next date, credit and history; a wrong token
// is the same 404 page whether it is well formed or not and whether or not it ever existed;
// POST /v1/subscriptions/{id}/portal re-issues the token (the old URL dead at once, audited); "pay"
// makes the subscription's one open payment (twice: the same one) and sends the customer to its
// checkout; cancel at the period's end is refused (403, nothing changed) when the plan does not let
// subscribers cancel, and done (audited) when it does; the Mini App's start parameter s_<token>.
import assert from 'node:assert/strict';
import crypto, { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { presentSubscription } from '../../src/presenters/subscription.ts';
import { runDueSubscriptions } from '../../src/subscriptions/engine.ts';
import type { SubscriptionRow } from '../../src/subscriptions/records.ts';
import { type ChainTestApp, startChainApp } from '../helpers/chain.ts';

let app: ChainTestApp;
let token: string;

before(async () => {
  app = await startChainApp();
  const store = await app.store({ name: 'Quota Shop', methods: 'TON/TON' });
  token = store.token;
});
after(() => app?.close());

const post = (path: string, body: unknown = {}) => app.request('POST', path, { token, body });
const get = (path: string) => app.request('GET', path, { token });

/** A customer's request (redirects not followed). */
async function visit(url: string, method: 'GET' | 'POST' = 'GET') {
  const { pathname, search } = new URL(url, app.url);
  const response = await fetch(`${app.url}${pathname}${search}`, {
    method,
    redirect: 'manual',
    headers: method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {},
    ...(method === 'POST' ? { body: '' } : {}),
  });
  return { status: response.status, location: response.headers.get('location'), text: await response.text(), headers: response.headers };
}

async function subscribe(plan: Record<string, unknown>, trialDays?: number) {
  const created = await post('/v1/plans', { name: 'API quota', currency: 'TON', amount: '2', interval: 'month', ...plan });
  assert.equal(created.status, 201, created.text);
  const sub = await post('/v1/subscriptions', {
    planID: created.json.id,
    customer: { reference: `user-${Math.random()}` },
    ...(trialDays !== undefined ? { trialDays } : {}),
  });
  assert.equal(sub.status, 201, sub.text);
  return { plan: created.json, sub: sub.json };
}

/** The portal token's hash a subscription keeps (hex). */
const storedHash = (id: string) =>
  app.pool.oneFirst(sql.type(z.object({ hash: z.string() }))`select encode(portal_token_hash, 'hex') as hash from subscriptions where id = ${id}`);

const audits = (subject: string) =>
  app.pool.any(sql.type(z.object({ action: z.string(), actor: z.string() }))`select action, actor from audit_log where subject = ${subject} order by at`);

describe('the customer’s portal', () => {
  it('shows the plan, the status, the next date, the credit and the history', async () => {
    const { plan, sub } = await subscribe({}, 7);
    assert.equal(plan.customerMayCancel, true);
    const credited = await post(`/v1/subscriptions/${sub.id}/credits`, { amount: '0.5', note: 'welcome' });
    assert.equal(credited.status, 200, credited.text);
    const page = await visit(sub.portalURL);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    assert.match(page.text, /id="portal-status">Free trial</);
    assert.match(page.text, /id="portal-plan">API quota</);
    assert.match(page.text, /id="portal-credit"[^>]*>0\.5 GRAM</);
    assert.match(page.text, /id="portal-date">/);
    assert.match(page.text, /Added by the shop/);
    assert.match(page.text, /id="portal-pay"[^>]*>Pay the next period</);
    const ru = await visit(`${sub.portalURL}?lang=ru`);
    assert.match(ru.text, /id="portal-status">Пробный период</);
  });

  it('a wrong token is one 404 page, whether well formed or not', async () => {
    const { sub } = await subscribe({}, 7);
    const real = new URL(sub.portalURL).pathname.split('/').pop()!;
    const base = sub.portalURL.slice(0, -real.length);
    const guessed = await visit(`${base}${real.slice(0, -1)}${real.endsWith('A') ? 'B' : 'A'}`);
    const malformed = await visit(`${base}nope`);
    const unknown = await visit(`${base}${'x'.repeat(32)}`);
    for (const page of [guessed, malformed, unknown]) {
      assert.equal(page.status, 404);
      assert.doesNotMatch(page.text, /API quota|Quota Shop/);
    }
    assert.equal(guessed.text, malformed.text);
    assert.equal(guessed.text, unknown.text);
    // Its forms too.
    assert.equal((await visit(`${base}${'x'.repeat(32)}/pay`, 'POST')).status, 404);
    assert.equal((await visit(`${base}${'x'.repeat(32)}/cancel`, 'POST')).status, 404);
  });

  it('a re-issued token: the old URL is dead at once, the new one works, audited', async () => {
    const { sub } = await subscribe({}, 7);
    const again = await post(`/v1/subscriptions/${sub.id}/portal`);
    assert.equal(again.status, 200, again.text);
    assert.notEqual(again.json.portalURL, sub.portalURL);
    assert.match(again.json.portalURL, /\/s\/[A-Za-z0-9_-]{32}$/);
    // Shown in the answer that issues it, and only there.
    assert.equal((await get(`/v1/subscriptions/${sub.id}`)).json.portalURL, undefined);
    const token = new URL(again.json.portalURL).pathname.split('/').pop()!;
    assert.equal(await storedHash(sub.id), createHash('sha256').update(token).digest('hex'));
    assert.equal((await visit(sub.portalURL)).status, 404);
    assert.equal((await visit(`${sub.portalURL}/pay`, 'POST')).status, 404);
    assert.equal((await visit(again.json.portalURL)).status, 200);
    assert.ok((await audits(sub.id)).some((row) => row.action === 'subscription.portal_reissue'));
    assert.equal((await post('/v1/subscriptions/00000000-0000-4000-8000-000000000000/portal')).status, 404);
  });

  it('pay: one open payment of the subscription, its checkout; twice the same', async () => {
    const { sub } = await subscribe({});
    assert.equal(sub.status, 'past_due');
    const first = await visit(`${sub.portalURL}/pay`, 'POST');
    assert.equal(first.status, 303);
    assert.equal(first.location, `/pay/${sub.renewalPaymentID}`);
    // Trialing: the next period's payment, opened early and kept as the renewal when the trial ends.
    const { sub: trial } = await subscribe({}, 7);
    const early = await visit(`${trial.portalURL}/pay`, 'POST');
    assert.equal(early.status, 303);
    const paymentId = early.location!.split('/').pop()!;
    const payment = (await get(`/v1/payments/${paymentId}`)).json;
    assert.equal(payment.amount, '2');
    assert.equal(payment.subscriptionID, trial.id);
    assert.equal((await visit(`${trial.portalURL}/pay`, 'POST')).location, early.location);
    const count = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where subscription_id = ${trial.id}`);
    assert.equal(count, 1);
    assert.match((await visit(trial.portalURL)).text, /id="portal-pay"[^>]*>Continue to your payment</);
    // The trial ends unpaid: past_due, and the payment opened early is its renewal, not a second one beside it.
    assert.equal((await post('/sandbox/v1/clock/advance', { seconds: 8 * 86_400 })).status, 200);
    await runDueSubscriptions({
      pool: app.pool,
      config: app.config,
      now: app.clock.now,
      present: (row: SubscriptionRow) => presentSubscription(row, app.config),
    });
    const due = (await get(`/v1/subscriptions/${trial.id}`)).json;
    assert.equal(due.status, 'past_due');
    assert.equal(due.renewalPaymentID, paymentId);
    const after = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where subscription_id = ${trial.id}`);
    assert.equal(after, 1);
  });

  it('cancel at the period’s end: refused when the plan does not allow it, done and audited when it does', async () => {
    const { plan, sub } = await subscribe({ customerMayCancel: false }, 7);
    assert.equal(plan.customerMayCancel, false);
    assert.doesNotMatch((await visit(sub.portalURL)).text, /portal-cancel/);
    const refused = await visit(`${sub.portalURL}/cancel`, 'POST');
    assert.equal(refused.status, 403);
    assert.match(refused.text, /does not let you cancel here/);
    assert.equal((await get(`/v1/subscriptions/${sub.id}`)).json.cancelAtPeriodEnd, false);

    const { sub: allowed } = await subscribe({}, 7);
    assert.match((await visit(allowed.portalURL)).text, /id="portal-cancel"/);
    const done = await visit(`${allowed.portalURL}/cancel`, 'POST');
    assert.equal(done.status, 303);
    assert.equal(done.location, new URL(allowed.portalURL).pathname);
    const after = (await get(`/v1/subscriptions/${allowed.id}`)).json;
    assert.equal(after.cancelAtPeriodEnd, true);
    assert.equal(after.status, 'trialing');
    assert.deepEqual(await audits(allowed.id), [{ action: 'subscription.cancel', actor: 'customer portal' }]);
    const page = await visit(allowed.portalURL);
    assert.match(page.text, /Cancelled at the end of the period/);
    assert.doesNotMatch(page.text, /id="portal-pay"/);
  });

  it('the token is kept only as its SHA-256: shown once, in no read, replay or event; an existing token hashed as 000057 still opens its portal', async () => {
    const storeId = await app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`select id from stores where name = 'Quota Shop'`);
    await app.pool.query(sql.unsafe`
      insert into webhook_endpoints (id, store_id, url, events, created_at)
      values (gen_random_uuid(), ${storeId}, 'https://shop.example/events', array['subscription.created'], now())
    `);
    const plan = await post('/v1/plans', { name: 'API quota', currency: 'TON', amount: '2', interval: 'month' });
    const key = crypto.randomUUID();
    const body = { planID: plan.json.id, customer: { reference: `user-${Math.random()}` }, trialDays: 7 };
    const made = await app.request('POST', '/v1/subscriptions', { token, body, headers: { 'X-Idempotency-Key': key } });
    assert.equal(made.status, 201, made.text);
    const secret = new URL(made.json.portalURL).pathname.split('/').pop()!;
    // The database keeps the hash, not the token: no column, no row, no event, no stored answer holds it.
    assert.equal(await storedHash(made.json.id), createHash('sha256').update(secret).digest('hex'));
    const columns = await app.pool.anyFirst(sql.type(z.object({ name: z.string() }))`
      select column_name as name from information_schema.columns where table_name = 'subscriptions' and column_name like 'portal%'
    `);
    assert.deepEqual(columns, ['portal_token_hash']);
    const dump = await app.pool.oneFirst(sql.type(z.object({ found: z.boolean() }))`
      select exists (select 1 from subscriptions s where s::text like ${`%${secret}%`})
          or exists (select 1 from webhook_deliveries d where d::text like ${`%${secret}%`})
          or exists (select 1 from idempotency_keys k where k::text like ${`%${secret}%`}) as found
    `);
    assert.equal(dump, false);
    const events = await app.pool.anyFirst(sql.type(z.object({ payload: z.unknown() }))`
      select payload from webhook_deliveries where event = 'subscription.created' and payload -> 'subscription' ->> 'id' = ${made.json.id}
    `);
    assert.equal(events.length, 1);
    assert.equal((events[0] as { subscription: { portalURL?: string } }).subscription.portalURL, undefined);
    // The same request replayed: the same subscription, without the URL.
    const replay = await app.request('POST', '/v1/subscriptions', { token, body, headers: { 'X-Idempotency-Key': key } });
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    const { portalURL: _shown, ...rest } = made.json;
    assert.deepEqual(replay.json, rest);
    assert.equal(
      (await get('/v1/subscriptions')).json.data.some((s: { portalURL?: string }) => s.portalURL !== undefined),
      false,
    );
    assert.equal((await visit(made.json.portalURL)).status, 200);
    // A token issued before 000057 (kept plain then), hashed as the migration hashes it: its URL keeps working.
    const migration = fs.readFileSync(path.resolve(import.meta.dirname, '../../migrations/committed/000057-subscription-portal-token-hashed.sql'), 'utf8');
    assert.match(migration, /update subscriptions set portal_token_hash = sha256\(convert_to\(portal_token, 'UTF8'\)\);/);
    const old = 'Old-portal-token_0123456789abcde';
    await app.pool.query(sql.unsafe`update subscriptions set portal_token_hash = sha256(convert_to(${old}::text, 'UTF8')) where id = ${made.json.id}`);
    const base = made.json.portalURL.slice(0, -secret.length);
    assert.equal((await visit(`${base}${old}`)).status, 200);
    assert.equal((await visit(made.json.portalURL)).status, 404);
  });

  it('the Mini App’s start parameter s_<token> goes on to the portal’s Mini App page', async () => {
    const { sub } = await subscribe({}, 7);
    const secret = new URL(sub.portalURL).pathname.split('/').pop()!;
    const boot = await visit(`/pay/tg?tgWebAppStartParam=s_${secret}`);
    assert.equal(boot.status, 303);
    assert.equal(boot.location, `/pay/tg/s/${secret}`);
    const page = await visit(`/pay/tg/s/${secret}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /data-telegram-boot/);
    assert.doesNotMatch(page.text, /API quota/);
    // A launch not signed by Telegram shows nothing of it.
    const forged = await visit(`/pay/tg/s/${secret}?tgWebAppData=${encodeURIComponent('user=%7B%7D&hash=00')}`);
    assert.equal(forged.status, 403);
    assert.doesNotMatch(forged.text, /API quota/);
  });
});
