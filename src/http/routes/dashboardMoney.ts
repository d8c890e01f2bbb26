// The dashboard's store home and glossary (issue 32), and its Money and Webhooks pages (issue 24): the store's money per coin, reconciliation
// and treasury (every member), and an owner's top-up of the store's refund fee balance (issue 47 item 3,
// treasury/refundFees.ts); the webhook key set, the store's recent deliveries and a
// sample receiver (every member), and the key's rotation (owners: the command `kassa keys rotate`
// runs, audited as webhook_key.rotate); the Webhooks page's endpoint actions are dashboardEndpoints.ts's,
// registered from here. The pipeline is the dashboard router's (dashboardSteps.ts).
import { glossaryPage } from '../../dashboard/glossaryPage.ts';
import { homeFigures, homeRows, salesTotal } from '../../dashboard/home.ts';
import { getRate, ratePolicy } from '../../rates/rates.ts';
import { homePage } from '../../dashboard/homePage.ts';
import { DELIVERIES_PER_PAGE, recentWebhookOutcomes, storeMoney } from '../../dashboard/money.ts';
import crypto from 'node:crypto';
import { moneyPage, type RefundFeesView } from '../../dashboard/moneyPage.ts';
import { recordAudit } from '../../dashboard/audit.ts';
import { TON_CONNECT_BRIDGE_ORIGINS } from '../../checkout/tonconnect.ts';
import { strictCsp } from '../../web/csp.ts';
import { fromBaseUnits } from '../../money.ts';
import { gasWalletAddress } from '../../treasury/gas.ts';
import { askTopUp, refundFeesOf, TOP_UP_MAX_TON, topUpRequest, type TopUpRequest } from '../../treasury/refundFees.ts';
import { can } from '../../dashboard/policy.ts';
import { isUuid } from '../../uuid.ts';
import { FormProblem } from '../../errors.ts';
import { listWebhookKeys, rotateWebhookKey } from '../../dashboard/webhookKeys.ts';
import { ENDPOINT_NOTICES, type EndpointNotice, webhooksPage } from '../../dashboard/webhooksPage.ts';
import { endpointsOfStore } from '../../dashboard/webhookEndpoints.ts';
import { dashboardEndpointRoutes, type ShowWebhooks } from './dashboardEndpoints.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import { reportingOf, type AppDeps } from '../context.ts';
import { emptyForm, refundFeesForm, type RefundFeesForm } from './dashboard.schema.ts';
import type { DashboardCtx, DashboardRouter, OfStore } from './dashboardSteps.ts';

