// The dashboard's store home and glossary (issue 32), and its Money and Webhooks pages (issue 24): the store's money per coin, reconciliation
// and treasury (read-only, every member); the webhook key set, the store's recent deliveries and a
// sample receiver (every member), and the key's rotation (owners: the command `kassa keys rotate`
// runs, audited as webhook_key.rotate). The pipeline is the dashboard router's (dashboardSteps.ts).
import { glossaryPage } from '../../dashboard/glossaryPage.ts';
import { homeFigures, homeRows, salesTotal } from '../../dashboard/home.ts';
import { getRate, ratePolicy } from '../../rates/rates.ts';
import { homePage } from '../../dashboard/homePage.ts';
import { DELIVERIES_PER_PAGE, recentWebhookOutcomes, storeMoney } from '../../dashboard/money.ts';
import { moneyPage } from '../../dashboard/moneyPage.ts';
import { FormProblem } from '../../dashboard/people.ts';
import { listWebhookKeys, rotateWebhookKey } from '../../dashboard/webhookKeys.ts';
import { ENDPOINT_NOTICES, type EndpointNotice, webhooksPage } from '../../dashboard/webhooksPage.ts';
import { endpointsOfStore } from '../../dashboard/webhookEndpoints.ts';
import { dashboardEndpointRoutes, type ShowWebhooks } from './dashboardEndpoints.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import type { AppDeps } from '../context.ts';
import { emptyForm } from './dashboard.schema.ts';
import type { DashboardRouter } from './dashboardSteps.ts';

export function dashboardMoneyRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool, config } = deps;
  const { root, page, redirect } = dash.steps;
  const paths = dashboardPaths(root);

  // The store's home (its landing page): figures made by home.ts from the store's rows now.
  dash.store.get('', async (ctx) => {
    const store = ctx.state.store;
    const now = deps.now();
    const figures = homeFigures(await homeRows(pool, store.id, now), now);
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
    page(ctx, 200, homePage({ root, viewer: ctx.state.viewer, store, figures, total, now }));
  });
  dash.store.get('/glossary', async (ctx) => {
    page(ctx, 200, glossaryPage({ root, viewer: ctx.state.viewer, store: ctx.state.store }));
  });

  dash.store.get('/money', async (ctx) => {
    const store = ctx.state.store;
    page(
      ctx,
      200,
      moneyPage({ root, viewer: ctx.state.viewer, store, money: await storeMoney(pool, store.id, config.tonNetwork), network: config.tonNetwork }),
    );
  });

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
