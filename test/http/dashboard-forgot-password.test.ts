// Forgotten password by email (issue 47 item 1) over real HTTP, the link received by a real SMTP
// server: the sign-in page offers it when Kassa can send email; the answer is the same for an address
// with an account and one without (only the first gets a link); a second ask within a minute sends
// nothing; a newer link kills the older one; the link sets a new password once (the old one stops
// working, the link cannot be used again); a link whose person left the store is refused when used.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { dashboardClient, member } from '../helpers/dashboard.ts';
import { type MailServer, startMailServer } from '../helpers/notifications.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let mail: MailServer;
before(async () => {
  mail = await startMailServer();
  app = await startPaymentsApp({ env: { SMTP_URL: mail.url, SMTP_FROM: 'Kassa <kassa@shop.test>' } });
});
after(async () => {
  await app.close();
  await mail.close();
});

/** The mails to `to` once `count` have come (or 5 s have passed). */
async function mailsTo(to: string, count: number) {
  const of = () => mail.received.filter((m) => m.to.includes(to));
  for (let i = 0; i < 100 && of().length < count; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  return of();
}
const linkIn = (text: string) => new URL(/(http\S+\/dashboard\/invite\/\S+)/.exec(text)![1]!).pathname;
const signIn = (email: string, password: string) => dashboardClient(app.url).post('/dashboard/sign-in', { email, password });

describe('forgotten password by email', () => {
  it('the same answer for every address; a link only to an account, limited per address, superseded by a newer one, used once', async () => {
    const store = await app.store({ name: 'Reset shop' });
    await member(app.url, app.pool, store.id, 'ann@example.com', 'owner', 'anns old password');

    const signInPage = await dashboardClient(app.url).get('/dashboard/sign-in');
    assert.match(signInPage.text, /href="\/dashboard\/forgot-password"[^>]*>Forgot your password\?/);

    const known = await dashboardClient(app.url).post('/dashboard/forgot-password', { email: 'Ann@Example.com' });
    const unknown = await dashboardClient(app.url).post('/dashboard/forgot-password', { email: 'nobody@example.com' });
    assert.equal(known.status, 200);
    assert.equal(unknown.status, 200);
    assert.equal(known.text, unknown.text, 'the same answer whether an account has the address or not');
    assert.match(known.text, /If an account has that address, a link to set a new password is on its way/);

    const first = await mailsTo('ann@example.com', 1);
    assert.equal(first.length, 1);
    assert.equal(first[0]!.subject, 'Reset your Kassa password');
    assert.match(first[0]!.text, /It works once, for 60 minutes/);
    const firstLink = linkIn(first[0]!.text);

    // Asked again at once: the same answer, no second mail.
    assert.equal((await dashboardClient(app.url).post('/dashboard/forgot-password', { email: 'ann@example.com' })).text, known.text);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal((await mailsTo('ann@example.com', 1)).length, 1, 'no second mail within a minute');
    // A minute later: a new link, which kills the first.
    app.clock.advance(61_000);
    await dashboardClient(app.url).post('/dashboard/forgot-password', { email: 'ann@example.com' });
    const both = await mailsTo('ann@example.com', 2);
    assert.equal(both.length, 2, 'one mail per allowed ask');
    const secondLink = linkIn(both[1]!.text);
    assert.notEqual(secondLink, firstLink);
    assert.deepEqual(
      mail.received.filter((m) => m.to.includes('nobody@example.com')),
      [],
      'no mail to an address without an account',
    );

    const stale = await dashboardClient(app.url).post(firstLink, { password: 'anns new password', confirm: 'anns new password' });
    assert.notEqual(stale.status, 303, 'a superseded link sets nothing');
    const used = await dashboardClient(app.url).post(secondLink, { password: 'anns new password', confirm: 'anns new password' });
    assert.equal(used.status, 303, used.text);
    assert.equal((await signIn('ann@example.com', 'anns old password')).status, 401, 'the old password no longer works');
    assert.equal((await signIn('ann@example.com', 'anns new password')).status, 303);
    const again = await dashboardClient(app.url).post(secondLink, { password: 'someone elses pw', confirm: 'someone elses pw' });
    assert.notEqual(again.status, 303, 'used once');

    const audit = await app.pool.any(sql.type(z.object({ action: z.string(), actor: z.string() }))`
      select action, actor from audit_log where subject = 'ann@example.com' and action in ('invitation.create', 'password.reset') order by id
    `);
    assert.deepEqual(
      audit.map((a) => [a.action, a.actor]),
      [
        ['invitation.create', 'cli'],
        ['invitation.create', 'ann@example.com'],
        ['invitation.create', 'ann@example.com'],
        ['password.reset', 'ann@example.com'],
      ],
    );
  });

  it('a link whose person left the store before using it is refused', async () => {
    const store = await app.store({ name: 'Leaving shop' });
    await member(app.url, app.pool, store.id, 'own@example.com', 'owner', 'owners long password');
    await member(app.url, app.pool, store.id, 'bob@example.com', 'viewer', 'bobs old password');
    await dashboardClient(app.url).post('/dashboard/forgot-password', { email: 'bob@example.com' });
    const [sent] = await mailsTo('bob@example.com', 1);
    assert.ok(sent);
    await app.pool.query(
      sql.unsafe`delete from store_members where store_id = ${store.id} and user_id = (select id from dashboard_users where email = 'bob@example.com')`,
    );
    const refused = await dashboardClient(app.url).post(linkIn(sent.text), { password: 'bobs new password', confirm: 'bobs new password' });
    assert.notEqual(refused.status, 303);
    assert.equal((await signIn('bob@example.com', 'bobs new password')).status, 401);
  });
});
