// The merchant dashboard at {base_url}/dashboard (issue 24): server-rendered pages for the people of
// a store, signed in with a session cookie (never a bearer token in a page). Routes are registered
// through the dashboard's router (dashboardSteps.ts), which installs the pipeline once: error
// pages, the per-client limit, the same-origin check and the form parser on every non-GET, the
// stage (anyone, signedIn, store, payment), the policy's `can`, and the forms' and query strings'
// schemas (dashboard.schema.ts, the API's own where the API has the field). Actions call the very
// commands the API calls (createRefund, redeliverWebhook) in a transaction that also writes the audit log.
import crypto from 'node:crypto';
import type Router from '@koa/router';
import { FormProblem, KassaError } from '../../errors.ts';
import { idempotent } from '../../idempotency.ts';
import { redeliverWebhook } from '../../payments/redeliver.ts';
import { createPaymentFeed } from '../../checkout/live.ts';
import { createLiveStreams, EVENT_STREAM_HEADERS } from '../../checkout/liveStreams.ts';
import { listAudit, recordAudit } from '../../dashboard/audit.ts';
import { auditPage, forgotPasswordPage, invitationPage, paymentsPage, signInPage, storesPage, tokensPage, teamPage } from '../../dashboard/pages.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import { isNotice, paymentPage, type RefundFormState } from '../../dashboard/paymentPage.ts';
import { treasurySigning } from '../../dashboard/treasurySigning.ts';
import { requestSentAnswer } from './dashboardTreasuryRequests.ts';
import { previewRefund, type RefundPreview } from '../../dashboard/money.ts';
import { shownCoinText } from '../../money.ts';
import { CSV_MAX_ROWS, filtersOf, listFingerprints, listStorePayments, loadPaymentPage, paymentsCsv, storeCoins } from '../../dashboard/payments.ts';
import {
  acceptInvitation,
  changeMembership,
  createInvitation,
  findOpenInvitation,
  invitationTaker,
  invitationsOf,
  revokeInvitation,
  membersOf,
  normalizeEmail,
  roleIn,
} from '../../dashboard/people.ts';
import { can } from '../../dashboard/policy.ts';
import { findSession, grantsStillOpen, openSession, signIn, signOut, signOutEverywhere } from '../../dashboard/sessions.ts';
import { DASHBOARD_ASSETS } from '../../dashboard/static.ts';
import { TON_CONNECT_BRIDGE_ORIGINS, tonConnectManifest, tonConnectWallets } from '../../checkout/tonconnect.ts';
import { strictCsp } from '../../web/csp.ts';
import { serveAssets } from '../../web/assets.ts';
import { issueStoreToken, revokeStoreToken } from '../../dashboard/tokens.ts';
import type { TokenScope } from '../../auth/scopes.ts';
import { listTokens, tokenName } from '../../auth/tokens.ts';
import { createJettonWalletLookup, ownApiUrl } from '../../checkout/jettonWallets.ts';
import { createRefund } from '../../treasury/refunds.ts';
import { type JettonWalletOf, recordRequestSent, releaseRequest } from '../../treasury/treasuryRefunds.ts';
import { newUuid } from '../../uuid.ts';
import type { AppDeps, KassaState } from '../context.ts';
import type { Guards } from '../guards.ts';
import {
  type AuditQuery,
  auditQuery,
  emptyForm,
  type ForgotPasswordForm,
  forgotPasswordForm,
  type InvitationCreateForm,
  invitationCreateForm,
  type InvitationForm,
  invitationForm,
  type PaymentsQuery,
  paymentsQuery,
  type RefundForm,
  refundForm,
  type RoleForm,
  roleForm,
  type SignInForm,
  signInForm,
  type TokenForm,
  tokenForm,
} from './dashboard.schema.ts';
import { DASHBOARD_PATH, type DashboardCtx, dashboardRouter, type OfStore, type OfStorePayment, uuidParams } from './dashboardSteps.ts';
import { dashboardLinkRoutes } from './dashboardLinks.ts';
import { dashboardMoneyRoutes } from './dashboardMoney.ts';
import { dashboardNotificationRoutes } from './dashboardNotifications.ts';
import { sendPasswordReset } from '../../dashboard/passwordResets.ts';
import { canSendMail } from '../../net/mail.ts';
import { dashboardSubscriptionRoutes } from './dashboardSubscriptions.ts';
import { dashboardUnmatchedRoutes } from './dashboardUnmatched.ts';
import { dashboardPasskeysRoutes } from './dashboardPasskeys.ts';
import { dashboardPasswordRoutes } from './dashboardPassword.ts';
import { dashboardSetupRoutes } from './dashboardSetup.ts';
import { dashboardSettingsRoutes } from './dashboardSettings.ts';

