// The dashboard's passkey routes over real HTTP (the ceremonies themselves, with a real
// authenticator, are test/browser/dashboard-passkeys.test.ts): options only for the signed-in
// person and only from the dashboard's origin, a challenge per ceremony kept 5 minutes, the relying
// party from BASE_URL, answers that are no answers refused without a trace, and one person's
// passkey beyond another's reach.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PASSKEY_CHALLENGE_MS, SIGN_IN_CHALLENGES_PER_CLIENT } from '../../src/dashboard/passkeys.ts';
import { RECENT_SIGN_IN_MS } from '../../src/dashboard/sessions.ts';
import { SIGN_IN_LIMITS } from '../../src/dashboard/signInLimits.ts';
import { sql, z } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { dashboardClient, member } from '../helpers/dashboard.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let store: Awaited<ReturnType<TestApp['store']>>;

before(async () => {
  app = await startPaymentsApp();
  store = await app.store({ name: 'Passkey store' });
});
after(() => app.close());

const challenges = () =>
  app.pool.any(sql.type(z.object({ purpose: z.string(), user_id: z.string().nullable(), created_at: z.date(), expires_at: z.date() }))`
    select purpose, user_id, created_at, expires_at from dashboard_passkey_challenges order by created_at
  `);
const passkeyCount = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from dashboard_passkeys`);

describe('dashboard passkeys over HTTP', () => {
  it('registration options: signed in and same-origin only; a discoverable credential with user verification for BASE_URL; a challenge of 5 minutes', async () => {
    await app.pool.query(sql.unsafe`delete from dashboard_passkey_challenges`);
    assert.equal((await dashboardClient(app.url).post('/dashboard/passkeys/options')).status, 401);
    const owner = await member(app.url, app.pool, store.id, 'keys@example.com', 'owner');
    assert.equal((await owner.post('/dashboard/passkeys/options', {}, { origin: 'https://evil.example' })).status, 403);
    assert.equal((await challenges()).length, 0);
    const answer = await owner.post('/dashboard/passkeys/options');
    assert.equal(answer.status, 200, answer.text);
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(answer.headers.get('cache-control'), 'no-store');
    const options = JSON.parse(answer.text);
    assert.equal(options.rp.id, new URL(app.config.baseUrl).hostname);
    assert.equal(options.user.name, 'keys@example.com');
    assert.deepEqual(options.authenticatorSelection, { residentKey: 'required', userVerification: 'required', requireResidentKey: true });
    assert.deepEqual(
      options.pubKeyCredParams.map((p: { alg: number }) => p.alg),
      [-8, -7, -257],
    );
    assert.deepEqual(options.excludeCredentials, []);
    const [challenge] = await challenges();
    assert.equal(challenge?.purpose, 'registration');
    const userId = await app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`select id from dashboard_users where email = 'keys@example.com'`);
    assert.equal(challenge?.user_id, userId);
    assert.equal(challenge!.expires_at.getTime() - challenge!.created_at.getTime(), PASSKEY_CHALLENGE_MS);
    // The user handle is the user's id (16 bytes), nothing personal.
    assert.equal(Buffer.from(options.user.id, 'base64url').toString('hex'), userId.replaceAll('-', ''));
  });

  it('sign-in options need no session but the same origin; expired challenges are deleted as new ones are made', async () => {
    app.clock.set(new Date(Date.now() - 2 * PASSKEY_CHALLENGE_MS));
    try {
      assert.equal((await dashboardClient(app.url).post('/dashboard/sign-in/passkey/options')).status, 200);
    } finally {
      app.clock.real();
    }
    assert.equal((await dashboardClient(app.url).post('/dashboard/sign-in/passkey/options', {}, { origin: null })).status, 403);
    const options = JSON.parse((await dashboardClient(app.url).post('/dashboard/sign-in/passkey/options')).text);
    assert.equal(options.rpId, new URL(app.config.baseUrl).hostname);
    assert.equal(options.userVerification, 'required');
    assert.equal(options.allowCredentials, undefined);
    const signIns = (await challenges()).filter((row) => row.purpose === 'sign_in');
    assert.equal(signIns.length, 1, 'the old one expired and was deleted');
    assert.equal(signIns[0]!.user_id, null);
    // One client holds at most SIGN_IN_CHALLENGES_PER_CLIENT unanswered sign-in challenges.
    for (let i = signIns.length; i < SIGN_IN_CHALLENGES_PER_CLIENT; i += 1) {
      assert.equal((await dashboardClient(app.url).post('/dashboard/sign-in/passkey/options')).status, 200);
    }
    const flood = await dashboardClient(app.url).post('/dashboard/sign-in/passkey/options');
    assert.equal(flood.status, 429);
    assert.equal(flood.headers.get('retry-after'), String(PASSKEY_CHALLENGE_MS / 1000));
    assert.equal((await challenges()).filter((row) => row.purpose === 'sign_in').length, SIGN_IN_CHALLENGES_PER_CLIENT);
    await app.pool.query(sql.unsafe`delete from dashboard_passkey_challenges where purpose = 'sign_in'`);
  });

  it('answers that are no answers are refused, change nothing and sign no one in', async () => {
    const owner = await member(app.url, app.pool, store.id, 'nokey@example.com', 'owner');
    for (const credential of ['', 'not json', '{"id": 5}', JSON.stringify({ id: 'AAAAAAAAAAAAAAAAAAAAAA', response: {} })]) {
      const added = await owner.post('/dashboard/passkeys', { name: 'Laptop', credential });
      assert.equal(added.status, 400, credential);
      assert.match(added.text, /nothing was added/);
      const anonymous = dashboardClient(app.url);
      const signIn = await anonymous.post('/dashboard/sign-in/passkey', { credential });
      assert.equal(signIn.status, 401, credential);
      assert.match(signIn.text, /That passkey did not sign you in/);
      assert.equal(anonymous.cookie, null);
    }
    assert.equal(await passkeyCount(), 0);
    const tooLong = await owner.post('/dashboard/passkeys', { name: 'x'.repeat(65), credential: '{}' });
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.text, /at most 64 characters/);
  });

  it('refused passkey sign-ins count as failed sign-ins: past the per-client limit, 429 with Retry-After, for passwords too', async () => {
    await app.pool.query(sql.unsafe`delete from dashboard_sign_in_failures`);
    const credential = JSON.stringify({ id: 'QUJDREVGR0hJSktMTU5PUA', response: {} });
    for (let i = 0; i < SIGN_IN_LIMITS.perClient; i += 1) {
      assert.equal((await dashboardClient(app.url).post('/dashboard/sign-in/passkey', { credential })).status, 401);
    }
    const limited = await dashboardClient(app.url).post('/dashboard/sign-in/passkey', { credential });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.match(limited.text, /Too many failed sign-ins/);
    const password = await dashboardClient(app.url).post('/dashboard/sign-in', { email: 'keys@example.com', password: 'correct horse battery' });
    assert.equal(password.status, 429);
    await app.pool.query(sql.unsafe`delete from dashboard_sign_in_failures`);
  });

  it('adding a passkey needs a sign-in from the last 10 minutes: a session taken over later cannot give itself a way in', async () => {
    const owner = await member(app.url, app.pool, store.id, 'recent.keys@example.com', 'owner');
    assert.equal((await owner.post('/dashboard/passkeys/options')).status, 200);
    assert.doesNotMatch((await owner.get('/dashboard/passkeys')).text, /add-needs-sign-in/);
    await app.pool.query(sql.unsafe`delete from dashboard_passkey_challenges`);
    app.clock.set(new Date(Date.now() + RECENT_SIGN_IN_MS + 60_000));
    try {
      const options = await owner.post('/dashboard/passkeys/options');
      assert.equal(options.status, 403);
      assert.match(options.text, /needs a sign-in from the last 10 minutes/);
      assert.equal((await owner.post('/dashboard/passkeys', { name: 'Stolen', credential: '{}' })).status, 403);
      const page = await owner.get('/dashboard/passkeys');
      assert.equal(page.status, 200, 'the session itself still works');
      assert.match(page.text, /id="add-needs-sign-in"/);
      assert.doesNotMatch(page.text, /data-passkey="register"/);
      assert.equal((await challenges()).length, 0);
      assert.equal(await passkeyCount(), 0);
    } finally {
      app.clock.real();
    }
  });

  it("the Passkeys page is the signed-in person's; another person's passkey cannot be removed", async () => {
    assert.equal((await dashboardClient(app.url).get('/dashboard/passkeys')).status, 303);
    const ann = await member(app.url, app.pool, store.id, 'ann.keys@example.com', 'viewer');
    const bob = await member(app.url, app.pool, store.id, 'bob.keys@example.com', 'owner');
    const bobsKey = await app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`
      insert into dashboard_passkeys (user_id, credential_id, public_key, name, created_at)
      select id, 'QUJDREVGR0hJSktMTU5PUA', '\\x00', 'Bob''s phone', now() from dashboard_users where email = 'bob.keys@example.com'
      returning id
    `);
    const annsPage = await ann.get('/dashboard/passkeys');
    assert.equal(annsPage.status, 200);
    assert.match(annsPage.text, /None yet/);
    assert.doesNotMatch(annsPage.text, /Bob/);
    assert.match((await bob.get('/dashboard/passkeys')).text, /Bob&#39;s phone|Bob's phone/);
    assert.equal((await ann.post(`/dashboard/passkeys/${bobsKey}/remove`)).status, 404);
    assert.equal((await bob.post(`/dashboard/passkeys/${bobsKey}/remove`, {}, { origin: 'https://evil.example' })).status, 403);
    assert.equal(await passkeyCount(), 1);
    const removed = await bob.post(`/dashboard/passkeys/${bobsKey}/remove`);
    assert.equal(removed.status, 303);
    assert.equal(removed.location, '/dashboard/passkeys?notice=removed');
    assert.equal(await passkeyCount(), 0);
    const audit = await app.pool.any(sql.type(z.object({ actor: z.string(), subject: z.string().nullable() }))`
      select actor, subject from audit_log where action = 'passkey.remove'
    `);
    assert.deepEqual(audit, [{ actor: 'bob.keys@example.com', subject: 'bob.keys@example.com' }]);
  });

  it('a challenge is spent by the first answer that names it, whatever refuses that answer (another user handle, a malformed answer)', async () => {
    await app.pool.query(sql.unsafe`delete from dashboard_passkey_challenges`);
    await app.pool.query(sql.unsafe`delete from dashboard_sign_in_failures`);
    await member(app.url, app.pool, store.id, 'cara.keys@example.com', 'viewer');
    await app.pool.query(sql.unsafe`
      insert into dashboard_passkeys (user_id, credential_id, public_key, name, created_at)
      select id, 'Q0FSQVNLRVlDQVJBU0tFWQ', '\\x00', 'Cara''s key', now() from dashboard_users where email = 'cara.keys@example.com'
    `);
    const origin = new URL(app.config.baseUrl).origin;
    const signInChallenges = () =>
      app.pool.anyFirst(sql.type(z.object({ challenge: z.string() }))`select challenge from dashboard_passkey_challenges where purpose = 'sign_in'`);
    const answers = {
      // The passkey is Cara's, the user handle another person's.
      'another user handle': (challenge: string) => ({
        id: 'Q0FSQVNLRVlDQVJBU0tFWQ',
        rawId: 'Q0FSQVNLRVlDQVJBU0tFWQ',
        type: 'public-key',
        response: {
          clientDataJSON: Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin })).toString('base64url'),
          authenticatorData: 'AAAA',
          signature: 'AAAA',
          userHandle: Buffer.alloc(16, 7).toString('base64url'),
        },
        clientExtensionResults: {},
      }),
      // Refused by the library before it looks at the challenge.
      'a malformed answer': (challenge: string) => ({
        id: 'Q0FSQVNLRVlDQVJBU0tFWQ',
        rawId: 'Q0FSQVNLRVlDQVJBU0tFWQ',
        type: 'not-a-public-key',
        response: {
          clientDataJSON: Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin })).toString('base64url'),
          authenticatorData: 'AAAA',
          signature: 'AAAA',
        },
        clientExtensionResults: {},
      }),
    };
    for (const [what, answer] of Object.entries(answers)) {
      const options = JSON.parse((await dashboardClient(app.url).post('/dashboard/sign-in/passkey/options')).text);
      assert.deepEqual(await signInChallenges(), [options.challenge], what);
      const refused = await dashboardClient(app.url).post('/dashboard/sign-in/passkey', { credential: JSON.stringify(answer(options.challenge)) });
      assert.equal(refused.status, 401, what);
      assert.deepEqual(await signInChallenges(), [], `${what}: the challenge is used up`);
    }
    // A registration's too (a malformed answer from the signed-in person).
    const cara = await member(app.url, app.pool, store.id, 'cara.keys@example.com', 'viewer');
    const options = JSON.parse((await cara.post('/dashboard/passkeys/options')).text);
    const registration = {
      id: 'Q0FSQU5FV0tFWUNBUkFORVc',
      rawId: 'Q0FSQU5FV0tFWUNBUkFORVc',
      type: 'not-a-public-key',
      response: {
        clientDataJSON: Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin })).toString('base64url'),
        attestationObject: 'AAAA',
      },
      clientExtensionResults: {},
    };
    assert.equal((await cara.post('/dashboard/passkeys', { name: 'Phone', credential: JSON.stringify(registration) })).status, 400);
    assert.equal((await challenges()).filter((row) => row.purpose === 'registration').length, 0, 'the registration challenge is used up');
    await app.pool.query(sql.unsafe`delete from dashboard_sign_in_failures`);
  });
});
