// The dashboard's routes over real HTTP against the real app and database: invitations (single
// use, 24 h), sign-in and its limits (the rest of them: dashboard-accounts.test.ts), sessions and sign-out everywhere, CSRF refusals, a viewer
// who can change nothing, a member of store A who sees nothing of store B (URL tampering), and the
// audit log of each action. The browser flows are in test/browser/dashboard.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { SIGN_IN_LIMITS } from '../../src/dashboard/signInLimits.ts';
import { livePolls } from '../../src/metrics.ts';
import type { TestApp } from '../helpers/app.ts';
import { dashboardClient, invitationPath, member } from '../helpers/dashboard.ts';
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

const audit = (storeId: string | null, action: string) =>
  app.pool.any(sql.type(z.object({ actor: z.string(), subject: z.string().nullable(), client_address: z.string().nullable() }))`
    select actor, subject, client_address from audit_log where action = ${action} and store_id is not distinct from ${storeId} order by id
  `);

describe('dashboard: invitations and sign-in', () => {
  it('an invitation link sets a password once and signs in; used again or after 24 h it is refused', async () => {
    const client = dashboardClient(app.url);
    const path = await invitationPath(app.pool, storeA.id, 'Ann@Example.com', 'owner');
    const form = await client.get(path);
    assert.equal(form.status, 200);
    assert.match(form.text, /Join Store A/);
    assert.match(form.headers.get('content-security-policy') ?? '', /default-src 'none'.*script-src 'self'/);
    // Too short, then two different passwords: the form says why, nothing changes.
    assert.equal((await client.post(path, { password: 'short', confirm: 'short' })).status, 400);
    const differ = await client.post(path, { password: 'long enough pass', confirm: 'long enough pas' });
    assert.equal(differ.status, 400);
    assert.match(differ.text, /The two passwords differ/);
    assert.equal(client.cookie, null);
    const accepted = await client.post(path, { password: 'long enough pass', confirm: 'long enough pass' });
    assert.equal(accepted.status, 303);
    assert.equal(accepted.location, `/dashboard/stores/${storeA.id}`);
    const cookie = accepted.headers.getSetCookie()[0]!;
    assert.match(cookie, /^kassa_dashboard=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    assert.equal((await client.get(accepted.location!)).status, 200);
    // Single use.
    assert.equal((await dashboardClient(app.url).get(path)).status, 404);
    assert.equal((await dashboardClient(app.url).post(path, { password: 'another long one', confirm: 'another long one' })).status, 404);
    // 24 hours.
    const old = await invitationPath(app.pool, storeA.id, 'late@example.com', 'viewer', new Date(Date.now() - 24 * 3600_000 - 1000));
    assert.equal((await dashboardClient(app.url).get(old)).status, 404);
    assert.deepEqual(
      (await audit(storeA.id, 'invitation.accept')).map((row) => row.actor),
      ['ann@example.com'],
    );
  });

  it('sign-in with email and password; a wrong one is refused; sign-out ends the session; sign-out everywhere ends all', async () => {
    await member(app.url, app.pool, storeA.id, 'bob@example.com', 'viewer', 'bobs long password');
    const wrong = await dashboardClient(app.url).post('/dashboard/sign-in', { email: 'bob@example.com', password: 'not it at all' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /do not match an account/);
    const unknown = await dashboardClient(app.url).post('/dashboard/sign-in', { email: 'nobody@example.com', password: 'not it at all' });
    assert.equal(unknown.status, 401);

    const one = dashboardClient(app.url);
    const two = dashboardClient(app.url);
    for (const client of [one, two]) {
      const signedIn = await client.post('/dashboard/sign-in', {
        email: 'BOB@example.com',
        password: 'bobs long password',
        next: `/dashboard/stores/${storeA.id}/payments`,
      });
      assert.equal(signedIn.status, 303, signedIn.text);
      assert.equal(signedIn.location, `/dashboard/stores/${storeA.id}/payments`);
    }
    const payments = `/dashboard/stores/${storeA.id}/payments`;
    assert.equal((await one.get(payments)).status, 200);
    const out = await one.post('/dashboard/sign-out');
    assert.equal(out.status, 303);
    assert.equal(one.cookie, null);
    assert.equal((await two.get(payments)).status, 200);
    // The ended session's cookie is refused even when sent again.
    const anonymous = await dashboardClient(app.url).get(payments);
    assert.equal(anonymous.status, 303);
    assert.match(anonymous.location!, /^\/dashboard\/sign-in\?next=/);

    const three = dashboardClient(app.url);
    await three.post('/dashboard/sign-in', { email: 'bob@example.com', password: 'bobs long password' });
    const stolen = three.cookie;
    assert.equal((await two.post('/dashboard/sign-out-everywhere')).status, 303);
    three.cookie = stolen;
    assert.equal((await three.get(payments)).status, 303);
    assert.equal((await audit(null, 'session.sign_out_everywhere')).length, 1);
  });

  it('failed sign-ins are limited per account and client address (429 with Retry-After), even with the right password', async () => {
    await member(app.url, app.pool, storeA.id, 'carol@example.com', 'viewer', 'carols long password');
    for (let i = 0; i < SIGN_IN_LIMITS.perAccountClient; i += 1) {
      assert.equal((await dashboardClient(app.url).post('/dashboard/sign-in', { email: 'carol@example.com', password: `guess ${i} wrong` })).status, 401);
    }
    const limited = await dashboardClient(app.url).post('/dashboard/sign-in', { email: 'carol@example.com', password: 'carols long password' });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.match(limited.text, /Too many failed sign-ins/);
  });

  it('failed sign-ins are limited per client address across accounts', async () => {
    await app.pool.query(sql.unsafe`delete from dashboard_sign_in_failures`);
    for (let i = 0; i < SIGN_IN_LIMITS.perClient; i += 1) {
      await dashboardClient(app.url).post('/dashboard/sign-in', { email: `spray${i}@example.com`, password: 'password123' });
    }
    const limited = await dashboardClient(app.url).post('/dashboard/sign-in', { email: 'someone@example.com', password: 'password123' });
    assert.equal(limited.status, 429);
    await app.pool.query(sql.unsafe`delete from dashboard_sign_in_failures`);
  });

  it("every POST without the dashboard's Origin is refused (CSRF), signed in or not", async () => {
    const owner = await member(app.url, app.pool, storeA.id, 'dora@example.com', 'owner');
    const payment = await buildPayment(app, storeA, { status: 'completed', body: { webhookURL: 'https://shop.example.com/hook' }, webhook: true });
    const redeliver = `/dashboard/stores/${storeA.id}/payments/${payment.id}/webhook/redeliver`;
    for (const origin of [null, 'https://evil.example', 'null']) {
      const refused = await owner.post(redeliver, {}, { origin });
      assert.equal(refused.status, 403, String(origin));
      assert.match(refused.text, /cross-site request refused/);
      assert.equal((await dashboardClient(app.url).post('/dashboard/sign-in', { email: 'dora@example.com', password: 'x' }, { origin })).status, 403);
    }
    const deliveries = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from webhook_deliveries where payment_id = ${payment.id}`,
    );
    assert.equal(deliveries, 1);
    assert.equal((await owner.post('/dashboard/sign-out', {}, { origin: 'https://evil.example' })).status, 403);
    assert.equal((await owner.get(`/dashboard/stores/${storeA.id}/payments`)).status, 200, 'still signed in');
  });

  it('a form with text PostgreSQL cannot store (U+0000) is a 400 page, never a 500', async () => {
    // (A lone surrogate cannot be sent in a form: URL encoding makes it U+FFFD on the way.)
    const refused = await dashboardClient(app.url).post('/dashboard/sign-in', { email: 'dora\u0000@example.com', password: 'whatever it is' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /U\+0000 or unpaired UTF-16 surrogates/);
  });
});

describe('dashboard: authorization', () => {
  it('a viewer can change nothing: refund, redeliver, team and audit are refused server-side (and the refusals are audited)', async () => {
    const viewer = await member(app.url, app.pool, storeA.id, 'vic@example.com', 'viewer');
    const payment = await buildPayment(app, storeA, {
      status: 'completed',
      body: { webhookURL: 'https://shop.example.com/hook', amount: '1', currency: 'TON' },
      webhook: true,
      transfers: [{ baseUnits: 1_500_000_000n, amount: '1.5', effect: 'overpaid' }],
    });
    const page = await viewer.get(`/dashboard/stores/${storeA.id}/payments/${payment.id}`);
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.text, /name="amount"/, 'no refund form for a viewer');
    assert.doesNotMatch(page.text, /Redeliver the webhook/);
    const root = `/dashboard/stores/${storeA.id}/payments/${payment.id}`;
    const refund = await viewer.post(`${root}/refunds`, { coin: 'TON', amount: '0.1', address: `0:${'1'.repeat(64)}`, confirm: 'yes' });
    assert.equal(refund.status, 403);
    assert.equal((await viewer.post(`${root}/webhook/redeliver`)).status, 403);
    assert.equal((await viewer.get(`/dashboard/stores/${storeA.id}/team`)).status, 403);
    assert.equal((await viewer.post(`/dashboard/stores/${storeA.id}/team/invitations`, { email: 'x@example.com', role: 'owner' })).status, 403);
    assert.equal((await viewer.get(`/dashboard/stores/${storeA.id}/audit`)).status, 403);
    const outgoing = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from outgoing_transfers where payment_id = ${payment.id}`,
    );
    assert.equal(outgoing, 0);
    const deliveries = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from webhook_deliveries where payment_id = ${payment.id}`,
    );
    assert.equal(deliveries, 1);
    assert.deepEqual(await audit(storeA.id, 'refund.refused'), [{ actor: 'vic@example.com', subject: payment.id, client_address: '127.0.0.1' }]);
    assert.equal((await audit(storeA.id, 'webhook.refused')).length, 1);
  });

  it('a member of store A sees nothing of store B, whatever the URL', async () => {
    const owner = await member(app.url, app.pool, storeA.id, 'eve@example.com', 'owner');
    const theirs = await buildPayment(app, storeB, {
      status: 'completed',
      body: { webhookURL: 'https://b.example.com/hook', order_id: 'B-secret-order' },
      webhook: true,
    });
    const ours = await buildPayment(app, storeA, { body: { order_id: 'A-order-1' } });
    const list = await owner.get(`/dashboard/stores/${storeA.id}/payments`);
    assert.match(list.text, /A-order-1/);
    assert.doesNotMatch(list.text, /B-secret-order/);
    // Store B's pages, store B's payment under store A's path, store B's actions: all "not found".
    for (const path of [
      `/dashboard/stores/${storeB.id}/payments`,
      `/dashboard/stores/${storeB.id}/payments/${theirs.id}`,
      `/dashboard/stores/${storeA.id}/payments/${theirs.id}`,
      `/dashboard/stores/${storeB.id}/team`,
      `/dashboard/stores/${storeB.id}/audit`,
      `/dashboard/stores/${storeB.id}/payments/events`,
      `/dashboard/stores/not-a-uuid/payments`,
    ]) {
      const response = await owner.get(path);
      assert.equal(response.status, 404, path);
      assert.doesNotMatch(response.text, /B-secret-order|Store B/, path);
    }
    for (const path of [
      `/dashboard/stores/${storeA.id}/payments/${theirs.id}/webhook/redeliver`,
      `/dashboard/stores/${storeB.id}/payments/${theirs.id}/webhook/redeliver`,
      `/dashboard/stores/${storeA.id}/payments/${theirs.id}/refunds`,
    ]) {
      assert.equal((await owner.post(path, { coin: 'TON', amount: '0.1', address: `0:${'1'.repeat(64)}`, confirm: 'yes' })).status, 404, path);
    }
    // Searching store A for store B's order id or payment id finds nothing.
    for (const q of ['B-secret-order', theirs.id]) {
      const found = await owner.get(`/dashboard/stores/${storeA.id}/payments?q=${encodeURIComponent(q)}`);
      assert.match(found.text, /No payment matches/);
    }
    assert.match((await owner.get(`/dashboard/stores/${storeA.id}/payments/${ours.id}`)).text, /A-order-1/);
    const deliveries = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from webhook_deliveries where payment_id = ${theirs.id}`,
    );
    assert.equal(deliveries, 1);
  });

  it('pages need a session: anonymous GETs go to sign-in, anonymous POSTs change nothing', async () => {
    const anonymous = dashboardClient(app.url);
    const list = await anonymous.get(`/dashboard/stores/${storeA.id}/payments`);
    assert.equal(list.status, 303);
    assert.equal((await anonymous.post(`/dashboard/stores/${storeA.id}/team/invitations`, { email: 'x@example.com' })).status, 401);
    assert.equal((await anonymous.get('/dashboard/nothing-here')).status, 404);
    // /dashboard without the slash: to /dashboard/, then to sign-in (signed in: the store, below).
    const bare = await anonymous.get('/dashboard');
    assert.equal(bare.status, 303);
    assert.equal(bare.location, '/dashboard/');
    const slash = await anonymous.get('/dashboard/');
    assert.equal(slash.status, 303);
    assert.equal(slash.location, `/dashboard/sign-in?next=${encodeURIComponent('/dashboard/')}`);
    const owner = await member(app.url, app.pool, storeB.id, 'bare@example.com', 'owner');
    assert.equal((await owner.get('/dashboard')).location, '/dashboard/');
    assert.equal((await owner.get('/dashboard/')).location, `/dashboard/stores/${storeB.id}`);
    // The JSON API is unchanged: a form body there is still 415.
    const form = await fetch(`${app.url}/v1/payments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${storeA.token}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'amount=1',
    });
    assert.equal(form.status, 415);
  });
});

describe('dashboard: payments list', () => {
  it('filters by status and coin, finds by payment id, order id, deposit address and transaction hash, pages newest first', async () => {
    const store = await app.store({ name: 'Search store' });
    const owner = await member(app.url, app.pool, store.id, 'finder@example.com', 'owner');
    const paid = await buildPayment(app, store, {
      status: 'completed',
      body: { order_id: 'ORD-42' },
      transfers: [{ baseUnits: 1n, amount: '0.000000001', effect: 'completed' }],
    });
    const usdt = await buildPayment(app, store, { method: { coin: 'USDT', chain: 'TON' }, body: { order_id: 'ORD-43' } });
    const list = `/dashboard/stores/${store.id}/payments`;
    const ids = (text: string) => [...text.matchAll(/payments\/([0-9a-f-]{36})" class="mono"/g)].map((m) => m[1]);
    assert.deepEqual(ids((await owner.get(list)).text), [usdt.id, paid.id]);
    assert.deepEqual(ids((await owner.get(`${list}?status=completed`)).text), [paid.id]);
    assert.deepEqual(ids((await owner.get(`${list}?coin=USDT`)).text), [usdt.id]);
    // Anomalies, as the payment object's `anomalies` says them.
    const over = await buildPayment(app, store, { status: 'completed', transfers: [{ baseUnits: 3n, amount: '0.000000003', effect: 'overpaid' }] });
    const late = await buildPayment(app, store, { status: 'expired', transfers: [{ baseUnits: 1n, amount: '0.000000001', effect: 'after_expiry' }] });
    const part = await buildPayment(app, store, { transfers: [{ baseUnits: 1n, amount: '0.000000001', effect: 'partial' }] });
    for (const [anomaly, expected] of [
      ['overpaid', over.id],
      ['paid_late', late.id],
      ['partially_paid', part.id],
    ] as const) {
      assert.deepEqual(ids((await owner.get(`${list}?anomaly=${anomaly}`)).text), [expected], anomaly);
      const api = await app.request('GET', `/v1/payments/${expected}`, { token: store.token });
      assert.ok(api.json.anomalies.includes(anomaly), `${anomaly}: ${api.json.anomalies}`);
    }
    assert.deepEqual(ids((await owner.get(`${list}?anomaly=wrong_coin`)).text), []);
    await app.pool.query(sql.unsafe`delete from payments where id = any(${sql.array([over.id, late.id, part.id], 'uuid')})`);
    for (const q of ['ORD-42', paid.id, paid.created.paymentDetails.address, paid.transferHashes[0]!]) {
      assert.deepEqual(ids((await owner.get(`${list}?q=${encodeURIComponent(q)}`)).text), [paid.id], q);
    }
    const today = new Date().toISOString().slice(0, 10);
    assert.equal(ids((await owner.get(`${list}?from=${today}&to=${today}`)).text).length, 2);
    assert.equal(ids((await owner.get(`${list}?to=2000-01-01`)).text).length, 0);
    // The filtered list as CSV: a header, the rows newest first, a formula-like order id defused.
    await buildPayment(app, store, { status: 'created', body: { order_id: '=HYPERLINK("x")' } });
    const csv = await owner.get(`/dashboard/stores/${store.id}/payments.csv?status=created`);
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
    assert.match(csv.headers.get('content-disposition') ?? '', /^attachment; filename="payments-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = csv.text.trimEnd().split('\r\n');
    assert.equal(lines[0], 'id,status,amount,currency,coin_amount,coin,order_id,created_at,paid_at');
    assert.equal(lines.length, 2);
    assert.match(lines[1]!, /,created,10\.50,USD,,,"'=HYPERLINK\(""x""\)",/);
    assert.equal((await owner.get(`/dashboard/stores/${storeB.id}/payments.csv`)).status, 404);
    for (let i = 0; i < 49; i += 1) await buildPayment(app, store, { status: 'created' });
    const first = await owner.get(list);
    assert.equal(ids(first.text).length, 50);
    const older = /href="([^"]+after=[^"]+)">Older payments/.exec(first.text)![1]!.replace(/&amp;/g, '&');
    assert.deepEqual(ids((await owner.get(older)).text).slice(-2), [usdt.id, paid.id]);
  });
});

describe('dashboard: live payments list', () => {
  it('the events stream of the list tells of a new payment in the store (and only of its own store)', async () => {
    const store = await app.store({ name: 'Live store' });
    const owner = await member(app.url, app.pool, store.id, 'live@example.com', 'owner');
    // The list names its stream with the fingerprint it was rendered with.
    const listed = await owner.get(`/dashboard/stores/${store.id}/payments`);
    const live = /data-live="([^"]+)"/.exec(listed.text)![1]!.replace(/&amp;/g, '&');
    assert.match(live, /\/payments\/events\?since=[0-9a-f]{32}$/);
    const open = async () => {
      const controller = new AbortController();
      const response = await fetch(`${app.url}${live}`, { headers: { cookie: owner.cookie! }, signal: controller.signal });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
      // Read all along (not only while a test waits for a text), so that what arrives unasked is seen.
      const reader = response.body!.getReader();
      let text = '';
      let ended = false;
      let arrived = () => {};
      void (async () => {
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            text += new TextDecoder().decode(value);
            arrived();
          }
        } catch {
          // aborted by close()
        }
        ended = true;
        arrived();
      })();
      const read = async (until: RegExp) => {
        while (!until.test(text)) {
          if (ended) throw new Error(`stream ended: ${text}`);
          await new Promise<void>((resolve) => {
            arrived = resolve;
          });
        }
      };
      return { read, text: () => text, close: () => controller.abort() };
    };
    /** The dashboard list's live poller has run `n` more times (kassa_live_polls_total), waited for, never slept on. */
    const listPolls = async () => (await livePolls.get()).values.find((v) => v.labels.feed === 'dashboard_list')?.value ?? 0;
    const pollsPast = async (from: number, n: number) => {
      while ((await listPolls()) < from + n) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    // A payment in another store changes nothing for this list.
    await buildPayment(app, storeB, { status: 'created' });
    const quiet = await open();
    await quiet.read(/retry: 3000/); // written after the stream subscribed to the poller
    // The poll under way may have begun before the subscription; the next one hands this list its
    // fingerprint (an event would be written then); one more gives it a poll's time to arrive.
    await pollsPast(await listPolls(), 3);
    assert.doesNotMatch(quiet.text(), /event: payments/);
    quiet.close();
    // One in this store, even made between the page and its stream, is news.
    await buildPayment(app, store, { status: 'created' });
    const stream = await open();
    await stream.read(/event: payments/);
    stream.close();
  });
});

describe('dashboard: cookies off loopback', () => {
  it('with an https BASE_URL the session cookie is Secure and __Host- prefixed; a form from that origin is taken', async () => {
    const remote = await startPaymentsApp({ env: { BASE_URL: 'https://pay.example.com' } });
    try {
      const store = await remote.store();
      const client = dashboardClient(remote.url);
      const path = await invitationPath(remote.pool, store.id, 'secure@example.com', 'owner');
      const accepted = await client.post(path, { password: 'long enough pass', confirm: 'long enough pass' }, { origin: 'https://pay.example.com' });
      assert.equal(accepted.status, 303, accepted.text);
      assert.match(accepted.headers.getSetCookie()[0]!, /^__Host-kassa_dashboard=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Secure; Max-Age=\d+$/);
    } finally {
      await remote.close();
    }
  });
});

describe('dashboard: API tokens', () => {
  it('an owner issues a token (shown once, it works), lists tokens without secrets, revokes one (refused at once); all audited', async () => {
    const store = await app.store({ name: 'Token store' });
    const owner = await member(app.url, app.pool, store.id, 'tokens@example.com', 'owner');
    const tokens = `/dashboard/stores/${store.id}/tokens`;
    const issued = await owner.post(tokens, { lifetime: '30d', name: 'shop <backend>' });
    assert.equal(issued.status, 201);
    assert.match(issued.text, /Token “shop &lt;backend&gt;” issued \(.*\); its <a [^>]+>token id<\/a> is <span class="mono">[0-9a-f-]{36}<\/span>/);
    const token = /id="new-token"[^>]*value="([^"]+)"/.exec(issued.text)![1]!;
    const jti = /is <span class="mono">([0-9a-f-]{36})<\/span>/.exec(issued.text)![1]!;
    assert.equal((await app.request('GET', '/v1/payment-methods', { token })).status, 200);
    const list = await owner.get(tokens);
    assert.match(list.text, new RegExp(jti));
    assert.match(list.text, /<td class="token-name">shop &lt;backend&gt;<\/td>/, 'the name is listed (escaped)');
    assert.equal((await owner.post(tokens, { lifetime: '30d', name: 'x'.repeat(101) })).status, 400);
    assert.doesNotMatch(list.text, new RegExp(token.split('.')[2]!), 'the list never shows a secret');
    // Another store's token cannot be revoked from this store.
    const other = await app.store({ name: 'Other token store' });
    const otherJti = await app.pool.oneFirst(sql.type(z.object({ jti: z.string() }))`select jti from api_tokens where store_id = ${other.id}`);
    assert.equal((await owner.post(`${tokens}/${otherJti}/revoke`)).status, 404);
    assert.equal((await app.request('GET', '/v1/payment-methods', { token: other.token })).status, 200);
    const revoked = await owner.post(`${tokens}/${jti}/revoke`);
    assert.equal(revoked.status, 200);
    assert.match(revoked.text, /revoked/);
    assert.equal((await app.request('GET', '/v1/payment-methods', { token })).status, 401);
    assert.deepEqual(
      (await audit(store.id, 'token.issue')).map((row) => [row.actor, row.subject]),
      [['tokens@example.com', jti]],
      'the refused name issued nothing',
    );
    assert.equal((await audit(store.id, 'token.revoke')).length, 1);
  });

  it('a viewer can neither see, issue nor revoke tokens', async () => {
    const store = await app.store({ name: 'Viewer token store' });
    const viewer = await member(app.url, app.pool, store.id, 'tokenviewer@example.com', 'viewer');
    const jti = await app.pool.oneFirst(sql.type(z.object({ jti: z.string() }))`select jti from api_tokens where store_id = ${store.id}`);
    assert.equal((await viewer.get(`/dashboard/stores/${store.id}/tokens`)).status, 403);
    assert.equal((await viewer.post(`/dashboard/stores/${store.id}/tokens`, { lifetime: 'never' })).status, 403);
    assert.equal((await viewer.post(`/dashboard/stores/${store.id}/tokens/${jti}/revoke`)).status, 403);
    assert.equal((await app.request('GET', '/v1/payment-methods', { token: store.token })).status, 200);
    const count = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from api_tokens where store_id = ${store.id}`);
    assert.equal(count, 1);
  });
});