export const isDashboardPath = (path: string): boolean => path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);

/** A stream of "something changed" for a store's payments list, fed by one shared poller. */
const LIVE_MAX_LIFETIME_MS = 10 * 60_000;
/** Live lists one person may hold open at once (per API process). */
const LIVE_MAX_PER_USER = 20;

/** An invitation's one-time token in its link (dashboard/secrets.ts). */
const invitationParams = {
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['token'],
    properties: { token: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', errorCode: 'invalid_request' } },
  },
} as const;

export function dashboardRoutes(router: Router<KassaState>, deps: AppDeps, guards: Guards): void {
  const { pool, config } = deps;
  const dash = dashboardRouter(router, deps, guards);
  const { root, setSessionCookie, clientOf, page, message, notFound, redirect, safeNext } = dash.steps;
  const paths = dashboardPaths(root);
  const jettonWallets = createJettonWalletLookup(config, pool);

  // ---- Assets.
  dash.anyone.get('/assets/:file', serveAssets(DASHBOARD_ASSETS) as never);

  // ---- First-run setup and an owner's new store (before sign-in and the stores page: while Kassa is not set up, they lead to it).
  dashboardSetupRoutes(dash, deps);

  // ---- Sign-in, sign-out.
  dash.anyone.get('/sign-in', async (ctx) => {
    page(ctx, 200, signInPage({ root, canEmail: canSendMail(config), next: typeof ctx.query.next === 'string' ? safeNext(ctx.query.next) : undefined }));
  });
  // Forgotten password (dashboard/passwordResets.ts): the same answer for every address, given before
  // anything is looked up; the link is made and emailed after it.
  dash.anyone.get('/forgot-password', async (ctx) => {
    if (!canSendMail(config)) return notFound(ctx);
    page(ctx, 200, forgotPasswordPage({ root }));
  });
  dash.anyone.post<{ form: ForgotPasswordForm }>(
    '/forgot-password',
    { form: forgotPasswordForm, refused: (ctx) => page(ctx, 400, forgotPasswordPage({ root, problem: 'Write the email address you sign in with.' })) },
    async (ctx) => {
      if (!canSendMail(config)) return notFound(ctx);
      const email = ctx.state.form.email ?? '';
      if (normalizeEmail(email) === null) return page(ctx, 400, forgotPasswordPage({ root, problem: 'Write the email address you sign in with.' }));
      const client = clientOf(ctx);
      const request = { email, baseUrl: config.baseUrl, client: { clientAddress: client.clientAddress, userAgent: client.userAgent }, now: deps.now() };
      void sendPasswordReset({ pool, config, log: deps.log }, request);
      page(ctx, 200, forgotPasswordPage({ root, sent: true }));
    },
  );
  dash.anyone.post<{ form: SignInForm }>(
    '/sign-in',
    {
      form: signInForm,
      refused: (ctx, problems) =>
        page(
          ctx,
          400,
          signInPage({ root, problem: Object.values(problems)[0], next: safeNext(ctx.request.body && (ctx.request.body as { next?: unknown }).next) }),
        ),
    },
    async (ctx) => {
      const { email = '', password = '', next } = ctx.state.form;
      const result = await signIn(pool, { email, password, actor: clientOf(ctx), now: deps.now() });
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
        page(ctx, 401, signInPage({ root, email, problem: 'That email and password do not match an account.', next: safeNext(next) }));
        return;
      }
      setSessionCookie(ctx, result.token);
      redirect(ctx, safeNext(next));
    },
  );
  dash.signedIn.post('/sign-out', { form: emptyForm }, async (ctx) => {
    await signOut(pool, ctx.state.session, ctx.state.actor, deps.now());
    setSessionCookie(ctx, null);
    redirect(ctx, paths.signIn('signed_out=1'));
  });
  dash.signedIn.post('/sign-out-everywhere', { form: emptyForm }, async (ctx) => {
    await signOutEverywhere(pool, ctx.state.session, ctx.state.actor, deps.now());
    setSessionCookie(ctx, null);
    redirect(ctx, paths.signIn('signed_out=everywhere'));
  });

  // ---- Invitations: the one-time link (bound to its email: people.ts invitationTaker).
  const invitationGone = (ctx: DashboardCtx) =>
    message(ctx, 404, 'Invitation not valid', 'This invitation link was used already, has expired, or never existed. Ask for a new one.', true);
  /** Who is signed in, if anyone (an invitation page needs no session; one to an existing account needs its person's). */
  const signedInEmail = async (ctx: DashboardCtx): Promise<string | null> => {
    const token = dash.steps.sessionToken(ctx);
    return token ? ((await findSession(pool, token, deps.now()))?.email ?? null) : null;
  };
  dash.anyone.get<{ params: { token: string } }>('/invite/:token', { params: invitationParams }, async (ctx) => {
    const token = ctx.state.params.token;
    const invitation = await findOpenInvitation(pool, token, deps.now());
    if (!invitation) return invitationGone(ctx);
    page(ctx, 200, invitationPage({ root, token, invitation, taker: invitationTaker(invitation, await signedInEmail(ctx)) }));
  });
  dash.anyone.post<{ params: { token: string }; form: InvitationForm }>('/invite/:token', { params: invitationParams, form: invitationForm }, async (ctx) => {
    const token = ctx.state.params.token;
    const now = deps.now();
    const invitation = await findOpenInvitation(pool, token, now);
    if (!invitation) return invitationGone(ctx);
    const email = await signedInEmail(ctx);
    const taker = invitationTaker(invitation, email);
    const { password = '', confirm = '' } = ctx.state.form;
    if (taker === 'set_password' && password !== confirm) {
      page(ctx, 400, invitationPage({ root, token, invitation, taker, problems: { confirm: 'The two passwords differ.' } }));
      return;
    }
    let accepted: Awaited<ReturnType<typeof acceptInvitation>>;
    try {
      accepted = await acceptInvitation(pool, { token, password, signedInEmail: email, actor: clientOf(ctx), now });
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      const problems = { [error.field === 'password' ? 'password' : 'form']: error.message };
      page(ctx, taker === 'set_password' ? 400 : 403, invitationPage({ root, token, invitation, taker, problems }));
      return;
    }
    if (!accepted) return invitationGone(ctx);
    // A new password (first sign-in or reset) signs this browser in; a person who joined signed in already stays so.
    if (taker === 'set_password') {
      const { userId } = accepted;
      setSessionCookie(
        ctx,
        await pool.transaction((tx) =>
          openSession(tx, { userId, email: accepted.email, actor: clientOf(ctx), method: 'invitation', generation: accepted.generation, now }),
        ),
      );
    }
    redirect(ctx, paths.store(accepted.storeId).home());
  });

  // ---- The stores the person may open.
  // The app's router is strict: /dashboard (the address README gives) goes to /dashboard/.
  dash.anyone.get('', async (ctx) => redirect(ctx, paths.home));
  dash.signedIn.get('/', async (ctx) => {
    const memberships = ctx.state.viewer.memberships;
    if (memberships.length === 1) return redirect(ctx, paths.store(memberships[0]!.storeId).home());
    page(ctx, 200, storesPage({ root, viewer: ctx.state.viewer }));
  });

  // ---- Payments.
  /** A filter the schema refuses: the "Not accepted" page naming it (a form error, never a 500). */
  const filterRefused = (ctx: DashboardCtx, problems: Record<string, string>) =>
    message(ctx, 400, 'Not accepted', `${Object.values(problems).join(' ')} Change the filter and try again.`);
  dash.store.get<{ query: PaymentsQuery }>('/payments', { query: paymentsQuery, refused: filterRefused }, async (ctx) => {
    const store = ctx.state.store;
    const filters = filtersOf(ctx.state.query);
    const [{ rows, hasMore }, coins, fingerprints] = await Promise.all([
      listStorePayments(pool, store.id, filters),
      storeCoins(pool, store.id),
      listFingerprints(pool, [store.id]),
    ]);
    const since = fingerprints.get(store.id) ?? '';
    page(ctx, 200, paymentsPage({ root, viewer: ctx.state.viewer, store, filters, coins, rows, hasMore, since }));
  });

  // The filtered list as CSV (at most CSV_MAX_ROWS, newest first; X-Kassa-Truncated: true when more matched).
  dash.store.get<{ query: PaymentsQuery }>('/payments.csv', { query: paymentsQuery, refused: filterRefused }, async (ctx) => {
    const { after: _after, ...filters } = filtersOf(ctx.state.query);
    const { rows, hasMore } = await listStorePayments(pool, ctx.state.store.id, filters, CSV_MAX_ROWS);
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
  dash.store.get('/payments/events', async (ctx) => {
    const storeId = ctx.state.store.id;
    const userId = ctx.state.session.userId;
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

  const showPayment = async (
    ctx: DashboardCtx & { state: OfStore },
    status: number,
    extra: { refund?: RefundFormState; preview?: RefundPreview; confirmKey?: string; actionProblem?: string | null } = {},
  ) => {
    const store = ctx.state.store;
    const loaded = await loadPaymentPage(pool, store.id, (ctx.params as { paymentId: string }).paymentId, config.tonNetwork, deps.now());
    if (!loaded) return notFound(ctx);
    const notice = isNotice(ctx.query.notice) ? ctx.query.notice : null;
    // A treasury refund to sign: TON Connect's UI (its styles under this response's nonce, its wallets' bridges).
    const signing = treasurySigning(loaded, store.role).length > 0;
    const styleNonce = signing ? crypto.randomBytes(16).toString('base64') : undefined;
    page(
      ctx,
      status,
      paymentPage({
        root,
        viewer: ctx.state.viewer,
        store,
        page: loaded,
        checkoutUrl: `${config.checkoutBaseUrl}/${loaded.payment.id}`,
        notice,
        ...extra,
        ...(styleNonce ? { styleNonce } : {}),
      }),
    );
    if (styleNonce) ctx.set('Content-Security-Policy', strictCsp({ styleNonce, connectOrigins: TON_CONNECT_BRIDGE_ORIGINS }));
  };
  // What TON Connect reads for the payment page's "Sign with your wallet": the dApp manifest (the dashboard's origin) and the offered wallets.
  dash.anyone.get('/tonconnect-manifest.json', async (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.body = { ...tonConnectManifest(config.checkoutBaseUrl), url: new URL(config.baseUrl).origin };
  });
  dash.anyone.get('/tonconnect-wallets.json', async (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = tonConnectWallets(new URL(config.checkoutBaseUrl).pathname.replace(/\/$/, ''));
  });
  dash.payment.get('', async (ctx) => showPayment(ctx, 200));

  /** What the owner typed into the refund form (as typed, for the form shown again). */
  const typedRefund = (ctx: DashboardCtx): RefundFormState => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const typed = (name: string) => (typeof body[name] === 'string' ? (body[name] as string).trim() : '');
    return { from: typed('from'), coin: typed('coin'), amount: typed('amount'), address: typed('address') };
  };
  /** A refusal's param as the refund form's field (amount, address) or the form's own line; its words name the coin as people know it (the API's keep TON). */
  const refundProblems = (problems: Record<string, string>) =>
    Object.fromEntries(Object.entries(problems).map(([field, text]) => [field === 'amount' || field === 'address' ? field : 'form', shownCoinText(text)]));
  dash.payment.post<{ form: RefundForm }>(
    '/refunds',
    {
      can: 'refund.create',
      form: refundForm,
      refused: (ctx, problems) => showPayment(ctx, 400, { refund: { ...typedRefund(ctx), problems: refundProblems(problems) } }),
    },
    async (ctx) => {
      const { store, payment } = ctx.state;
      const { confirmed, key, ...request } = ctx.state.form;
      const origin = ownApiUrl(ctx.req.socket);
      const ownerOf = (raw: string) => jettonWallets.ownerOf(raw, origin);
      const walletOf: JettonWalletOf = (master, owner) => jettonWallets.walletOf(master, owner, origin);
      const refused = (error: unknown) => {
        if (!(error instanceof KassaError)) throw error;
        const gas = error.details.refundGas;
        // Too little money for refund fees: the shop's words and where to add some (the API's message is for developers).
        const text = gas
          ? `A refund in a token such as USDT needs ${gas.needed} GRAM of the store's money for refund fees, and ${gas.available} GRAM is left. An owner adds some from their wallet on the Money page; then try again.`
          : error.message;
        return showPayment(ctx, 400, { refund: { ...typedRefund(ctx), problems: refundProblems({ [error.param ?? 'form']: text }) } });
      };
      // First post: what would be sent, its fee and what arrives (the command itself, rolled back), to
      // confirm; the confirmation's form carries a one-time key.
      if (confirmed !== 'yes' || key === undefined) {
        let preview: RefundPreview;
        try {
          preview = await previewRefund(pool, config.tonNetwork, payment, request, deps.now(), ownerOf, walletOf);
        } catch (error) {
          return refused(error);
        }
        return showPayment(ctx, 200, { refund: request, preview, confirmKey: newUuid() });
      }
      const now = deps.now();
      try {
        // The API's own command (POST /v1/payments/{id}/refunds) and the audit row, in one transaction
        // under the confirmation's key (src/idempotency.ts, as the API's X-Idempotency-Key): a second
        // post of the same confirmation plans nothing and answers as the first.
        await idempotent(pool, { storeId: store.id, endpoint: `dashboard POST /payments/${payment.id}/refunds`, key, body: request, now }, async (tx) => {
          const refund = await createRefund(tx, config.tonNetwork, payment, request, now, null, ownerOf, walletOf);
          await recordAudit(
            tx,
            ctx.state.actor,
            {
              storeId: store.id,
              action: 'refund.create',
              subject: payment.id,
              detail: { refund: refund.id, coin: refund.coin_symbol, amount: refund.amount, address: request.address },
            },
            now,
          );
          return { status: 201, body: { refund: refund.id }, paymentId: payment.id };
        });
      } catch (error) {
        return refused(error);
      }
      redirect(ctx, paths.store(store.id).payment(payment.id, request.from === 'treasury' ? 'notice=treasury_refund_asked' : 'notice=refund_created'));
    },
  );

  // One request per treasury refund across every browser and device (issue 44 §1): the page records
  // handing the refund's TON Connect request to a wallet before it does — the first recording wins,
  // another is refused (409, with until when the held one can land) — and reports the wallet's own
  // refusal, which frees it. Owners only; audited with the recording, in one transaction.
  const refundIdParams = uuidParams('refundId');
  dash.payment.post<{ params: { refundId: string } }>(
    '/treasury-refunds/:refundId/request-sent',
    { can: 'refund.create', params: refundIdParams, form: emptyForm },
    async (ctx) => {
      const { store, payment } = ctx.state;
      const refundId = ctx.params.refundId;
      const now = deps.now();
      const recorded = await pool.transaction(async (tx) => {
        const result = await recordRequestSent(tx, { paymentId: payment.id }, refundId, now);
        if (result.outcome === 'recorded')
          await recordAudit(tx, ctx.state.actor, { storeId: store.id, action: 'refund.request_sent', subject: payment.id, detail: { refund: refundId } }, now);
        return result;
      });
      ctx.set('Cache-Control', 'no-store');
      const answer = requestSentAnswer(recorded, refundId);
      if (answer === null) return notFound(ctx);
      ctx.status = answer.status;
      ctx.body = answer.body;
    },
  );
  dash.payment.post<{ params: { refundId: string } }>(
    '/treasury-refunds/:refundId/request-declined',
    { can: 'refund.create', params: refundIdParams, form: emptyForm },
    async (ctx) => {
      const { store, payment } = ctx.state;
      const refundId = ctx.params.refundId;
      const now = deps.now();
      const released = await pool.transaction(async (tx) => {
        const done = await releaseRequest(tx, { paymentId: payment.id }, refundId);
        if (done)
          await recordAudit(
            tx,
            ctx.state.actor,
            { storeId: store.id, action: 'refund.request_declined', subject: payment.id, detail: { refund: refundId } },
            now,
          );
        return done;
      });
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 200;
      ctx.body = { refund: refundId, requestSent: false, released };
    },
  );

  dash.payment.post('/webhook/redeliver', { can: 'webhook.redeliver', form: emptyForm }, async (ctx: DashboardCtx & { state: OfStorePayment }) => {
    const { store, payment } = ctx.state;
    const now = deps.now();
    try {
      // The API's own command (POST /v1/payments/{id}/webhook/redeliver), and the audit row, in one transaction.
      await pool.transaction(async (tx) => {
        const delivery = await redeliverWebhook(tx, payment, now);
        await recordAudit(tx, ctx.state.actor, { storeId: store.id, action: 'webhook.redeliver', subject: payment.id, detail: { delivery: delivery.id } }, now);
      });
    } catch (error) {
      if (!(error instanceof KassaError)) throw error;
      return showPayment(ctx, 409, { actionProblem: error.message });
    }
    redirect(ctx, paths.store(store.id).payment(payment.id, 'notice=redelivery_queued'));
  });

  // ---- Team and invitations (owners).
  const showTeam = async (
    ctx: DashboardCtx & { state: OfStore },
    status: number,
    extra: Pick<Parameters<typeof teamPage>[0], 'created' | 'form' | 'memberProblem' | 'notice'> = {},
  ) => {
    const store = ctx.state.store;
    const [members, invitations] = await Promise.all([membersOf(pool, store.id), invitationsOf(pool, store.id)]);
    page(ctx, status, teamPage({ root, viewer: ctx.state.viewer, store, members, invitations, now: deps.now(), ...extra }));
  };
  dash.store.get('/team', { can: 'team.manage' }, async (ctx) => showTeam(ctx, 200));
  dash.store.post<{ form: InvitationCreateForm }>(
    '/team/invitations',
    {
      can: 'team.manage',
      form: invitationCreateForm,
      refused: (ctx, problems) => {
        const body = (ctx.request.body ?? {}) as Record<string, unknown>;
        const email = typeof body.email === 'string' ? body.email : '';
        return showTeam(ctx, 400, { form: { email, role: body.role === 'owner' ? 'owner' : 'viewer', problems: invitationProblems(problems) } });
      },
    },
    async (ctx) => {
      const { email, role = 'viewer' } = ctx.state.form;
      try {
        const made = await createInvitation(pool, {
          storeId: ctx.state.store.id,
          email,
          role,
          baseUrl: config.baseUrl,
          actor: ctx.state.actor,
          now: deps.now(),
        });
        await showTeam(ctx, 201, { created: { url: made.url, email: made.email } });
      } catch (error) {
        if (!(error instanceof FormProblem)) throw error;
        await showTeam(ctx, 400, { form: { email, role, problems: { [error.field ?? 'email']: error.message } } });
      }
    },
  );

  const memberChange = (remove: boolean) => async (ctx: DashboardCtx & { state: OfStore<{ params: { userId: string }; form: Partial<RoleForm> }> }) => {
    const store = ctx.state.store;
    const userId = ctx.state.params.userId;
    const role = remove ? null : (ctx.state.form.role ?? 'viewer');
    try {
      const changed = await changeMembership(pool, { storeId: store.id, userId, role, actor: ctx.state.actor, now: deps.now() });
      if (!changed) return notFound(ctx);
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      return showTeam(ctx, 400, { memberProblem: error.message });
    }
    // Someone who removed or demoted themselves has no Team page any more.
    if (!can(await roleIn(pool, ctx.state.session.userId, store.id), 'team.manage')) return redirect(ctx, paths.home);
    await showTeam(ctx, 200, { notice: remove ? 'Member removed.' : 'Role changed.' });
  };
  const memberParams = uuidParams('userId');
  dash.store.post<{ params: { invitationId: string } }>(
    '/team/invitations/:invitationId/revoke',
    { can: 'team.manage', params: uuidParams('invitationId'), form: emptyForm },
    async (ctx) => {
      const revoked = await revokeInvitation(pool, {
        storeId: ctx.state.store.id,
        invitationId: ctx.state.params.invitationId,
        actor: ctx.state.actor,
        now: deps.now(),
      });
      if (!revoked) return notFound(ctx);
      await showTeam(ctx, 200, { notice: 'Link revoked: it opens nothing any more.' });
    },
  );
  // A password reset: a new invitation that sets a new password (people.ts mayReset says for whom).
  dash.store.post<{ params: { userId: string } }>(
    '/team/members/:userId/reset-password',
    { can: 'team.manage', params: memberParams, form: emptyForm },
    async (ctx) => {
      const store = ctx.state.store;
      const userId = ctx.state.params.userId;
      const target = (await membersOf(pool, store.id)).find((m) => m.user_id === userId);
      if (!target) return notFound(ctx);
      try {
        const made = await createInvitation(pool, {
          storeId: store.id,
          email: target.email,
          role: target.role,
          resetsPassword: true,
          baseUrl: config.baseUrl,
          actor: ctx.state.actor,
          now: deps.now(),
        });
        await showTeam(ctx, 201, { created: { url: made.url, email: made.email, resetsPassword: true } });
      } catch (error) {
        if (!(error instanceof FormProblem)) throw error;
        await showTeam(ctx, 400, { memberProblem: error.message });
      }
    },
  );
  dash.store.post<{ params: { userId: string }; form: RoleForm }>(
    '/team/members/:userId/role',
    { can: 'team.manage', params: memberParams, form: roleForm },
    memberChange(false),
  );
  dash.store.post<{ params: { userId: string }; form: Partial<RoleForm> }>(
    '/team/members/:userId/remove',
    { can: 'team.manage', params: memberParams, form: emptyForm },
    memberChange(true),
  );

  // ---- API tokens (owners): issue (shown once), list (never the secret), revoke.
  const showTokens = async (
    ctx: DashboardCtx & { state: OfStore },
    status: number,
    extra: { issued?: { token: string; jti: string; scope: TokenScope; name: string | null }; notice?: string; problems?: Record<string, string> } = {},
  ) => {
    const store = ctx.state.store;
    page(ctx, status, tokensPage({ root, viewer: ctx.state.viewer, store, tokens: await listTokens(pool, store.id, deps.now()), ...extra }));
  };
  dash.store.get('/tokens', { can: 'tokens.manage' }, async (ctx) => showTokens(ctx, 200));
  dash.store.post<{ form: TokenForm }>(
    '/tokens',
    { can: 'tokens.manage', form: tokenForm, refused: (ctx, problems) => showTokens(ctx, 400, { problems }) },
    async (ctx) => {
      const { scope = 'full', lifetime = 'never' } = ctx.state.form;
      let name: string | null;
      try {
        name = tokenName(ctx.state.form.name);
      } catch (error) {
        if (!(error instanceof FormProblem)) throw error;
        return showTokens(ctx, 400, { problems: { name: `The name is too long or has control characters: ${error.message}.` } });
      }
      const issued = await issueStoreToken(pool, ctx.state.store.id, { lifetime, scope, name }, ctx.state.actor, deps.now());
      // Answered with the page itself, never a redirect: the token is in this one answer only.
      await showTokens(ctx, 201, { issued: { token: issued.token, jti: issued.jti, scope: issued.scope, name: issued.name } });
    },
  );
  dash.store.post<{ params: { jti: string } }>('/tokens/:jti/revoke', { can: 'tokens.manage', params: uuidParams('jti'), form: emptyForm }, async (ctx) => {
    const jti = ctx.state.params.jti;
    if (!(await revokeStoreToken(pool, ctx.state.store.id, jti, ctx.state.actor, deps.now()))) return notFound(ctx);
    await showTokens(ctx, 200, { notice: `Token ${jti} revoked: requests with it are refused from now on.` });
  });

  // ---- Audit log (owners).
  dash.store.get<{ query: AuditQuery }>('/audit', { can: 'audit.read', query: auditQuery }, async (ctx) => {
    const { before } = ctx.state.query;
    const { rows, hasMore } = await listAudit(pool, ctx.state.store.id, { limit: 100, ...(before ? { beforeId: before } : {}) });
    page(ctx, 200, auditPage({ root, viewer: ctx.state.viewer, store: ctx.state.store, rows, hasMore }));
  });

  dashboardMoneyRoutes(dash, deps);
  dashboardLinkRoutes(dash, deps);
  dashboardSubscriptionRoutes(dash, deps);
  dashboardUnmatchedRoutes(dash, deps);
  dashboardNotificationRoutes(dash, deps);
  dashboardSettingsRoutes(dash, deps);
  dashboardPasskeysRoutes(dash, deps);
  dashboardPasswordRoutes(dash, deps);

  // Anything else under the dashboard: its own 404 page.
  dash.anyone.all('/{*rest}', { withoutOriginCheck: 'changes nothing: answers the not-found page' }, async (ctx) => notFound(ctx));
}

/** The invitation form's problems by its fields (email, role). */
const invitationProblems = (problems: Record<string, string>) =>
  Object.fromEntries(Object.entries(problems).map(([field, text]) => [field === 'role' ? 'role' : 'email', text]));
