// The dashboard's Payments pages (issue 24): the store's payments list with its filters, as CSV, and
// live (an event when the store's newest payments change, while the session and membership hold);
// a payment's page (its books, timeline, refunds and webhook deliveries); and an owner's actions on
// it — a refund (previewed, then confirmed under a one-time key: the API's own createRefund, audited),
// a treasury refund's one TON Connect request, a webhook redelivery (the API's redeliverWebhook).
// The pipeline is the dashboard router's (dashboardSteps.ts).
import crypto from 'node:crypto';
import { createJettonWalletLookup, ownApiUrl } from '../../checkout/jettonWallets.ts';
import { createPaymentFeed } from '../../checkout/live.ts';
import { createLiveStreams, EVENT_STREAM_HEADERS } from '../../checkout/liveStreams.ts';
import { TON_CONNECT_BRIDGE_ORIGINS, tonConnectManifest, tonConnectWallets } from '../../checkout/tonconnect.ts';
import { recordAudit } from '../../dashboard/audit.ts';
import { previewRefund, type RefundPreview } from '../../dashboard/money.ts';
import { paymentsPage } from '../../dashboard/pages.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import { isNotice, paymentPage, type RefundFormState } from '../../dashboard/paymentPage.ts';
import { CSV_MAX_ROWS, filtersOf, listFingerprints, listStorePayments, loadPaymentPage, paymentsCsv, storeCoins } from '../../dashboard/payments.ts';
import { grantsStillOpen } from '../../dashboard/sessions.ts';
import { treasurySigning } from '../../dashboard/treasurySigning.ts';
import { KassaError } from '../../errors.ts';
import { idempotent } from '../../idempotency.ts';
import { shownCoinText } from '../../money.ts';
import { redeliverWebhook } from '../../payments/redeliver.ts';
import { createRefund } from '../../treasury/refunds.ts';
import { type JettonWalletOf, recordRequestSent, releaseRequest } from '../../treasury/treasuryRefunds.ts';
import { newUuid } from '../../uuid.ts';
import { strictCsp } from '../../web/csp.ts';
import { reportingOf, type AppDeps } from '../context.ts';
import { emptyForm, type PaymentsQuery, paymentsQuery, type RefundForm, refundForm } from './dashboard.schema.ts';
import { type DashboardCtx, type DashboardRouter, type OfStore, type OfStorePayment, uuidParams } from './dashboardSteps.ts';
import { answerRequestSent } from './dashboardTreasuryRequests.ts';

/** A stream of "something changed" for a store's payments list, fed by one shared poller. */
const LIVE_MAX_LIFETIME_MS = 10 * 60_000;
/** Live lists one person may hold open at once (per API process). */
const LIVE_MAX_PER_USER = 20;

export function dashboardPaymentRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool, config } = deps;
  const reporting = reportingOf(deps);
  const { root, page, message, notFound, redirect } = dash.steps;
  const paths = dashboardPaths(root);
  const jettonWallets = createJettonWalletLookup(config, pool);

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
    // A report: it may read the replica (DATABASE_REPORTING_URL); X-Kassa-Replica-Lag says how far behind that was.
    const {
      value: { rows, hasMore },
      asOf,
    } = await reporting.read((db) => listStorePayments(db, ctx.state.store.id, filters, CSV_MAX_ROWS));
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    if (asOf.replica) ctx.set('X-Kassa-Replica-Lag', String(Math.round(asOf.lagSeconds ?? 0)));
    ctx.set('Content-Disposition', `attachment; filename="payments-${new Date(deps.now()).toISOString().slice(0, 10)}.csv"`);
    if (hasMore) ctx.set('X-Kassa-Truncated', 'true');
    ctx.body = paymentsCsv(rows);
  });

  // Live: one shared poller (the checkout's live feed) reads, for every watched store, a fingerprint
  // of its newest payments once a second; each open list gets an event when its store's changes
  // from the one the page was rendered with.
  const feed = createPaymentFeed<string>({
    name: 'dashboard_list',
    load: (storeIds) => listFingerprints(pool, storeIds),
    log: deps.log,
  });
  // Whether each open stream's session and membership still hold (sessions.ts grantsStillOpen), by
  // the same kind of shared poller, once a second in one query for all of them: a stream ends within
  // about a second of its session ending (sign-out, sign-out everywhere, a password change or reset,
  // its passkey removed, expiry) or of its person leaving the store — in any API process.
  const grants = createPaymentFeed<boolean>({
    name: 'dashboard_grants',
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
      if (!answerRequestSent(ctx, recorded, refundId)) return notFound(ctx);
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
}
