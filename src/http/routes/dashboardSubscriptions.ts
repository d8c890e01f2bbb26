// The dashboard's Subscriptions pages (issue 45): every member sees the store's subscriptions (with
// the API's filters), its plans and a subscription's page (status, period, credit, its history, its
// payments, its portal link); owners make and archive plans, subscribe a customer, add credit with a
// note and cancel — each through the API's own command, its request checked by the API's own schema
// (dashboard.schema.ts planForm, subscriptionForm, creditForm, then CreatePlanRequest or
// CreateSubscriptionRequest once the form's text is the API's fields), audited (dashboard/subscriptions.ts).
// The pipeline is the dashboard router's (dashboardSteps.ts).
import {
  archiveDashboardPlan,
  cancelDashboardSubscription,
  createDashboardPlan,
  createDashboardSubscription,
  reissueDashboardPortal,
  creditDashboardSubscription,
  subscriptionPayments,
} from '../../dashboard/subscriptions.ts';
import {
  plansPage,
  SUBSCRIPTION_NOTICES,
  type SubscriptionFormState,
  type SubscriptionNotice,
  subscriptionPage,
  subscriptionsPage,
} from '../../dashboard/subscriptionsPage.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import { KassaError } from '../../errors.ts';
import { listStoreMethods } from '../../payments/methods.ts';
import { presentSubscription } from '../../presenters/subscription.ts';
import { FIAT_CURRENCIES } from '../../rates/fiat.ts';
import type { SubscriptionCommandDeps } from '../../subscriptions/commands.ts';
import { findPlan, findSubscription, listLedger, listPlans, listSubscriptions, type SubscriptionRow } from '../../subscriptions/records.ts';
import type { AppDeps } from '../context.ts';
import { bodyCheck } from '../validate.ts';
import {
  type CancelForm,
  type CreditForm,
  cancelForm,
  creditForm,
  emptyForm,
  type PlanForm,
  planForm,
  type SubscriptionForm,
  type SubscriptionsQuery,
  subscriptionForm,
  subscriptionsQuery,
} from './dashboard.schema.ts';
import { type DashboardCtx, type DashboardRouter, type OfStore, uuidParams } from './dashboardSteps.ts';
import { createPlanSchema, createSubscriptionSchema } from './subscriptions.schema.ts';

type Ctx = DashboardCtx & { state: OfStore };

const PLAN_FIELDS = ['name', 'amount', 'currency', 'interval', 'intervalCount', 'trialDays', 'graceDays', 'reminderDays'];
const SUBSCRIPTION_FIELDS = ['planID', 'reference', 'email', 'telegramUserID', 'trialDays'];
const CREDIT_FIELDS = ['amount', 'note'];

