// The merchant dashboard at {base_url}/dashboard (issue 24): server-rendered pages for the people of
// a store, signed in with a session cookie (never a bearer token in a page). Every route names its
// steps: the form parser (koa-body; the JSON API keeps its strict reader, docs/ARCHITECTURE.md),
// the same-origin check on every POST, the session, the store membership (another store is "not
// found"), the owner check on every action, then the handler. Actions call the very commands the
// API calls (createRefund, redeliverWebhook) in a transaction that also writes the audit log.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { KassaError } from '../../errors.ts';
import { isUuid } from '../../uuid.ts';
import { redeliverWebhook } from '../../payments/redeliver.ts';
import { findStorePayment } from '../../payments/view.ts';
import { createPaymentFeed } from '../../checkout/live.ts';
import { createLiveStreams, EVENT_STREAM_HEADERS } from '../../checkout/liveStreams.ts';
import { listAudit, recordAudit } from '../../dashboard/audit.ts';
import { auditPage, invitationPage, paymentsPage, signInPage, storesPage, tokensPage, teamPage } from '../../dashboard/pages.ts';
import { isNotice, paymentPage, type RefundFormState } from '../../dashboard/paymentPage.ts';
import { previewRefund, type RefundPreview } from '../../dashboard/money.ts';
import { CSV_MAX_ROWS, filtersFrom, listFingerprints, listStorePayments, loadPaymentPage, paymentsCsv, storeCoins } from '../../dashboard/payments.ts';
import {
  acceptInvitation,
  changeMembership,
  createInvitation,
  FormProblem,
  findOpenInvitation,
  invitationTaker,
  invitationsOf,
  membersOf,
  roleIn,
  roleOf,
} from '../../dashboard/people.ts';
import { createSession, findSession, grantsStillOpen, signIn, signOut, signOutEverywhere } from '../../dashboard/sessions.ts';
import { DASHBOARD_ASSETS } from '../../dashboard/static.ts';
import { issueStoreToken, revokeStoreToken } from '../../dashboard/tokens.ts';
import { isTokenScope, type TokenScope } from '../../auth/scopes.ts';
import { listTokens, TokenNameError, tokenName } from '../../auth/tokens.ts';
import { createRefund } from '../../treasury/refunds.ts';
import type { AppDeps, KassaState } from '../context.ts';
import { DASHBOARD_PATH, type DashboardCtx, type DashboardState, dashboardSteps } from './dashboardSteps.ts';
import { dashboardMoneyRoutes } from './dashboardMoney.ts';
import type { Guards } from '../guards.ts';
import { dashboardPasskeysRoutes } from './dashboardPasskeys.ts';
import { dashboardPasswordRoutes } from './dashboardPassword.ts';
import { dashboardSettingsRoutes } from './dashboardSettings.ts';

export const isDashboardPath = (path: string): boolean => path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);

type Ctx = DashboardCtx;

/** A stream of "something changed" for a store's payments list, fed by one shared poller. */
const LIVE_MAX_LIFETIME_MS = 10 * 60_000;
/** Live lists one person may hold open at once (per API process). */
const LIVE_MAX_PER_USER = 20;

