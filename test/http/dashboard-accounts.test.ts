// Accounts people can manage, and what strangers cannot do to them (issue 35), over real HTTP behind
// TRUST_PROXY (X-Forwarded-For plays each client address): failed sign-ins lock out a pair (account,
// address) and an address, never the account — past its ceiling an account's sign-ins are slowed,
// not refused — and invitations spend nothing; a live list ends when its session or membership does;
// the password is changed (current one needed, other sessions end, audited) or reset by an owner's
// new invitation; an invitation to an existing account is taken only by its signed-in person; an
// invitation's role change keeps the store's last owner. The browser flows (the Password page at
// phone width, a passkey's sessions) are in test/browser/.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SIGN_IN_LIMITS } from '../../src/dashboard/signInLimits.ts';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { dashboardClient, invitationPath, member } from '../helpers/dashboard.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
before(async () => {
  app = await startPaymentsApp({ env: { TRUST_PROXY: 'true', METRICS_TOKEN: 'scrape-secret' } });
});
after(() => app.close());

/** A client at `address` (as the trusted proxy saw it). */
const from = (address: string) => dashboardClient(app.url, { headers: { 'x-forwarded-for': address } });
const signIn = (address: string, email: string, password: string) => from(address).post('/dashboard/sign-in', { email, password });
const failures = (email: string) =>
  app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from dashboard_sign_in_failures where email = ${email}`);
const audit = (action: string, subject: string) =>
  app.pool.any(sql.type(z.object({ actor: z.string(), detail: z.record(z.string(), z.unknown()) }))`
    select actor, detail from audit_log where action = ${action} and subject = ${subject} order by id
  `);
const roleOf = (storeId: string, email: string) =>
  app.pool.maybeOneFirst(sql.type(z.object({ role: z.string() }))`
    select m.role from store_members m join dashboard_users u on u.id = m.user_id where m.store_id = ${storeId} and u.email = ${email}
  `);

describe('dashboard sign-in limits: no lockout by strangers', () => {
  it("a stranger's wrong passwords lock out their own address only: the right password from another address signs in", async () => {
    const store = await app.store({ name: 'Lockout shop' });
    await member(app.url, app.pool, store.id, 'ann@example.com', 'owner', 'anns long password');
    for (let i = 0; i < SIGN_IN_LIMITS.perAccountClient; i += 1) {
      assert.equal((await signIn('203.0.113.9', 'ann@example.com', `guess ${i}`)).status, 401);
    }
    // That address, even with the right password, waits.
    const limited = await signIn('203.0.113.9', 'ann@example.com', 'anns long password');
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    // Ann, elsewhere, is not locked out.
    const ann = await signIn('198.51.100.20', 'ann@example.com', 'anns long password');
    assert.equal(ann.status, 303, ann.text);
  });

  it('past the account ceiling (failures from many addresses) a sign-in is slowed, never refused', async () => {
    const store = await app.store({ name: 'Ceiling shop' });
    await member(app.url, app.pool, store.id, 'bo@example.com', 'owner', 'bos long password');
    // Failures from many addresses (as a botnet's), at the app's now.
    const now = app.clock.now();
    await app.pool.query(sql.unsafe`
      insert into dashboard_sign_in_failures (email, client_address, failed_at)
      select 'bo@example.com', '192.0.2.' || n, ${sql.timestamp(now)} from generate_series(1, ${SIGN_IN_LIMITS.accountCeiling}) n
    `);
    const started = performance.now();
    const bo = await signIn('198.51.100.21', 'bo@example.com', 'bos long password');
    assert.equal(bo.status, 303, bo.text);
    assert.ok(performance.now() - started >= SIGN_IN_LIMITS.ceilingDelayMs, 'slowed by the ceiling');
    // A wrong password from a fresh address is refused as wrong, not limited.
    assert.equal((await signIn('198.51.100.22', 'bo@example.com', 'a wrong guess')).status, 401);
  });

  it('an invitation link spends nothing of the limits: to an account with a password it asks for a sign-in, not the password', async () => {
    const store = await app.store({ name: 'Invite shop' });
    const other = await app.store({ name: 'Invite neighbour' });
    await member(app.url, app.pool, store.id, 'cy@example.com', 'viewer', 'cys long password');
    const path = await invitationPath(app.pool, other.id, 'cy@example.com', 'owner');
    const before = await failures('cy@example.com');
    const page = await from('203.0.113.10').get(path);
    assert.equal(page.status, 200);
    assert.match(page.text, /Sign in to accept/);
    assert.doesNotMatch(page.text, /type="password"/);
    for (let i = 0; i < SIGN_IN_LIMITS.perAccountClient + 1; i += 1) {
      const refused = await from('203.0.113.10').post(path, { password: `guess ${i}`, confirm: `guess ${i}` });
      assert.equal(refused.status, 403);
      assert.match(refused.text, /Sign in as cy@example.com/);
    }
    assert.equal(await failures('cy@example.com'), before);
    assert.equal(await roleOf(other.id, 'cy@example.com'), null);
    assert.equal((await signIn('203.0.113.10', 'cy@example.com', 'cys long password')).status, 303);
  });
});

describe('dashboard live list: ends with its session or membership', () => {
  /** Opens the store's live list as `client`; `ended` resolves when the server ends the stream (rejects after 10 s). */
  async function openLive(client: ReturnType<typeof dashboardClient>, storeId: string) {
    const response = await fetch(`${app.url}/dashboard/stores/${storeId}/payments/events`, { headers: { cookie: client.cookie! } });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      void reader.cancel();
    }, 10_000);
    const ended = (async () => {
      let text = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      clearTimeout(deadline);
      if (timedOut) throw new Error(`still streaming after 10 s: ${text}`);
      return text;
    })();
    return { ended };
  }

  it('removed from the store, the live list ends; signed out everywhere, it ends', async () => {
    const store = await app.store({ name: 'Live shop' });
    const owner = await member(app.url, app.pool, store.id, 'live-owner@example.com', 'owner');
    const viewer = await member(app.url, app.pool, store.id, 'live-viewer@example.com', 'viewer');
    const viewerId = await app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`select id from dashboard_users where email = 'live-viewer@example.com'`);
    const removed = await openLive(viewer, store.id);
    assert.equal((await owner.post(`/dashboard/stores/${store.id}/team/members/${viewerId}/remove`)).status, 200);
    const started = performance.now();
    assert.match(await removed.ended, /retry: 3000/);
    assert.ok(performance.now() - started < 5000, 'ended within a few seconds');

    // Signed out everywhere (from another browser), the owner's stream ends too.
    const elsewhere = dashboardClient(app.url);
    assert.equal((await elsewhere.post('/dashboard/sign-in', { email: 'live-owner@example.com', password: 'correct horse battery' })).status, 303);
    const signedOut = await openLive(owner, store.id);
    assert.equal((await elsewhere.post('/dashboard/sign-out-everywhere')).status, 303);
    assert.match(await signedOut.ended, /retry: 3000/);
  });
});

describe('dashboard accounts: password change and reset, invitations bound to their email, the last owner', () => {
  it('changes the password: the current one is needed, the other sessions end, the old one signs in no more; audited', async () => {
    const store = await app.store({ name: 'Password shop' });
    const here = await member(app.url, app.pool, store.id, 'dee@example.com', 'owner', 'dees first password');
    const there = dashboardClient(app.url);
    assert.equal((await there.post('/dashboard/sign-in', { email: 'dee@example.com', password: 'dees first password' })).status, 303);
    const form = await here.get('/dashboard/password');
    assert.equal(form.status, 200);
    assert.match(form.text, /Current password/);
    const wrong = await here.post('/dashboard/password', { current: 'not it', next: 'dees second password', confirm: 'dees second password' });
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /not your current password/);
    assert.equal((await here.post('/dashboard/password', { current: 'dees first password', next: 'short', confirm: 'short' })).status, 400);
    const differ = await here.post('/dashboard/password', { current: 'dees first password', next: 'dees second password', confirm: 'dees 2nd password' });
    assert.equal(differ.status, 400);
    assert.match(differ.text, /differ/);
    const changed = await here.post('/dashboard/password', { current: 'dees first password', next: 'dees second password', confirm: 'dees second password' });
    assert.equal(changed.status, 303, changed.text);
    assert.equal(changed.location, '/dashboard/password?notice=changed');
    assert.match((await here.get('/dashboard/password?notice=changed')).text, /Password changed/);
    assert.equal((await here.get(`/dashboard/stores/${store.id}/payments`)).status, 200, 'this browser stays signed in');
    assert.equal((await there.get(`/dashboard/stores/${store.id}/payments`)).status, 303, 'the other is signed out');
    assert.equal((await signIn('198.51.100.30', 'dee@example.com', 'dees first password')).status, 401);
    assert.equal((await signIn('198.51.100.30', 'dee@example.com', 'dees second password')).status, 303);
    assert.deepEqual(
      (await audit('password.change', 'dee@example.com')).map((row) => [row.actor, row.detail.sessions]),
      [['dee@example.com', 1]],
    );
    // Not from another site.
    assert.equal((await here.post('/dashboard/password', { current: 'x', next: 'y', confirm: 'y' }, { origin: 'https://evil.example' })).status, 403);
  });

  it("an owner's reset link sets a new password and ends the person's sessions; not for someone who belongs to a store the owner does not own", async () => {
    const store = await app.store({ name: 'Reset shop' });
    const elsewhere = await app.store({ name: 'Reset elsewhere' });
    const owner = await member(app.url, app.pool, store.id, 'reset-owner@example.com', 'owner');
    const forgetful = await member(app.url, app.pool, store.id, 'eve@example.com', 'viewer', 'eves forgotten password');
    const userId = async (email: string) => app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`select id from dashboard_users where email = ${email}`);
    const made = await owner.post(`/dashboard/stores/${store.id}/team/members/${await userId('eve@example.com')}/reset-password`);
    assert.equal(made.status, 201, made.text);
    const link = new URL(/id="invite-link">([^<]+)</.exec(made.text)![1]!).pathname;
    const page = await dashboardClient(app.url).get(link);
    assert.match(page.text, /Reset your password/);
    const reset = dashboardClient(app.url);
    const done = await reset.post(link, { password: 'eves brand new password', confirm: 'eves brand new password' });
    assert.equal(done.status, 303, done.text);
    assert.equal((await forgetful.get(`/dashboard/stores/${store.id}/payments`)).status, 303, 'the old session ended');
    assert.equal((await reset.get(`/dashboard/stores/${store.id}/payments`)).status, 200);
    assert.equal((await signIn('198.51.100.31', 'eve@example.com', 'eves brand new password')).status, 303);
    assert.equal(await roleOf(store.id, 'eve@example.com'), 'viewer', 'the role stays');
    assert.equal((await audit('password.reset', 'eve@example.com')).length, 1);

    // Frank is also in a store this owner does not own: no reset from here.
    await member(app.url, app.pool, store.id, 'frank@example.com', 'viewer');
    await app.pool.query(sql.unsafe`
      insert into store_members (store_id, user_id, role) values (${elsewhere.id}, ${await userId('frank@example.com')}, 'owner')
    `);
    const refused = await owner.post(`/dashboard/stores/${store.id}/team/members/${await userId('frank@example.com')}/reset-password`);
    assert.equal(refused.status, 400);
    assert.match(refused.text, /also belongs to a store you do not own/);
  });

  it('an invitation to an existing account is taken by its signed-in person only, and its role change keeps the last owner', async () => {
    const store = await app.store({ name: 'Bound shop' });
    const next = await app.store({ name: 'Bound next door' });
    const gus = await member(app.url, app.pool, store.id, 'gus@example.com', 'owner');
    const hal = await member(app.url, app.pool, next.id, 'hal@example.com', 'owner');
    // Hal, signed in, cannot take Gus's invitation.
    const forGus = await invitationPath(app.pool, next.id, 'gus@example.com', 'viewer');
    assert.match((await hal.get(forGus)).text, /signed in with another email/);
    assert.equal((await hal.post(forGus)).status, 403);
    assert.equal(await roleOf(next.id, 'gus@example.com'), null);
    // Gus, signed in, joins with a button.
    assert.match((await gus.get(forGus)).text, /<button type="submit">Join Bound next door<\/button>/);
    const joined = await gus.post(forGus);
    assert.equal(joined.status, 303, joined.text);
    assert.equal(joined.location, `/dashboard/stores/${next.id}`);
    assert.equal(await roleOf(next.id, 'gus@example.com'), 'viewer');
    // A second invitation that would make the store's only owner a viewer is refused; Gus stays owner.
    const demote = await invitationPath(app.pool, store.id, 'gus@example.com', 'viewer');
    const refused = await gus.post(demote);
    assert.equal(refused.status, 403);
    assert.match(refused.text, /keeps at least one owner/);
    assert.equal(await roleOf(store.id, 'gus@example.com'), 'owner');
  });
});
