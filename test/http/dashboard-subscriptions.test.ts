// The dashboard's Subscriptions pages over real HTTP against the real app and database (issue 45):
// a viewer sees every page and is refused (403, nothing changed) on each action — a plan, an
// archive, a subscription, a credit, a cancel, a new portal link (shown once, as on creation); an owner's bad form answers 400 with the API's own
// message beside the field, nothing made; an owner's plan, subscription, credit (in the ledger with
// the member and the note, audited) and cancel go through the API's commands; the list's filters.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { type DashboardClient, member } from '../helpers/dashboard.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;
let owner: DashboardClient;
let viewer: DashboardClient;

before(async () => {
  app = await startPaymentsApp();
  store = await app.store({ name: 'VPN Shop', methods: 'TON/TON' });
  owner = await member(app.url, app.pool, store.id, 'owner@vpn.example', 'owner');
  viewer = await member(app.url, app.pool, store.id, 'viewer@vpn.example', 'viewer');
});
after(() => app?.close());

const at = () => `/dashboard/stores/${store.id}`;
const count = (table: 'plans' | 'subscriptions' | 'subscription_ledger') =>
  app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from ${sql.identifier([table])} where store_id = ${store.id}`);
const auditActions = () =>
  app.pool.anyFirst(
    sql.type(
      z.object({ action: z.string() }),
    )`select action from audit_log where store_id = ${store.id} and action like 'plan.%' or store_id = ${store.id} and action like 'subscription.%' order by id`,
  );

const PLAN = { name: 'VPN monthly', amount: '2', currency: 'TON', interval: 'month', intervalCount: '1', trialDays: '7', graceDays: '3', reminderDays: '3' };

async function ownerPlan(fields: Record<string, string> = {}): Promise<string> {
  const made = await owner.post(`${at()}/plans`, { ...PLAN, ...fields });
  assert.equal(made.status, 303, made.text.slice(0, 400));
  assert.equal(made.location, `${at()}/plans?notice=plan_created`);
  return app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`select id from plans where store_id = ${store.id} order by created_at desc limit 1`);
}

/** The portal link a page shows (only the one that made it or gave a new one), else null. */
const portalLinkOf = (text: string) => /id="portal-url"[^>]*value="([^"]*\/s\/[A-Za-z0-9_-]{32})"/.exec(text)?.[1] ?? null;

/** An owner's new subscription: its page at once (201), with its portal link shown this once. */
async function ownerSubscription(planID: string, reference: string): Promise<string> {
  const made = await owner.post(`${at()}/subscriptions`, { planID, reference });
  assert.equal(made.status, 201, made.text.slice(0, 400));
  assert.match(made.text, /Subscription made\. Send the customer its portal link below/);
  const id = /action="[^"]*\/subscriptions\/([0-9a-f-]{36})\/portal"/.exec(made.text)?.[1];
  assert.ok(id, made.text.slice(0, 400));
  const link = portalLinkOf(made.text);
  assert.ok(link, 'the portal link, shown once');
  return id;
}

describe('dashboard: Subscriptions', () => {
  it('every member sees the section from the navigation; a viewer sees no form', async () => {
    for (const [who, client] of [
      ['owner', owner],
      ['viewer', viewer],
    ] as const) {
      const home = await client.get(at());
      assert.match(home.text, new RegExp(`<a href="${at()}/subscriptions"[^>]*>Subscriptions</a>`), who);
      for (const path of ['/subscriptions', '/plans']) {
        const shown = await client.get(`${at()}${path}`);
        assert.equal(shown.status, 200, `${who} ${path}`);
        assert.equal(/<form method="post"[^>]*id="new-(plan|subscription)"/.test(shown.text), who === 'owner' && path === '/plans', `${who} ${path}`);
      }
    }
  });

  it('a bad plan form answers 400 with the API’s message beside the field, and makes nothing', async () => {
    const before = await count('plans');
    for (const [fields, field, message] of [
      [{ name: '   ' }, 'name', /name/],
      [{ amount: '1.0000000001' }, 'amount', /./],
      [{ amount: 'two' }, 'amount', /amount/],
      [{ interval: 'fortnight' }, 'interval', /interval/],
      [{ intervalCount: '0' }, 'intervalCount', /intervalCount/],
      [{ intervalCount: 'x' }, 'intervalCount', /intervalCount/],
      [{ graceDays: '91' }, 'graceDays', /0–90|90/],
      [{ currency: 'DOGE' }, 'currency', /./],
    ] as const) {
      const refused = await owner.post(`${at()}/plans`, { ...PLAN, ...fields });
      assert.equal(refused.status, 400, `${JSON.stringify(fields)}: ${refused.text.slice(0, 300)}`);
      const problem = new RegExp(`id="${field}-problem"[^>]*>([^<]*)<`).exec(refused.text);
      assert.ok(problem, `${JSON.stringify(fields)}: the problem beside ${field}`);
      assert.match(problem[1]!, message);
      assert.match(refused.text, new RegExp(`id="${field}"[^>]*aria-invalid="true"|aria-describedby="${field}-problem"`));
    }
    assert.equal(await count('plans'), before);
  });

  it('a viewer is refused each action (403, nothing changed); the owner’s go through the API’s commands, audited', async () => {
    // Plans.
    const refusedPlan = await viewer.post(`${at()}/plans`, PLAN);
    assert.equal(refusedPlan.status, 403);
    assert.equal(await count('plans'), 0);
    const planID = await ownerPlan();
    const archivedPlanID = await ownerPlan({ name: 'Old plan' });
    assert.equal((await viewer.post(`${at()}/plans/${archivedPlanID}/archive`)).status, 403);
    const archived = await owner.post(`${at()}/plans/${archivedPlanID}/archive`);
    assert.equal(archived.status, 303);
    assert.equal(archived.location, `${at()}/plans?notice=plan_archived`);
    const plans = await owner.get(`${at()}/plans`);
    assert.match(plans.text, /VPN monthly/);
    assert.match(plans.text, /every month/);
    assert.match(plans.text, /2 GRAM/);
    assert.match(plans.text, /archived \d{4}-/);

    // Subscriptions: the viewer's refused, a bad form beside its field, an archived plan refused.
    assert.equal((await viewer.post(`${at()}/subscriptions`, { planID, reference: 'customer-1' })).status, 403);
    assert.equal(await count('subscriptions'), 0);
    const noReference = await owner.post(`${at()}/subscriptions`, { planID, reference: '' });
    assert.equal(noReference.status, 400);
    assert.match(noReference.text, /id="reference-problem"/);
    const badEmail = await owner.post(`${at()}/subscriptions`, { planID, reference: 'customer-1', email: 'not an email' });
    assert.equal(badEmail.status, 400);
    assert.match(badEmail.text, /id="email-problem"/);
    assert.match(badEmail.text, /value="not an email"/, 'the form keeps what was typed');
    const toArchived = await owner.post(`${at()}/subscriptions`, { planID: archivedPlanID, reference: 'customer-1' });
    assert.equal(toArchived.status, 400);
    assert.match(toArchived.text, /id="planID-problem"[^>]*>The plan is archived/);
    assert.equal(await count('subscriptions'), 0);
    const id = await ownerSubscription(planID, 'customer-1');
    const other = await ownerSubscription(planID, 'customer-2');

    // Its page: the status in words, for the viewer too; the portal link is not shown again (Kassa keeps only its hash).
    const shown = await viewer.get(`${at()}/subscriptions/${id}`);
    assert.equal(shown.status, 200);
    assert.match(shown.text, /id="subscription-status">Free trial</);
    assert.equal(portalLinkOf(shown.text), null);
    assert.match(shown.text, /id="portal-kept-once"/);
    assert.doesNotMatch(shown.text, /id="add-credit"/, 'a viewer sees no credit form');
    assert.doesNotMatch(shown.text, /id="cancel-subscription"/, 'nor the cancel');
    assert.doesNotMatch(shown.text, /id="reissue-portal"/, 'nor a new portal link');

    // A new portal link: the viewer's refused; the owner's shown once on the page, the old link dead, audited.
    assert.equal((await viewer.post(`${at()}/subscriptions/${id}/portal`, {})).status, 403);
    const reissued = await owner.post(`${at()}/subscriptions/${id}/portal`, {});
    assert.equal(reissued.status, 200, reissued.text.slice(0, 300));
    assert.match(reissued.text, /A new portal link: the old one stopped working/);
    const link = portalLinkOf(reissued.text)!;
    assert.ok(link);
    assert.equal((await fetch(`${app.url}${new URL(link).pathname}`)).status, 200);
    assert.equal(portalLinkOf((await owner.get(`${at()}/subscriptions/${id}`)).text), null);
    assert.equal((await owner.post(`${at()}/subscriptions/00000000-0000-4000-8000-000000000000/portal`, {})).status, 404);

    // Credit: the viewer's refused; a bad amount and a missing note beside their fields; the owner's in the ledger with who and why.
    assert.equal((await viewer.post(`${at()}/subscriptions/${id}/credits`, { amount: '4', note: 'paid in cash' })).status, 403);
    const badAmount = await owner.post(`${at()}/subscriptions/${id}/credits`, { amount: '-4', note: 'paid in cash' });
    assert.equal(badAmount.status, 400);
    assert.match(badAmount.text, /id="amount-problem"/);
    const noNote = await owner.post(`${at()}/subscriptions/${id}/credits`, { amount: '4' });
    assert.equal(noNote.status, 400);
    assert.match(noNote.text, /id="note-problem"/);
    assert.equal(await count('subscription_ledger'), 0);
    const credited = await owner.post(`${at()}/subscriptions/${id}/credits`, { amount: '4', note: 'paid in cash' });
    assert.equal(credited.status, 303, credited.text.slice(0, 300));
    assert.equal(credited.location, `${at()}/subscriptions/${id}?notice=credit_added`);
    const ledger = await app.pool.one(sql.type(z.object({ kind: z.string(), amount: z.string(), actor: z.string(), note: z.string() }))`
      select kind, trim_scale(amount)::text as amount, actor, note from subscription_ledger where subscription_id = ${id}
    `);
    assert.deepEqual(ledger, { kind: 'adjustment', amount: '4', actor: 'owner@vpn.example', note: 'paid in cash' });
    const page = await owner.get(`${at()}/subscriptions/${id}`);
    assert.match(page.text, /Credit added by owner@vpn\.example/);
    assert.match(page.text, /paid in cash/);
    assert.match(page.text, /id="subscription-credit" value="4"/);

    // Cancel: the viewer's refused; a bad choice beside its field; at the period's end, then now.
    assert.equal((await viewer.post(`${at()}/subscriptions/${id}/cancel`, { when: 'now' })).status, 403);
    const badWhen = await owner.post(`${at()}/subscriptions/${id}/cancel`, { when: 'tomorrow' });
    assert.equal(badWhen.status, 400);
    assert.match(badWhen.text, /id="when-problem"/);
    const atEnd = await owner.post(`${at()}/subscriptions/${id}/cancel`, { when: 'period_end' });
    assert.equal(atEnd.location, `${at()}/subscriptions/${id}?notice=cancel_at_period_end`);
    assert.match((await owner.get(`${at()}/subscriptions/${id}`)).text, /Trial until [^<]*, then it ends/);
    const now = await owner.post(`${at()}/subscriptions/${id}/cancel`, { when: 'now' });
    assert.equal(now.location, `${at()}/subscriptions/${id}?notice=cancelled`);
    const status = await app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from subscriptions where id = ${id}`);
    assert.equal(status, 'cancelled');
    assert.equal((await viewer.get(`${at()}/subscriptions/${other}`)).status, 200);

    assert.deepEqual(await auditActions(), [
      'plan.create',
      'plan.create',
      'plan.archive',
      'subscription.create',
      'subscription.create',
      'subscription.portal_reissue',
      'subscription.credit',
      'subscription.cancel',
      'subscription.cancel',
    ]);
    const refusedAudit = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from audit_log where store_id = ${store.id} and actor = 'viewer@vpn.example' and action like 'subscription.%'`);
    assert.equal(refusedAudit, 0, 'nothing a viewer tried was done');
  });

  it('the list filters by status and by a customer’s reference; a bad status is refused beside its filter', async () => {
    const list = async (query: string) => {
      const shown = await viewer.get(`${at()}/subscriptions?${query}`);
      assert.equal(shown.status, 200, shown.text.slice(0, 300));
      return [...shown.text.matchAll(/<a href="[^"]*\/subscriptions\/[0-9a-f-]{36}">([^<]*)<\/a>/g)].map((m) => m[1]);
    };
    assert.deepEqual(await list(''), ['customer-2', 'customer-1']);
    assert.deepEqual(await list('status=cancelled'), ['customer-1']);
    assert.deepEqual(await list('status=trialing'), ['customer-2']);
    assert.deepEqual(await list('customer=customer-2'), ['customer-2']);
    assert.deepEqual(await list('status=active'), []);
    const refused = await viewer.get(`${at()}/subscriptions?status=paused`);
    assert.equal(refused.status, 400);
    assert.match(refused.text, /id="status-problem"/);
    // Another store's subscription, or none, is not found.
    assert.equal((await viewer.get(`${at()}/subscriptions/00000000-0000-4000-8000-000000000000`)).status, 404);
    assert.equal((await owner.post(`${at()}/subscriptions/00000000-0000-4000-8000-000000000000/credits`, { amount: '1', note: 'x' })).status, 404);
  });
});