export function dashboardRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool, config } = deps;
  const steps = dashboardSteps(deps);
  const { root, R, S, setSessionCookie, clientOf, page, message, notFound, redirect, htmlErrors, form, sameOrigin, signedIn, member, owner, safeNext, field } =
    steps;

  // Every dashboard request first spends from the app's per-client limit (RATE_LIMIT_PER_CLIENT, as the
  // checkout's): a sign-in or an invitation costs a 32 MiB scrypt, a CSV up to 10,000 rows. Refused:
  // the 429 page with Retry-After (htmlErrors). Registered before the routes, so it runs before each.
  router.use(R, htmlErrors as Middleware<KassaState>, guards.clientLimit);

  // ---- Assets.
  router.get(`${R}/assets/:file`, async (ctx, next) => {
    const asset = Object.hasOwn(DASHBOARD_ASSETS, ctx.params.file ?? '') ? DASHBOARD_ASSETS[ctx.params.file!] : undefined;
    if (!asset) return next();
    ctx.type = asset.type;
    ctx.set('Cache-Control', ctx.query.v === asset.version ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
    ctx.body = asset.body;
  });

  // ---- Sign-in, sign-out.
  router.get(`${R}/sign-in`, htmlErrors, async (ctx: Ctx) => {
    page(ctx, 200, signInPage({ root, next: typeof ctx.query.next === 'string' ? safeNext(ctx.query.next) : undefined }));
  });
  router.post(`${R}/sign-in`, htmlErrors, sameOrigin, form, async (ctx: Ctx) => {
    const email = field(ctx, 'email').slice(0, 254);
    const result = await signIn(pool, { email, password: field(ctx, 'password').slice(0, 1024), actor: clientOf(ctx), now: deps.now() });
    if (result.outcome === 'limited') {
      ctx.set('Retry-After', String(result.retryAfterSeconds));
      const minutes = Math.ceil(result.retryAfterSeconds / 60);
      page(
        ctx,
        429,
        signInPage({ root, email, problem: `Too many failed sign-ins from your address. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` }),
      );
      return;
    }
    if (result.outcome === 'refused') {
      page(ctx, 401, signInPage({ root, email, problem: 'That email and password do not match an account.', next: safeNext(field(ctx, 'next')) }));
      return;
    }
    setSessionCookie(ctx, result.token);
    redirect(ctx, safeNext(field(ctx, 'next')));
  });
  router.post(`${R}/sign-out`, htmlErrors, sameOrigin, form, signedIn, async (ctx: Ctx) => {
    await signOut(pool, ctx.state.session!, ctx.state.actor!, deps.now());
    setSessionCookie(ctx, null);
    redirect(ctx, `${root}/sign-in?signed_out=1`);
  });
  router.post(`${R}/sign-out-everywhere`, htmlErrors, sameOrigin, form, signedIn, async (ctx: Ctx) => {
    await signOutEverywhere(pool, ctx.state.session!, ctx.state.actor!, deps.now());
    setSessionCookie(ctx, null);
    redirect(ctx, `${root}/sign-in?signed_out=everywhere`);
  });

  // ---- Invitations: the one-time link (bound to its email: people.ts invitationTaker).
  const invitationGone = (ctx: Ctx) =>
    message(ctx, 404, 'Invitation not valid', 'This invitation link was used already, has expired, or never existed. Ask for a new one.', true);
  /** Who is signed in, if anyone (an invitation page needs no session; one to an existing account needs its person's). */
  const signedInEmail = async (ctx: Ctx): Promise<string | null> => {
    const token = steps.sessionToken(ctx);
    return token ? ((await findSession(pool, token, deps.now()))?.email ?? null) : null;
  };
  router.get(`${R}/invite/:token`, htmlErrors, async (ctx: Ctx) => {
    const token = (ctx.params as { token: string }).token;
    const invitation = await findOpenInvitation(pool, token, deps.now());
    if (!invitation) return invitationGone(ctx);
    page(ctx, 200, invitationPage({ root, token, invitation, taker: invitationTaker(invitation, await signedInEmail(ctx)) }));
  });
  router.post(`${R}/invite/:token`, htmlErrors, sameOrigin, form, async (ctx: Ctx) => {
    const token = (ctx.params as { token: string }).token;
    const now = deps.now();
    const invitation = await findOpenInvitation(pool, token, now);
    if (!invitation) return invitationGone(ctx);
    const email = await signedInEmail(ctx);
    const taker = invitationTaker(invitation, email);
    const password = field(ctx, 'password');
    if (taker === 'set_password' && password !== field(ctx, 'confirm')) {
      page(ctx, 400, invitationPage({ root, token, invitation, taker, problems: { confirm: 'The two passwords differ.' } }));
      return;
    }
    let accepted: Awaited<ReturnType<typeof acceptInvitation>>;
    try {
      accepted = await acceptInvitation(pool, { token, password: password.slice(0, 1024), signedInEmail: email, actor: clientOf(ctx), now });
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      const problems = { [error.field === 'password' ? 'password' : 'form']: error.message };
      page(ctx, taker === 'set_password' ? 400 : 403, invitationPage({ root, token, invitation, taker, problems }));
      return;
    }
    if (!accepted) return invitationGone(ctx);
    // A new password (first sign-in or reset) signs this browser in; a person who joined signed in already stays so.
    if (taker === 'set_password') setSessionCookie(ctx, await createSession(pool, accepted.userId, clientOf(ctx), now));
    redirect(ctx, `${root}/stores/${accepted.storeId}/payments`);
  });

  // ---- The stores the user may open.
  // The app's router is strict: /dashboard (the address README gives) goes to /dashboard/.
  router.get(R, htmlErrors, async (ctx: Ctx) => redirect(ctx, `${root}/`));
  router.get(`${R}/`, htmlErrors, signedIn, async (ctx: Ctx) => {
    const memberships = ctx.state.viewer!.memberships;
    if (memberships.length === 1) return redirect(ctx, `${root}/stores/${memberships[0]!.storeId}/payments`);
    page(ctx, 200, storesPage({ root, viewer: ctx.state.viewer! }));
  });

  // ---- Payments.
  router.get(`${S}/payments`, htmlErrors, signedIn, member, async (ctx: Ctx) => {
    const store = ctx.state.store!;
    const filters = filtersFrom(ctx.query);
    const [{ rows, hasMore }, coins, fingerprints] = await Promise.all([
      listStorePayments(pool, store.id, filters),
      storeCoins(pool, store.id),
      listFingerprints(pool, [store.id]),
    ]);
    const since = fingerprints.get(store.id) ?? '';
    page(ctx, 200, paymentsPage({ root, viewer: ctx.state.viewer!, store, filters, coins, rows, hasMore, since }));
  });

  // The filtered list as CSV (at most CSV_MAX_ROWS, newest first; X-Kassa-Truncated: true when more matched).
  router.get(`${S}/payments.csv`, htmlErrors, signedIn, member, async (ctx: Ctx) => {
    const store = ctx.state.store!;
    const { after: _after, ...filters } = filtersFrom(ctx.query);
    const { rows, hasMore } = await listStorePayments(pool, store.id, filters, CSV_MAX_ROWS);
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Disposition', `attachment; filename="payments-${new Date(deps.now()).toISOString().slice(0, 10)}.csv"`);
    if (hasMore) ctx.set('X-Kassa-Truncated', 'true');
    ctx.body = paymentsCsv(rows);
  });

  // Live: one shared poller (the checkout's live feed) reads, for every watched store, a fingerprint
  // of its newest payments once a second; each open list gets an event when its store's changes
  // from the one the page was rendered with.
  const feed = createPaymentFeed<string>({
    load: (storeIds) => listFingerprints(pool, storeIds),
    log: deps.log,
  });
  // Whether each open stream's session and membership still hold (sessions.ts grantsStillOpen), by
  // the same kind of shared poller, once a second in one query for all of them: a stream ends within
  // about a second of its session ending (sign-out, sign-out everywhere, a password change or reset,
  // its passkey removed, expiry) or of its person leaving the store — in any API process.
  const grants = createPaymentFeed<boolean>({
    load: (keys) => grantsStillOpen(pool, keys, deps.now()),
    log: deps.log,
  });
  // Open live streams per person (each holds a socket for up to LIVE_MAX_LIFETIME_MS); beyond, 429
  // and the list is simply not live in that tab.
  const streams = createLiveStreams({ perKey: LIVE_MAX_PER_USER, lifetimeMs: LIVE_MAX_LIFETIME_MS });
  router.get(`${S}/payments/events`, htmlErrors, signedIn, member, async (ctx: Ctx) => {
    const storeId = ctx.state.store!.id;
    const userId = ctx.state.session!.userId;
    if (streams.admit(userId) !== 'ok') {
      ctx.set('Retry-After', '30');
      return message(ctx, 429, 'Too many live lists', 'Close some dashboard tabs; this list is not updated live.');
    }
    ctx.status = 200;
    ctx.set(EVENT_STREAM_HEADERS);
    const stream = streams.open(userId, ctx.req, ctx.res);
    ctx.body = stream.body;
    if (stream.closed) return;
    // The list as the page showed it (its fingerprint when rendered): any change after it is news.
    let last: string | null = typeof ctx.query.since === 'string' && /^[0-9a-f]{32}$/.test(ctx.query.since) ? ctx.query.since : null;
    stream.write('retry: 3000\n\n');
    stream.onClose(
      grants.subscribe(`${ctx.state.session!.id}/${storeId}`, (open) => {
        if (!open) stream.close();
      }),
    );
    stream.onClose(
      feed.subscribe(storeId, (fingerprint) => {
        if (last !== null && fingerprint !== last) stream.write(`event: payments\ndata: {}\n\n`);
        last = fingerprint;
      }),
    );
  });

  const showPayment = async (ctx: Ctx, status: number, extra: { refund?: RefundFormState; preview?: RefundPreview; actionProblem?: string | null } = {}) => {
    const store = ctx.state.store!;
    const loaded = await loadPaymentPage(pool, store.id, (ctx.params as { paymentId: string }).paymentId, config.tonNetwork);
    if (!loaded) return notFound(ctx);
    const notice = isNotice(ctx.query.notice) ? ctx.query.notice : null;
    page(
      ctx,
      status,
      paymentPage({ root, viewer: ctx.state.viewer!, store, page: loaded, checkoutUrl: `${config.checkoutBaseUrl}/${loaded.payment.id}`, notice, ...extra }),
    );
  };
  router.get(`${S}/payments/:paymentId`, htmlErrors, signedIn, member, async (ctx: Ctx) => showPayment(ctx, 200));

  /** The store's payment (another store's, or none, is not found — before anything else is read). */
  const storePayment: Middleware<DashboardState> = async (ctx, next) => {
    const paymentId = (ctx.params as { paymentId: string }).paymentId;
    const payment = isUuid(paymentId) ? await findStorePayment(pool, ctx.state.store!.id, paymentId.toLowerCase()) : null;
    if (!payment) return notFound(ctx);
    ctx.state.payment = payment;
    await next();
  };

  router.post(`${S}/payments/:paymentId/refunds`, htmlErrors, sameOrigin, form, signedIn, member, storePayment, owner('refund.refused'), async (ctx: Ctx) => {
    const store = ctx.state.store!;
    const payment = ctx.state.payment!;
    const paymentId = payment.id;
    const request = { coin: field(ctx, 'coin').trim(), amount: field(ctx, 'amount').trim(), address: field(ctx, 'address').trim() };
    const problems: Record<string, string> = {};
    if (!/^\d{1,30}(\.\d{1,30})?$/.test(request.amount)) problems.amount = 'Write the amount as a number such as 0.5.';
    if (request.address === '' || request.address.length > 100) problems.address = 'Give the TON address the refund goes to.';
    if (!/^[A-Za-z0-9]{1,16}$/.test(request.coin)) problems.form = 'Choose the coin to refund.';
    if (Object.keys(problems).length > 0) return showPayment(ctx, 400, { refund: { ...request, problems } });
    const refused = (error: unknown) => {
      if (!(error instanceof KassaError)) throw error;
      const param = error.param === 'amount' || error.param === 'address' ? error.param : 'form';
      return showPayment(ctx, 400, { refund: { ...request, problems: { [param]: error.message } } });
    };
    // First post: what would be sent, its fee and what arrives (the command itself, rolled back), to confirm.
    if (field(ctx, 'confirmed') !== 'yes') {
      let preview: RefundPreview;
      try {
        preview = await previewRefund(pool, config.tonNetwork, payment, request, deps.now());
      } catch (error) {
        return refused(error);
      }
      return showPayment(ctx, 200, { refund: request, preview });
    }
    const now = deps.now();
    try {
      // The API's own command (POST /v1/payments/{id}/refunds), and the audit row, in one transaction.
      await pool.transaction(async (tx) => {
        const refund = await createRefund(tx, config.tonNetwork, payment, request, now);
        await recordAudit(
          tx,
          ctx.state.actor!,
          {
            storeId: store.id,
            action: 'refund.create',
            subject: paymentId,
            detail: { refund: refund.id, coin: refund.coin_symbol, amount: refund.amount, address: request.address },
          },
          now,
        );
      });
    } catch (error) {
      return refused(error);
    }
    redirect(ctx, `${root}/stores/${store.id}/payments/${paymentId}?notice=refund_created`);
  });

  router.post(
    `${S}/payments/:paymentId/webhook/redeliver`,
    htmlErrors,
    sameOrigin,
    form,
    signedIn,
    member,
    storePayment,
    owner('webhook.refused'),
    async (ctx: Ctx) => {
      const store = ctx.state.store!;
      const paymentId = ctx.state.payment!.id;
      const now = deps.now();
      try {
        // The API's own command (POST /v1/payments/{id}/webhook/redeliver), and the audit row, in one transaction.
        await pool.transaction(async (tx) => {
          const delivery = await redeliverWebhook(tx, ctx.state.payment!, now);
          await recordAudit(
            tx,
            ctx.state.actor!,
            { storeId: store.id, action: 'webhook.redeliver', subject: paymentId, detail: { delivery: delivery.id } },
            now,
          );
        });
      } catch (error) {
        if (!(error instanceof KassaError)) throw error;
        return showPayment(ctx, 409, { actionProblem: error.message });
      }
      redirect(ctx, `${root}/stores/${store.id}/payments/${paymentId}?notice=redelivery_queued`);
    },
  );

  // ---- Team and invitations (owners).
  const showTeam = async (ctx: Ctx, status: number, extra: Pick<Parameters<typeof teamPage>[0], 'created' | 'form' | 'memberProblem' | 'notice'> = {}) => {
    const store = ctx.state.store!;
    const [members, invitations] = await Promise.all([membersOf(pool, store.id), invitationsOf(pool, store.id)]);
    page(ctx, status, teamPage({ root, viewer: ctx.state.viewer!, store, members, invitations, now: deps.now(), ...extra }));
  };
  router.get(`${S}/team`, htmlErrors, signedIn, member, owner(null), async (ctx: Ctx) => showTeam(ctx, 200));
  router.post(`${S}/team/invitations`, htmlErrors, sameOrigin, form, signedIn, member, owner(null), async (ctx: Ctx) => {
    const email = field(ctx, 'email').slice(0, 254);
    const role = roleOf(field(ctx, 'role')) ?? 'viewer';
    try {
      const made = await createInvitation(pool, {
        storeId: ctx.state.store!.id,
        email,
        role,
        baseUrl: config.baseUrl,
        actor: ctx.state.actor!,
        now: deps.now(),
      });
      await showTeam(ctx, 201, { created: { url: made.url, email: made.email } });
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      await showTeam(ctx, 400, { form: { email, role, problems: { [error.field ?? 'email']: error.message } } });
    }
  });

  const memberChange = (remove: boolean) => async (ctx: Ctx) => {
    const store = ctx.state.store!;
    const userId = (ctx.params as { userId: string }).userId;
    const role = remove ? null : (roleOf(field(ctx, 'role')) ?? 'viewer');
    try {
      const changed = await changeMembership(pool, { storeId: store.id, userId, role, actor: ctx.state.actor!, now: deps.now() });
      if (!changed) return notFound(ctx);
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      return showTeam(ctx, 400, { memberProblem: error.message });
    }
    // Someone who removed or demoted themselves has no Team page any more.
    if ((await roleIn(pool, ctx.state.session!.userId, store.id)) !== 'owner') return redirect(ctx, `${root}/`);
    await showTeam(ctx, 200, { notice: remove ? 'Member removed.' : 'Role changed.' });
  };
  // A password reset: a new invitation that sets a new password (people.ts mayReset says for whom).
  router.post(`${S}/team/members/:userId/reset-password`, htmlErrors, sameOrigin, form, signedIn, member, owner(null), async (ctx: Ctx) => {
    const store = ctx.state.store!;
    const userId = (ctx.params as { userId: string }).userId.toLowerCase();
    const target = (await membersOf(pool, store.id)).find((m) => m.user_id === userId);
    if (!target) return notFound(ctx);
    try {
      const made = await createInvitation(pool, {
        storeId: store.id,
        email: target.email,
        role: target.role,
        resetsPassword: true,
        baseUrl: config.baseUrl,
        actor: ctx.state.actor!,
        now: deps.now(),
      });
      await showTeam(ctx, 201, { created: { url: made.url, email: made.email, resetsPassword: true } });
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      await showTeam(ctx, 400, { memberProblem: error.message });
    }
  });
  router.post(`${S}/team/members/:userId/role`, htmlErrors, sameOrigin, form, signedIn, member, owner(null), memberChange(false));
  router.post(`${S}/team/members/:userId/remove`, htmlErrors, sameOrigin, form, signedIn, member, owner(null), memberChange(true));

  // ---- API tokens (owners): issue (shown once), list (never the secret), revoke.
  const showTokens = async (
    ctx: Ctx,
    status: number,
    extra: { issued?: { token: string; jti: string; scope: TokenScope; name: string | null }; notice?: string } = {},
  ) => {
    const store = ctx.state.store!;
    page(ctx, status, tokensPage({ root, viewer: ctx.state.viewer!, store, tokens: await listTokens(pool, store.id, deps.now()), ...extra }));
  };
  router.get(`${S}/tokens`, htmlErrors, signedIn, member, owner(null), async (ctx: Ctx) => showTokens(ctx, 200));
  router.post(`${S}/tokens`, htmlErrors, sameOrigin, form, signedIn, member, owner(null), async (ctx: Ctx) => {
    const scope = field(ctx, 'scope') || 'full';
    if (!isTokenScope(scope)) return message(ctx, 400, 'Not accepted', 'Choose what the token may do: full access, read-only, or create and read payments.');
    let name: string | null;
    try {
      name = tokenName(field(ctx, 'name'));
    } catch (error) {
      if (!(error instanceof TokenNameError)) throw error;
      return message(ctx, 400, 'Not accepted', `The name is too long or has control characters: ${error.message}.`);
    }
    const issued = await issueStoreToken(pool, ctx.state.store!.id, { lifetime: field(ctx, 'lifetime'), scope, name }, ctx.state.actor!, deps.now());
    // Answered with the page itself, never a redirect: the token is in this one answer only.
    await showTokens(ctx, 201, { issued: { token: issued.token, jti: issued.jti, scope: issued.scope, name: issued.name } });
  });
  router.post(`${S}/tokens/:jti/revoke`, htmlErrors, sameOrigin, form, signedIn, member, owner(null), async (ctx: Ctx) => {
    const jti = (ctx.params as { jti: string }).jti;
    if (!(await revokeStoreToken(pool, ctx.state.store!.id, jti, ctx.state.actor!, deps.now()))) return notFound(ctx);
    await showTokens(ctx, 200, { notice: `Token ${jti.toLowerCase()} revoked: requests with it are refused from now on.` });
  });

  // ---- Audit log (owners).
  router.get(`${S}/audit`, htmlErrors, signedIn, member, owner(null), async (ctx: Ctx) => {
    const before = typeof ctx.query.before === 'string' && /^\d{1,18}$/.test(ctx.query.before) ? ctx.query.before : undefined;
    const { rows, hasMore } = await listAudit(pool, ctx.state.store!.id, { limit: 100, ...(before ? { beforeId: before } : {}) });
    page(ctx, 200, auditPage({ root, viewer: ctx.state.viewer!, store: ctx.state.store!, rows, hasMore }));
  });

  dashboardMoneyRoutes(router, deps, steps);
  dashboardSettingsRoutes(router, deps, steps);
  dashboardPasskeysRoutes(router, deps, steps);
  dashboardPasswordRoutes(router, deps, steps);

  // Anything else under the dashboard: its own 404 page.
  router.all(`${R}/{*rest}`, htmlErrors, async (ctx: Ctx) => notFound(ctx));
}