export function dashboardSubscriptionRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool, config } = deps;
  const { root, page, redirect, notFound } = dash.steps;
  const paths = dashboardPaths(root);
  const planRequest = bodyCheck(createPlanSchema);
  const subscriptionRequest = bodyCheck(createSubscriptionSchema);
  const manage = { can: 'subscriptions.manage' } as const;
  const engine: SubscriptionCommandDeps = { config, present: (row: SubscriptionRow) => presentSubscription(row, config) };

  /** The notice named by `?notice=`, if it is one. */
  const noticeOf = (ctx: DashboardCtx) =>
    typeof ctx.query.notice === 'string' && Object.hasOwn(SUBSCRIPTION_NOTICES, ctx.query.notice)
      ? SUBSCRIPTION_NOTICES[ctx.query.notice as SubscriptionNotice]
      : null;
  /** What was typed, to show the form again. */
  const typed = (ctx: DashboardCtx): Record<string, string> =>
    Object.fromEntries(Object.entries((ctx.request.body ?? {}) as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
  /** A refusal's param as the form's field (the API's customer.reference is the form's `reference`); anything else is the form's own line. */
  const fieldOf = (param: string | undefined, fields: readonly string[]) => {
    const path = param ?? 'form';
    const name = path.startsWith('customer.') ? path.slice('customer.'.length) : path === 'customer' ? 'reference' : path.split(/[.[]/)[0]!;
    return fields.includes(name) ? name : 'form';
  };
  const reword = (problems: Record<string, string>, fields: readonly string[]) =>
    Object.fromEntries(Object.entries(problems).map(([name, text]) => [fields.includes(name) ? name : 'form', text]));
  const refusal = (ctx: DashboardCtx, error: KassaError, fields: readonly string[]): SubscriptionFormState => ({
    values: typed(ctx),
    problems: { [fieldOf(error.param, fields)]: error.message },
  });

  // ---- Subscriptions: the list and its filters, subscribing a customer.
  const showSubscriptions = async (
    ctx: Ctx,
    status: number,
    extra: {
      filters?: { status?: string; customer?: string };
      filterProblems?: Record<string, string>;
      form?: SubscriptionFormState;
      notice?: string | null;
    } = {},
  ) => {
    const store = ctx.state.store;
    const filters = extra.filters ?? {};
    const [subscriptions, plans] = await Promise.all([
      extra.filterProblems
        ? []
        : listSubscriptions(
            pool,
            store.id,
            {
              ...(filters.status !== undefined ? { status: filters.status } : {}),
              ...(filters.customer !== undefined ? { customerReference: filters.customer } : {}),
            },
            deps.now(),
          ),
      listPlans(pool, store.id),
    ]);
    page(ctx, status, subscriptionsPage({ root, viewer: ctx.state.viewer, store, subscriptions, plans, filters, ...extra }));
  };

  dash.store.get<{ query: SubscriptionsQuery }>(
    '/subscriptions',
    {
      query: subscriptionsQuery,
      refused: (ctx, problems) =>
        showSubscriptions(ctx, 400, {
          filters: Object.fromEntries(['status', 'customer'].flatMap((name) => (typeof ctx.query[name] === 'string' ? [[name, ctx.query[name]]] : []))),
          filterProblems: problems,
        }),
    },
    async (ctx) => {
      await showSubscriptions(ctx, 200, { filters: ctx.state.query, notice: noticeOf(ctx) });
    },
  );

  dash.store.post<{ form: SubscriptionForm }>(
    '/subscriptions',
    {
      ...manage,
      form: subscriptionForm,
      refused: (ctx, problems) => showSubscriptions(ctx, 400, { form: { values: typed(ctx), problems: reword(problems, SUBSCRIPTION_FIELDS) } }),
    },
    async (ctx) => {
      const { planID, reference, email, telegramUserID, trialDays } = ctx.state.form;
      const request = {
        planID,
        customer: {
          reference,
          ...(email !== undefined ? { email } : {}),
          ...(telegramUserID !== undefined ? { telegramUserID: Number(telegramUserID) } : {}),
        },
        ...(trialDays !== undefined ? { trialDays: Number(trialDays) } : {}),
      };
      let made: { id: string; portalToken: string };
      try {
        subscriptionRequest(request);
        made = await createDashboardSubscription(pool, engine, ctx.state.actor, ctx.state.store.id, request, deps.now());
      } catch (error) {
        if (!(error instanceof KassaError)) throw error;
        return showSubscriptions(ctx, 400, { form: refusal(ctx, error, SUBSCRIPTION_FIELDS) });
      }
      // The subscription's page at once, not a redirect: its portal link is shown this once (Kassa keeps only its hash).
      await showSubscription(ctx, 201, made.id, { notice: SUBSCRIPTION_NOTICES.subscription_created, portalToken: made.portalToken });
    },
  );

  // ---- Plans: the list, making one, archiving one.
  /** The currencies a plan's price may be in: the store's coins, then the fiat currencies Kassa prices. */
  const currencies = async (storeId: string) => [...new Set([...(await listStoreMethods(pool, storeId)).map((m) => m.coin_symbol), ...FIAT_CURRENCIES])];
  const showPlans = async (ctx: Ctx, status: number, extra: { form?: SubscriptionFormState; notice?: string | null } = {}) => {
    const store = ctx.state.store;
    const [plans, offered] = await Promise.all([listPlans(pool, store.id), currencies(store.id)]);
    page(ctx, status, plansPage({ root, viewer: ctx.state.viewer, store, plans, currencies: offered, ...extra }));
  };

  dash.store.get('/plans', async (ctx) => {
    await showPlans(ctx, 200, { notice: noticeOf(ctx) });
  });

  dash.store.post<{ form: PlanForm }>(
    '/plans',
    {
      ...manage,
      form: planForm,
      refused: (ctx, problems) => showPlans(ctx, 400, { form: { values: typed(ctx), problems: reword(problems, PLAN_FIELDS) } }),
    },
    async (ctx) => {
      const { intervalCount, trialDays, graceDays, reminderDays, ...rest } = ctx.state.form;
      const whole = (value: string | undefined) => (value !== undefined ? Number(value) : undefined);
      const request = {
        ...rest,
        ...(intervalCount !== undefined ? { intervalCount: whole(intervalCount) } : {}),
        ...(trialDays !== undefined ? { trialDays: whole(trialDays) } : {}),
        ...(graceDays !== undefined ? { graceDays: whole(graceDays) } : {}),
        ...(reminderDays !== undefined ? { reminderDays: whole(reminderDays) } : {}),
      };
      try {
        planRequest(request);
        await createDashboardPlan(pool, config.tonNetwork, ctx.state.actor, ctx.state.store.id, request, deps.now());
      } catch (error) {
        if (!(error instanceof KassaError)) throw error;
        return showPlans(ctx, 400, { form: refusal(ctx, error, PLAN_FIELDS) });
      }
      redirect(ctx, paths.store(ctx.state.store.id).plans('notice=plan_created'));
    },
  );

  const planParams = { params: uuidParams('planId') };
  dash.store.post<{ params: { planId: string } }>('/plans/:planId/archive', { ...manage, ...planParams, form: emptyForm }, async (ctx) => {
    const plan = await archiveDashboardPlan(pool, ctx.state.actor, ctx.state.store.id, ctx.state.params.planId, deps.now());
    if (!plan) return notFound(ctx);
    redirect(ctx, paths.store(ctx.state.store.id).plans('notice=plan_archived'));
  });

  // ---- A subscription: its page, adding credit, cancelling.
  const showSubscription = async (
    ctx: Ctx,
    status: number,
    id: string,
    extra: { creditForm?: SubscriptionFormState; cancelProblems?: Record<string, string>; notice?: string | null; portalToken?: string } = {},
  ) => {
    const store = ctx.state.store;
    const subscription = await findSubscription(pool, store.id, id, deps.now());
    if (!subscription) return notFound(ctx);
    const [plan, ledger, payments] = await Promise.all([
      findPlan(pool, store.id, subscription.plan_id),
      listLedger(pool, subscription.id),
      subscriptionPayments(pool, store.id, subscription.id),
    ]);
    const { portalToken, ...shown } = extra;
    const presented = presentSubscription(subscription, config, portalToken);
    page(
      ctx,
      status,
      subscriptionPage({
        root,
        viewer: ctx.state.viewer,
        store,
        subscription,
        plan: plan!,
        ledger,
        payments,
        portalUrl: presented.portalURL ?? null,
        checkoutUrl: presented.checkoutURL ?? null,
        ...shown,
      }),
    );
  };

  const subscriptionParams = { params: uuidParams('subscriptionId') };
  dash.store.get<{ params: { subscriptionId: string } }>('/subscriptions/:subscriptionId', subscriptionParams, async (ctx) => {
    await showSubscription(ctx, 200, ctx.state.params.subscriptionId, { notice: noticeOf(ctx) });
  });

  dash.store.post<{ params: { subscriptionId: string }; form: CreditForm }>(
    '/subscriptions/:subscriptionId/credits',
    {
      ...manage,
      ...subscriptionParams,
      form: creditForm,
      refused: (ctx, problems) =>
        showSubscription(ctx, 400, ctx.state.params.subscriptionId, { creditForm: { values: typed(ctx), problems: reword(problems, CREDIT_FIELDS) } }),
    },
    async (ctx) => {
      const { store, actor, params, form } = ctx.state;
      try {
        await creditDashboardSubscription(pool, engine, actor, store.id, params.subscriptionId, form, deps.now());
      } catch (error) {
        if (!(error instanceof KassaError)) throw error;
        if (error.code === 'subscription_not_found') return notFound(ctx);
        return showSubscription(ctx, 400, params.subscriptionId, { creditForm: refusal(ctx, error, CREDIT_FIELDS) });
      }
      redirect(ctx, paths.store(store.id).subscription(params.subscriptionId, 'notice=credit_added'));
    },
  );

  // A new portal link (the old one stops working at once), shown on the page this once.
  dash.store.post<{ params: { subscriptionId: string } }>(
    '/subscriptions/:subscriptionId/portal',
    { ...manage, ...subscriptionParams, form: emptyForm },
    async (ctx) => {
      const { store, actor, params } = ctx.state;
      const token = await reissueDashboardPortal(pool, actor, store.id, params.subscriptionId, deps.now());
      if (token === null) return notFound(ctx);
      await showSubscription(ctx, 200, params.subscriptionId, { notice: SUBSCRIPTION_NOTICES.portal_reissued, portalToken: token });
    },
  );

  dash.store.post<{ params: { subscriptionId: string }; form: CancelForm }>(
    '/subscriptions/:subscriptionId/cancel',
    {
      ...manage,
      ...subscriptionParams,
      form: cancelForm,
      refused: (ctx, problems) => showSubscription(ctx, 400, ctx.state.params.subscriptionId, { cancelProblems: reword(problems, ['when']) }),
    },
    async (ctx) => {
      const { store, actor, params, form } = ctx.state;
      const atPeriodEnd = form.when === 'period_end';
      try {
        await cancelDashboardSubscription(pool, engine, actor, store.id, params.subscriptionId, atPeriodEnd, deps.now());
      } catch (error) {
        if (!(error instanceof KassaError)) throw error;
        if (error.code === 'subscription_not_found') return notFound(ctx);
        return showSubscription(ctx, 409, params.subscriptionId, { cancelProblems: { form: error.message } });
      }
      redirect(ctx, paths.store(store.id).subscription(params.subscriptionId, atPeriodEnd ? 'notice=cancel_at_period_end' : 'notice=cancelled'));
    },
  );
}
