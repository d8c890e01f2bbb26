// First-run setup in the browser and an owner's further stores (issue 47 item 1; the rules are
// src/dashboard/setup.ts's). GET /dashboard/setup offers "Set up Kassa" only while Kassa is not set
// up (otherwise: not found); the dashboard's root and sign-in page lead there meanwhile. An owner's
// "New store" is /dashboard/new-store. The pipeline is the dashboard router's (dashboardSteps.ts).
import type { Next } from 'koa';
import { FormProblem } from '../../errors.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import { completeSetup, createOwnedStore, mayCreateStore, SetupClosed, setupOpen } from '../../dashboard/setup.ts';
import { DEFAULT_REFUND_WINDOW_DAYS, newStorePage, setupPage, type StoreEssentials } from '../../dashboard/setupPage.ts';
import { catalogueMethods, DEFAULT_METHODS, type MethodRef, parseMethodList } from '../../stores/stores.ts';
import type { AppDeps } from '../context.ts';
import { type NewStoreForm, newStoreForm, type SetupForm, setupForm } from './dashboard.schema.ts';
import type { DashboardCtx, DashboardRouter } from './dashboardSteps.ts';

/** The store's essentials as the form sent them (checked by `essentials`), for the form shown again. */
function typedEssentials(form: NewStoreForm | undefined): StoreEssentials {
  const methods = form?.methods === undefined ? [] : Array.isArray(form.methods) ? form.methods : [form.methods];
  return { name: form?.name ?? '', methods, refundWindowDays: form?.refundWindowDays ?? '' };
}

const DEFAULTS: StoreEssentials = { name: '', methods: DEFAULT_METHODS.split(','), refundWindowDays: DEFAULT_REFUND_WINDOW_DAYS };

/** The coins and the refund window as a store is made with them, or FormProblem beside the field. */
function essentials(typed: StoreEssentials, catalogue: readonly string[]): { methods: MethodRef[]; refundWindowDays: number } {
  const chosen = typed.methods.filter((m) => catalogue.includes(m));
  if (chosen.length === 0 || chosen.length !== typed.methods.length) throw new FormProblem('Choose at least one coin the store accepts.', 'methods');
  const days = typed.refundWindowDays.trim();
  if (!/^\d{1,2}$/.test(days) || Number(days) > 90) throw new FormProblem('The refund window is a whole number of days from 0 to 90.', 'refundWindowDays');
  return { methods: parseMethodList(chosen.join(',')), refundWindowDays: Number(days) };
}

export function dashboardSetupRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool } = deps;
  const { root, page, redirect, notFound, clientOf, setSessionCookie } = dash.steps;
  const paths = dashboardPaths(root);

  // While Kassa is not set up, the dashboard's front door leads to the setup (after it: as before).
  const toSetupWhileOpen = async (ctx: DashboardCtx, next: Next) => {
    if (await setupOpen(pool)) return redirect(ctx, paths.setup());
    await next();
  };
  dash.anyone.get('/', toSetupWhileOpen);
  dash.anyone.get('/sign-in', toSetupWhileOpen);

  const showSetup = async (ctx: DashboardCtx, status: number, typed: SetupForm, problems: Record<string, string> = {}) =>
    page(
      ctx,
      status,
      setupPage({
        root,
        catalogue: await catalogueMethods(pool),
        typed: { ...typedEssentials(typed), code: typed.code ?? '', email: typed.email ?? '' },
        problems,
      }),
    );
  dash.anyone.get('/setup', async (ctx) => {
    if (!(await setupOpen(pool))) return notFound(ctx);
    await showSetup(ctx, 200, { ...DEFAULTS, methods: [...DEFAULTS.methods], code: '', email: '' });
  });
  dash.anyone.post<{ form: SetupForm }>(
    '/setup',
    {
      form: setupForm,
      refused: async (ctx, problems) => {
        if (!(await setupOpen(pool))) return notFound(ctx);
        await showSetup(ctx, 400, (ctx.request.body ?? {}) as SetupForm, problems);
      },
    },
    async (ctx) => {
      const typed = ctx.state.form;
      const { password = '', confirm = '' } = typed;
      const now = deps.now();
      let done: Awaited<ReturnType<typeof completeSetup>>;
      try {
        const catalogue = await catalogueMethods(pool);
        const store = essentials(typedEssentials(typed), catalogue);
        if (password !== confirm) throw new FormProblem('The two passwords differ.', 'confirm');
        done = await completeSetup(pool, {
          code: typed.code ?? '',
          storeName: typed.name ?? '',
          ...store,
          email: typed.email ?? '',
          password,
          actor: clientOf(ctx),
          now,
        });
      } catch (error) {
        if (error instanceof SetupClosed) {
          return dash.steps.message(
            ctx,
            409,
            'Kassa is set up already',
            'Someone set Kassa up already (in another browser or tab a moment ago, or from the command line), so this form changed nothing. Sign in with the owner’s email and password.',
            true,
          );
        }
        if (!(error instanceof FormProblem)) throw error;
        // The method list refused in the command line's words (stores.ts): the form's own.
        if (error.field === 'methods') return showSetup(ctx, 400, typed, { methods: 'Choose at least one coin the store accepts.' });
        if (!(await setupOpen(pool))) return notFound(ctx);
        return showSetup(ctx, error.field === 'code' ? 403 : 400, typed, { [error.field ?? 'form']: error.message });
      }
      setSessionCookie(ctx, done.token);
      redirect(ctx, paths.store(done.storeId).home());
    },
  );

  // ---- An owner's further store.
  const showNewStore = async (
    ctx: DashboardCtx & { state: { viewer: NonNullable<DashboardCtx['state']['viewer']> } },
    status: number,
    typed: StoreEssentials,
    problems: Record<string, string> = {},
  ) => page(ctx, status, newStorePage({ root, viewer: ctx.state.viewer, catalogue: await catalogueMethods(pool), typed, problems }));
  const notOwner = (ctx: DashboardCtx) => dash.steps.message(ctx, 403, 'Not allowed', 'Only an owner of a store can make another store. Nothing was changed.');
  dash.signedIn.get('/new-store', async (ctx) => {
    if (!mayCreateStore(ctx.state.viewer.memberships)) return notOwner(ctx);
    await showNewStore(ctx, 200, DEFAULTS);
  });
  dash.signedIn.post<{ form: NewStoreForm }>(
    '/new-store',
    { form: newStoreForm, refused: (ctx, problems) => showNewStore(ctx, 400, typedEssentials(ctx.request.body as NewStoreForm), problems) },
    async (ctx) => {
      const typed = typedEssentials(ctx.state.form);
      let made: { storeId: string };
      try {
        const store = essentials(typed, await catalogueMethods(pool));
        made = await createOwnedStore(pool, { userId: ctx.state.session.userId, name: typed.name, ...store, actor: ctx.state.actor, now: deps.now() });
      } catch (error) {
        if (!(error instanceof FormProblem)) throw error;
        if (error.field === 'methods') return showNewStore(ctx, 400, typed, { methods: 'Choose at least one coin the store accepts.' });
        if (error.field === 'form') return notOwner(ctx);
        return showNewStore(ctx, 400, typed, { [error.field ?? 'form']: error.message });
      }
      redirect(ctx, paths.store(made.storeId).home());
    },
  );
}
