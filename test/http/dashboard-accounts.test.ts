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

describe('dashboard accounts under abuse: old links and sessions give no one back an account (issue 48 items 2, 4, 5, 7)', () => {
  const userId = (email: string) => app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`select id from dashboard_users where email = ${email}`);
  const linkOf = (made: { text: string }) => new URL(/id="invite-link">([^<]+)</.exec(made.text)![1]!).pathname;
  const resetLink = async (owner: ReturnType<typeof dashboardClient>, storeId: string, email: string) => {
    const made = await owner.post(`/dashboard/stores/${storeId}/team/members/${await userId(email)}/reset-password`);
    assert.equal(made.status, 201, made.text);
    return linkOf(made);
  };
  const invite = async (owner: ReturnType<typeof dashboardClient>, storeId: string, email: string, role: 'owner' | 'viewer') => {
    const made = await owner.post(`/dashboard/stores/${storeId}/team/invitations`, { email, role });
    assert.equal(made.status, 201, made.text);
    return linkOf(made);
  };
  /** Uses a reset link from a fresh browser: its status, and that browser. */
  const useReset = async (link: string, password: string) => {
    const browser = dashboardClient(app.url);
    const used = await browser.post(link, { password, confirm: password });
    return { status: used.status, text: used.text, browser };
  };
  const revokedBecause = (email: string) =>
    app.pool.anyFirst(sql.type(z.object({ revoked_because: z.string().nullable() }))`
      select revoked_because from dashboard_invitations where email = ${email} order by created_at, id
    `);

  it("a reset link made by S1's owner hands over nothing once the member also owns S2: checked again when used", async () => {
    const s1 = await app.store({ name: 'Reset S1' });
    const s2 = await app.store({ name: 'Reset S2' });
    const owner = await member(app.url, app.pool, s1.id, 'one-owner@example.com', 'owner');
    const mia = await member(app.url, app.pool, s1.id, 'mia@example.com', 'viewer', 'mias own password');
    const link = await resetLink(owner, s1.id, 'mia@example.com');
    // Later, Mia comes to own S2 (its own owner's invitation, taken while signed in).
    await member(app.url, app.pool, s2.id, 's2-owner@example.com', 'owner');
    const toS2 = await invitationPath(app.pool, s2.id, 'mia@example.com', 'owner');
    assert.equal((await mia.post(toS2)).status, 303);
    assert.equal(await roleOf(s2.id, 'mia@example.com'), 'owner');

    const used = await useReset(link, 'the thiefs password');
    assert.equal(used.status, 404, used.text);
    assert.match(used.text, /Invitation not valid/);
    assert.equal(used.browser.cookie, null);
    assert.equal((await signIn('198.51.100.40', 'mia@example.com', 'the thiefs password')).status, 401, 'the account was not handed over');
    assert.equal((await signIn('198.51.100.40', 'mia@example.com', 'mias own password')).status, 303);
    assert.equal((await mia.get(`/dashboard/stores/${s2.id}/payments`)).status, 200, "Mia's session goes on");
    // Her own first invitation, the reset (refused when used), S2's invitation.
    assert.deepEqual(await revokedBecause('mia@example.com'), [null, 'rights_changed', null]);
  });

  it('a reset link dies when its maker stops owning the store, when a newer link is made, when the password changes, and after 1 hour', async () => {
    const store = await app.store({ name: 'Reset rules' });
    const owner = await member(app.url, app.pool, store.id, 'rules-owner@example.com', 'owner');
    const second = await member(app.url, app.pool, store.id, 'rules-second@example.com', 'owner');
    const ned = await member(app.url, app.pool, store.id, 'ned@example.com', 'viewer', 'neds own password');
    // Its maker demoted: the link is dead.
    const bySecond = await resetLink(second, store.id, 'ned@example.com');
    assert.equal(
      (await owner.post(`/dashboard/stores/${store.id}/team/members/${await userId('rules-second@example.com')}/role`, { role: 'viewer' })).status,
      200,
    );
    assert.equal((await useReset(bySecond, 'a password for ned')).status, 404);
    // Superseded by a newer link: only the newest works.
    const older = await resetLink(owner, store.id, 'ned@example.com');
    const newer = await resetLink(owner, store.id, 'ned@example.com');
    assert.equal((await useReset(older, 'a password for ned')).status, 404);
    // The password changed since: dead.
    const beforeChange = await resetLink(owner, store.id, 'ned@example.com');
    assert.equal(
      (await ned.post('/dashboard/password', { current: 'neds own password', next: 'neds second password', confirm: 'neds second password' })).status,
      303,
    );
    assert.equal((await useReset(beforeChange, 'a password for ned')).status, 404);
    assert.equal((await useReset(newer, 'a password for ned')).status, 404, 'superseded in its turn by the next one');
    // One hour: a reset link made now is refused an hour later.
    const made = await owner.post(`/dashboard/stores/${store.id}/team/members/${await userId('ned@example.com')}/reset-password`);
    assert.match(made.text, /valid 1 hour/);
    app.clock.set(new Date(Date.now() + 3600_000 + 1000));
    try {
      assert.equal((await useReset(linkOf(made), 'a password for ned')).status, 404);
    } finally {
      app.clock.real();
    }
    assert.equal((await signIn('198.51.100.41', 'ned@example.com', 'neds second password')).status, 303);
    assert.deepEqual(await revokedBecause('ned@example.com'), [null, 'maker_left', 'superseded', 'superseded', 'password_changed', null]);
  });

  it("a demoted person's reset link does not make them owner again: it dies with the demotion, and a reset never changes a role", async () => {
    const store = await app.store({ name: 'Demoted shop' });
    const owner = await member(app.url, app.pool, store.id, 'demoter@example.com', 'owner');
    await member(app.url, app.pool, store.id, 'olga@example.com', 'owner', 'olgas own password');
    const link = await resetLink(owner, store.id, 'olga@example.com');
    assert.equal((await owner.post(`/dashboard/stores/${store.id}/team/members/${await userId('olga@example.com')}/role`, { role: 'viewer' })).status, 200);
    assert.equal((await useReset(link, 'olgas new password')).status, 404);
    assert.equal(await roleOf(store.id, 'olga@example.com'), 'viewer');
    // The operator's reset link (kassa dashboard invite --reset-password), then a demotion the link
    // was not told of: the reset sets the password and leaves her the role she has now.
    const { createInvitation } = await import('../../src/dashboard/invitations.ts');
    const { CLI_ACTOR } = await import('../../src/dashboard/audit.ts');
    await owner.post(`/dashboard/stores/${store.id}/team/members/${await userId('olga@example.com')}/role`, { role: 'owner' });
    const operators = await createInvitation(app.pool, {
      storeId: store.id,
      email: 'olga@example.com',
      role: 'owner',
      resetsPassword: true,
      baseUrl: app.config.baseUrl,
      actor: CLI_ACTOR,
      now: new Date(),
    });
    await app.pool.query(sql.unsafe`update store_members set role = 'viewer' where store_id = ${store.id} and user_id = ${await userId('olga@example.com')}`);
    const used = await useReset(new URL(operators.url).pathname, 'olgas new password');
    assert.equal(used.status, 303, used.text);
    assert.equal(await roleOf(store.id, 'olga@example.com'), 'viewer');
    assert.equal((await used.browser.get(`/dashboard/stores/${store.id}/team`)).status, 403, 'no Team page for a viewer');
  });

  it('an owner removed from a store does not come back through an invitation made before to another address of theirs; owners see and revoke open links', async () => {
    const store = await app.store({ name: 'Comeback shop' });
    const amy = await member(app.url, app.pool, store.id, 'amy@example.com', 'owner');
    const bea = await member(app.url, app.pool, store.id, 'bea@example.com', 'owner');
    const back = await invite(amy, store.id, 'amy.other@example.com', 'owner');
    const team = await bea.get(`/dashboard/stores/${store.id}/team`);
    assert.match(team.text, /amy\.other@example\.com<\/td><td>invitation \(owner\)<\/td><td>amy@example\.com<\/td>/);
    assert.match(team.text, /aria-label="Revoke the link for amy\.other@example\.com"/);
    // Bea removes Amy: the invitations Amy made here die with her membership.
    assert.equal((await bea.post(`/dashboard/stores/${store.id}/team/members/${await userId('amy@example.com')}/remove`)).status, 200);
    const comeback = dashboardClient(app.url);
    const used = await comeback.post(back, { password: 'amys other password', confirm: 'amys other password' });
    assert.equal(used.status, 404, used.text);
    assert.equal(await roleOf(store.id, 'amy.other@example.com'), null);
    assert.match((await bea.get(`/dashboard/stores/${store.id}/team`)).text, /revoked [^<]+ \(its maker left or stopped owning the store\)/);

    // An invitation whose maker lost the right some other way is refused when used (checked again).
    const bySql = await invite(bea, store.id, 'cat@example.com', 'owner');
    const other = await member(app.url, app.pool, store.id, 'dan@example.com', 'owner');
    await app.pool.query(sql.unsafe`update store_members set role = 'viewer' where store_id = ${store.id} and user_id = ${await userId('bea@example.com')}`);
    assert.equal((await dashboardClient(app.url).post(bySql, { password: 'cats password 1', confirm: 'cats password 1' })).status, 404);
    assert.equal(await roleOf(store.id, 'cat@example.com'), null);

    // An owner revokes an open invitation on the Team page (audited); a viewer cannot.
    const open = await invite(other, store.id, 'eli@example.com', 'viewer');
    const id = await app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`
      select id from dashboard_invitations where email = 'eli@example.com' and revoked_at is null
    `);
    assert.equal((await bea.post(`/dashboard/stores/${store.id}/team/invitations/${id}/revoke`)).status, 403, 'a viewer revokes nothing');
    const revoked = await other.post(`/dashboard/stores/${store.id}/team/invitations/${id}/revoke`);
    assert.equal(revoked.status, 200, revoked.text);
    assert.match(revoked.text, /Link revoked/);
    assert.equal((await other.post(`/dashboard/stores/${store.id}/team/invitations/${id}/revoke`)).status, 404, 'once');
    assert.equal((await dashboardClient(app.url).post(open, { password: 'elis password 1', confirm: 'elis password 1' })).status, 404);
    assert.deepEqual(
      (await audit('invitation.revoke', 'eli@example.com')).map((row) => row.actor),
      ['dan@example.com'],
    );
  });

  it('a password change ends every session not made by it, those signing in with the old password meanwhile too (up to 33 at once)', async () => {
    const store = await app.store({ name: 'Race shop' });
    const here = await member(app.url, app.pool, store.id, 'race@example.com', 'owner', 'the old race password');
    const payments = `/dashboard/stores/${store.id}/payments`;
    const signInFrom = async (i: number) => {
      // Each from its own address (no limit shared between them).
      const client = from(`198.51.100.${100 + i}`);
      const answer = await client.post('/dashboard/sign-in', { email: 'race@example.com', password: 'the old race password' });
      return { client, status: answer.status };
    };
    let changing = true;
    const change = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      const answer = await here.post('/dashboard/password', {
        current: 'the old race password',
        next: 'the new race password',
        confirm: 'the new race password',
      });
      changing = false;
      return answer;
    })();
    // Sign-ins start every 30 ms from before the change until it is done (and two more), 33 at most:
    // some check the old password while the change commits.
    const signIns: Promise<{ client: ReturnType<typeof dashboardClient>; status: number }>[] = [];
    for (let after = 0; signIns.length < 33 && (changing || after < 2); after += changing ? 0 : 1) {
      signIns.push(signInFrom(signIns.length));
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    const [results, changed] = await Promise.all([Promise.all(signIns), change]);
    assert.equal(changed.status, 303, changed.text);
    const signedIn = results.filter((r) => r.status === 303);
    assert.ok(signedIn.length > 0, 'some signed in with the old password before it changed');
    const open = [];
    for (const { client } of signedIn) if ((await client.get(payments)).status === 200) open.push(client);
    assert.equal(open.length, 0, `${open.length} of ${signedIn.length} sessions of the old password stayed open`);
    assert.equal((await here.get(payments)).status, 200, 'the session that changed it stays');
  });
});
