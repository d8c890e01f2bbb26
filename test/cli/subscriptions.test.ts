// `kassa plan …` and `kassa subscription …` (README, the CLI; docs/API.md, Subscriptions), run as real
// processes against a real database: a plan created, listed and archived; a subscription created
// (on a trial), listed, shown with its ledger, credited by hand (ledger actor "cli", the audit row)
// and cancelled, its portal given a new link (audited); usage errors and the API's refusals as one line on stderr.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import * as records from '../../src/subscriptions/records.ts';
import { assertFails, kassa } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

describe('kassa plan / subscription', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  let store: string;
  before(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url };
    const made = await kassa(['store', 'create', '--name', 'VPN shop', '--methods', 'TON/TON'], env);
    assert.equal(made.code, 0, made.stderr);
    store = made.json.id;
  });
  after(() => db.drop());

  it('plans: create, list, archive; refusals name the option', async () => {
    const created = await kassa(
      ['plan', 'create', '--store', store, '--name', 'VPN monthly', '--currency', 'ton', '--amount', '2', '--interval', 'month', '--trial-days', '7'],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(
      { ...created.json, id: undefined, createdAt: undefined },
      {
        id: undefined,
        createdAt: undefined,
        name: 'VPN monthly',
        currency: 'TON',
        amount: '2',
        interval: 'month',
        intervalCount: 1,
        trialDays: 7,
        graceDays: 3,
        reminderDays: 3,
        customerMayCancel: true,
        active: true,
      },
    );
    const listed = await kassa(['plan', 'list', '--store', store], env);
    assert.deepEqual(
      listed.json.data.map((p: { id: string }) => p.id),
      [created.json.id],
    );
    const archived = await kassa(['plan', 'archive', created.json.id, '--store', store], env);
    assert.equal(archived.code, 0, archived.stderr);
    assert.equal(archived.json.active, false);
    assertFails(
      await kassa(['plan', 'create', '--store', store, '--name', 'x', '--currency', 'TON', '--amount', '1', '--interval', 'fortnight'], env),
      /--interval is one of day, week, month, year/,
    );
    assertFails(await kassa(['plan', 'create', '--store', store, '--name', 'x', '--currency', 'TON', '--amount', '1'], env), /--interval is required/);
    assertFails(await kassa(['plan', 'archive', 'nope', '--store', store], env), /"nope" is not an id/);
    assertFails(await kassa(['plan', 'list'], env), /--store is required/);
    assertFails(await kassa(['plan', 'rename', '--store', store], env), /unknown command "plan rename"/);
  });

  it('subscriptions: create on a trial, list, credit by hand (audited), show with the ledger, cancel', async () => {
    const plan = await kassa(['plan', 'create', '--store', store, '--name', 'API quota', '--currency', 'TON', '--amount', '1.5', '--interval', 'week'], env);
    assert.equal(plan.code, 0, plan.stderr);
    const created = await kassa(
      ['subscription', 'create', '--store', store, '--plan', plan.json.id, '--customer', 'tg-42', '--telegram-user-id', '42', '--trial-days', '3'],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const sub = created.json;
    assert.equal(sub.status, 'trialing');
    assert.equal(sub.customer.reference, 'tg-42');
    assert.equal(sub.customer.telegramUserID, 42);
    assert.match(sub.portalURL, /\/s\/[A-Za-z0-9_-]{32}$/);

    const listed = await kassa(['subscription', 'list', '--store', store, '--status', 'trialing', '--customer', 'tg-42'], env);
    assert.deepEqual(
      listed.json.data.map((s: { id: string }) => s.id),
      [sub.id],
    );
    assert.deepEqual((await kassa(['subscription', 'list', '--store', store, '--status', 'active'], env)).json.data, []);

    const credited = await kassa(['subscription', 'credit', sub.id, '--store', store, '--amount', '3', '--note', 'paid in cash'], env);
    assert.equal(credited.code, 0, credited.stderr);
    assert.equal(credited.json.credit, '3');
    const shown = await kassa(['subscription', 'show', sub.id, '--store', store], env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.deepEqual(
      shown.json.ledger.map((e: { kind: string; amount: string; actor: string; note: string }) => [e.kind, e.amount, e.actor, e.note]),
      [['adjustment', '3', 'cli', 'paid in cash']],
    );
    const audit = await db.pool.any(sql.type(z.object({ action: z.string(), actor: z.string(), via: z.string() }))`
      select action, actor, detail->>'via' as via from audit_log where subject = ${sub.id} order by at
    `);
    assert.deepEqual(audit, [{ action: 'subscription.credit', actor: 'cli', via: 'cli' }]);

    // A new portal link: printed this once, the old link dead at once (only the new one's hash is kept); audited.
    const portalOf = async (url: string) => records.subscriptionByPortalToken(db.pool, url.split('/s/')[1]!, new Date());
    assert.equal((await portalOf(sub.portalURL))?.id, sub.id);
    const reissued = await kassa(['subscription', 'portal', sub.id, '--store', store], env);
    assert.equal(reissued.code, 0, reissued.stderr);
    assert.equal(reissued.json.id, sub.id);
    assert.match(reissued.json.portalURL, /\/s\/[A-Za-z0-9_-]{32}$/);
    assert.notEqual(reissued.json.portalURL, sub.portalURL);
    assert.equal(await portalOf(sub.portalURL), null, 'the old link is dead');
    assert.equal((await portalOf(reissued.json.portalURL))?.id, sub.id);
    assert.equal((await kassa(['subscription', 'show', sub.id, '--store', store], env)).json.portalURL, undefined, 'shown once');
    const reissues = await db.pool.any(sql.type(z.object({ action: z.string(), actor: z.string(), via: z.string() }))`
      select action, actor, detail->>'via' as via from audit_log where subject = ${sub.id} and action = 'subscription.portal_reissue'
    `);
    assert.deepEqual(reissues, [{ action: 'subscription.portal_reissue', actor: 'cli', via: 'cli' }]);

    const later = await kassa(['subscription', 'cancel', sub.id, '--store', store, '--at-period-end'], env);
    assert.equal(later.code, 0, later.stderr);
    assert.equal(later.json.status, 'trialing');
    assert.equal(later.json.cancelAtPeriodEnd, true);
    const now = await kassa(['subscription', 'cancel', sub.id, '--store', store], env);
    assert.equal(now.json.status, 'cancelled');

    assertFails(await kassa(['subscription', 'credit', sub.id, '--store', store, '--amount', '-1', '--note', 'x'], env), /--amount is a positive decimal/);
    assertFails(await kassa(['subscription', 'show', '00000000-0000-4000-8000-000000000000', '--store', store], env), /subscription_not_found/);
    assertFails(
      await kassa(['subscription', 'create', '--store', store, '--plan', '00000000-0000-4000-8000-000000000000', '--customer', 'x'], env),
      /plan_not_found/,
    );
  });
});