export function dashboardMoneyRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool, config } = deps;
  // The home figures and the Money page's per-coin money are reports: they may read the replica
  // (DATABASE_REPORTING_URL) and say how current they are. The rates, the refund fee account and
  // every action stay on the primary.
  const reporting = reportingOf(deps);
  const { root, page, redirect } = dash.steps;
  const paths = dashboardPaths(root);

  // The store's home (its landing page): figures made by home.ts from the store's rows now.
  dash.store.get('', async (ctx) => {
    const store = ctx.state.store;
    const now = deps.now();
    const { value: rows, asOf } = await reporting.read((db) => homeRows(db, store.id, now));
    const figures = homeFigures(rows, now);
    // Every coin's sales together in the store's main fiat, at today's rates (the rates policy of prices).
    const main = figures.mainFiat;
    const total =
      main === null || figures.byCoin.length === 0
        ? null
        : salesTotal(
            figures.byCoin,
            main,
            new Map(
              await Promise.all(
                figures.byCoin.map(async (line) => [line.currency, (await getRate(pool, main, line.currency, now, ratePolicy(config)))?.rate ?? null] as const),
              ),
            ),
          );
    page(ctx, 200, homePage({ root, viewer: ctx.state.viewer, store, figures, total, now, asOf }));
  });
  dash.store.get('/glossary', async (ctx) => {
    page(ctx, 200, glossaryPage({ root, viewer: ctx.state.viewer, store: ctx.state.store }));
  });

  /** A top-up not arrived is offered to send for this long after it was asked (asked again after that). */
  const SEND_WITHIN_MS = 24 * 3_600_000;
  const showMoney = async (ctx: DashboardCtx & { state: OfStore }, status: number, extra: Pick<RefundFeesView, 'typed' | 'problem' | 'asked'> = {}) => {
    const store = ctx.state.store;
    const now = deps.now();
    const [{ value: money, asOf }, fees, gas] = await Promise.all([
      reporting.read((db) => storeMoney(db, store.id, config.tonNetwork)),
      refundFeesOf(pool, store.id),
      gasWalletAddress(pool, config.tonNetwork),
    ]);
    // The owner's wallet is asked through TON Connect for each top-up asked lately and not arrived.
    const requests = new Map<string, TopUpRequest>();
    if (gas !== null && can(store.role, 'refund_fees.top_up'))
      for (const t of fees.topUps)
        if (t.arrivals.length === 0 && now.getTime() - t.asked_at.getTime() < SEND_WITHIN_MS) requests.set(t.id, topUpRequest(t, gas, config.tonNetwork, now));
    const styleNonce = requests.size ? crypto.randomBytes(16).toString('base64') : undefined;
    page(
      ctx,
      status,
      moneyPage({
        root,
        viewer: ctx.state.viewer,
        store,
        money,
        asOf,
        network: config.tonNetwork,
        refundFees: { fees, requests, ...extra },
        ...(styleNonce ? { styleNonce } : {}),
      }),
    );
    if (styleNonce) ctx.set('Content-Security-Policy', strictCsp({ styleNonce, connectOrigins: TON_CONNECT_BRIDGE_ORIGINS }));
  };

  dash.store.get('/money', async (ctx) => {
    const asked = typeof ctx.query.asked === 'string' && isUuid(ctx.query.asked) ? ctx.query.asked : null;
    await showMoney(ctx, 200, { asked });
  });

  // A refund fee top-up from the owner's wallet (issue 47 item 3): asked here (a row with its
  // reference, audited), sent by the wallet from the Money page, booked by the reader on arrival.
  dash.store.post<{ form: RefundFeesForm }>(
    '/money/refund-fees',
    {
      can: 'refund_fees.top_up',
      form: refundFeesForm,
      refused: (ctx, problems) => showMoney(ctx, 400, { problem: Object.values(problems).join(' ') }),
    },
    async (ctx) => {
      const typed = (ctx.state.form.amount ?? '').trim();
      const amount = parseTon(typed);
      if ('problem' in amount) return showMoney(ctx, 400, { typed, problem: amount.problem });
      const store = ctx.state.store;
      const now = deps.now();
      const topUp = await pool.transaction(async (tx) => {
        const row = await askTopUp(tx, { storeId: store.id, amountBaseUnits: amount.nano, actor: ctx.state.actor, now });
        await recordAudit(
          tx,
          ctx.state.actor,
          {
            storeId: store.id,
            action: 'refund_fees.ask',
            subject: row.id,
            detail: { amount: fromBaseUnits(amount.nano, 9), coin: 'TON', reference: row.reference },
          },
          now,
        );
        return row;
      });
      redirect(ctx, `${paths.store(store.id).money(`asked=${topUp.id}`)}#top-up-${topUp.id}`);
    },
  );

  const showWebhooks: ShowWebhooks = async (ctx, status, extra = {}) => {
    const store = ctx.state.store;
    // `?deliveries=N`: the Nth page of DELIVERIES_PER_PAGE recent deliveries (one more is read to know whether more follow).
    const asked = typeof ctx.query.deliveries === 'string' && /^[1-9]\d{0,5}$/.test(ctx.query.deliveries) ? Number(ctx.query.deliveries) : 1;
    const [keys, read, endpoints] = await Promise.all([
      listWebhookKeys(pool, deps.now()),
      recentWebhookOutcomes(pool, store.id, DELIVERIES_PER_PAGE + 1, (asked - 1) * DELIVERIES_PER_PAGE),
      endpointsOfStore(pool, store.id),
    ]);
    const deliveries = read.slice(0, DELIVERIES_PER_PAGE);
    const deliveriesPage = { number: asked, hasMore: read.length > DELIVERIES_PER_PAGE };
    const keysUrl = `${config.checkoutBaseUrl}/v1/webhook/keys`;
    page(ctx, status, webhooksPage({ root, viewer: ctx.state.viewer, store, keys, keysUrl, deliveries, deliveriesPage, endpoints, ...extra }));
  };
  dash.store.get('/webhooks', async (ctx) => {
    // After a rotation (post, then redirect here): the new key, if it is the active one.
    const rotated = typeof ctx.query.rotated === 'string' ? ctx.query.rotated : null;
    const active = rotated === null ? null : (await listWebhookKeys(pool, deps.now())).find((k) => k.retired_at === null && k.kid === rotated);
    const notice = typeof ctx.query.notice === 'string' && ctx.query.notice in ENDPOINT_NOTICES ? ENDPOINT_NOTICES[ctx.query.notice as EndpointNotice] : null;
    await showWebhooks(
      ctx,
      200,
      active ? { notice: `Key ${active.kid} signs from now on; the previous key stays published for 24 hours.` } : notice ? { notice } : {},
    );
  });
  dash.store.post('/webhooks/keys/rotate', { can: 'webhook_key.rotate', form: emptyForm }, async (ctx) => {
    let kid: string;
    try {
      kid = await rotateWebhookKey(pool, ctx.state.actor, ctx.state.store.id, deps.now());
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      return showWebhooks(ctx, 409, { problem: error.message });
    }
    redirect(ctx, paths.store(ctx.state.store.id).webhooks(`rotated=${encodeURIComponent(kid)}`));
  });
  dashboardEndpointRoutes(dash, deps, showWebhooks);
}

/** A TON amount as a person types it ("0,5" is 0.5): more than 0, at most TOP_UP_MAX_TON, at most 9 decimals. */
function parseTon(typed: string): { nano: bigint } | { problem: string } {
  const value = typed.replace(/\s/g, '').replace(',', '.');
  if (value === '') return { problem: 'Enter how much TON to add, e.g. 0.6.' };
  const match = /^(\d{1,6})(?:\.(\d+))?$/.exec(value);
  if (!match) return { problem: `"${typed}" is not an amount: enter a number of TON, e.g. 0.6.` };
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > 9) return { problem: 'TON has at most 9 decimals.' };
  const nano = BigInt(match[1]!) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0') || '0');
  if (nano === 0n) return { problem: 'Enter more than 0 TON.' };
  if (nano > BigInt(TOP_UP_MAX_TON) * 1_000_000_000n) return { problem: `At most ${TOP_UP_MAX_TON} TON at a time.` };
  return { nano };
}