describe('dashboard: team', () => {
  it('an owner changes roles and removes members (audited); the last owner stays; a removed member sees nothing; a viewer changes nothing', async () => {
    const store = await app.store({ name: 'Team store' });
    const owner = await member(app.url, app.pool, store.id, 'boss@example.com', 'owner');
    const helper = await member(app.url, app.pool, store.id, 'helper@example.com', 'viewer');
    const ids = Object.fromEntries(
      (await app.pool.any(sql.type(z.object({ email: z.string(), id: z.string() }))`select email, id from dashboard_users`)).map((row) => [row.email, row.id]),
    );
    const team = `/dashboard/stores/${store.id}/team`;
    // The viewer can change nothing, themselves included.
    assert.equal((await helper.post(`${team}/members/${ids['helper@example.com']}/role`, { role: 'owner' })).status, 403);
    assert.equal((await helper.post(`${team}/members/${ids['boss@example.com']}/remove`)).status, 403);
    // The only owner cannot demote or remove themselves.
    const alone = await owner.post(`${team}/members/${ids['boss@example.com']}/role`, { role: 'viewer' });
    assert.equal(alone.status, 400);
    assert.match(alone.text, /at least one owner/);
    assert.equal((await owner.post(`${team}/members/${ids['boss@example.com']}/remove`)).status, 400);
    // Promote, then the helper may act; then remove them: their pages are gone.
    assert.equal((await owner.post(`${team}/members/${ids['helper@example.com']}/role`, { role: 'owner' })).status, 200);
    assert.equal((await helper.get(team)).status, 200);
    assert.equal((await owner.post(`${team}/members/${ids['helper@example.com']}/remove`)).status, 200);
    assert.equal((await helper.get(`/dashboard/stores/${store.id}/payments`)).status, 404);
    // A member of another store cannot be changed from here.
    assert.equal((await owner.post(`${team}/members/${ids['ann@example.com']}/role`, { role: 'viewer' })).status, 404);
    assert.deepEqual(
      (
        await app.pool.any(sql.type(z.object({ action: z.string(), subject: z.string() }))`
        select action, subject from audit_log where store_id = ${store.id} and action like 'member.%' order by id
      `)
      ).map((row) => `${row.action} ${row.subject}`),
      ['member.role_change helper@example.com', 'member.remove helper@example.com'],
    );
  });
});
