// The dashboard's Store settings (issue 24): every member sees the page, owners change the store
// through the command `kassa store update` runs (dashboard/settings.ts changeStore: the same
// validation, the treasury's included, and the audit log, in one transaction). A refusal is the
// page again with the message beside the field, and nothing changed.
import type Router from '@koa/router';
import { strictCsp, textColourOn } from '../../checkout/page.ts';
import { changeStore, formMessage, type StoreField } from '../../dashboard/settings.ts';
import { type AppearanceValues, DEFAULT_ACCENT, previewCss, previewLogo, settingsPage, type SettingsPageInput } from '../../dashboard/settingsPage.ts';
import { catalogueMethods, findStore, StoreInputError } from '../../stores/stores.ts';
import type { AppDeps, KassaState } from '../context.ts';
import type { DashboardCtx, DashboardSteps } from './dashboardSteps.ts';

type Ctx = DashboardCtx;
type Extra = Omit<SettingsPageInput, 'root' | 'viewer' | 'store' | 'saved' | 'catalogue'>;

const NOTICES: Record<string, string> = {
  appearance: 'Appearance saved: the checkout shows it from now on.',
  methods: 'Payment methods saved: new checkouts offer these.',
  treasury: "Treasury saved: the store's money is swept there from now on.",
  'refund-window': 'Refund window saved: sales completed from now on stay refundable from their deposits that long.',
};

export function dashboardSettingsRoutes(router: Router<KassaState>, deps: AppDeps, steps: DashboardSteps): void {
  const { pool, config } = deps;
  const { root, S, page, redirect, htmlErrors, form, sameOrigin, signedIn, member, owner, field, notFound } = steps;

  const show = async (ctx: Ctx, status: number, extra: Extra = {}) => {
    const [saved, catalogue] = await Promise.all([findStore(pool, ctx.state.store!.id), catalogueMethods(pool)]);
    if (!saved) return notFound(ctx);
    page(ctx, status, settingsPage({ root, viewer: ctx.state.viewer!, store: ctx.state.store!, saved, catalogue, ...extra }));
    // The preview shows the logo as the checkout does: its origin alone is added to img-src.
    const logo = previewLogo(extra.appearance?.logoUrl ?? saved.logoUrl ?? '');
    if (logo) ctx.set('Content-Security-Policy', strictCsp({ imageOrigin: logo.origin }));
  };

  /** Runs the store's update command; a refusal shows the page again (400) with what was typed. */
  const change = async (ctx: Ctx, given: Record<string, string>, typed: Extra, section: string) => {
    try {
      await changeStore(pool, { storeId: ctx.state.store!.id, given, network: config.tonNetwork, actor: ctx.state.actor!, now: deps.now() });
    } catch (error) {
      if (!(error instanceof StoreInputError)) throw error;
      const flag = (error.flag ?? 'appearance') as StoreField | 'appearance';
      return show(ctx, 400, { ...typed, problem: { field: flag, message: formMessage(error) } });
    }
    redirect(ctx, `${root}/stores/${ctx.state.store!.id}/settings?saved=${section}`);
  };

  router.get(`${S}/settings`, htmlErrors, signedIn, member, async (ctx: Ctx) => {
    const saved = typeof ctx.query.saved === 'string' && Object.hasOwn(NOTICES, ctx.query.saved) ? NOTICES[ctx.query.saved] : null;
    await show(ctx, 200, { notice: saved });
  });

  // The preview's colour, and the text colour the checkout would put on it.
  router.get(`${S}/settings/preview.css`, htmlErrors, signedIn, member, async (ctx: Ctx) => {
    const asked = typeof ctx.query.accent === 'string' ? ctx.query.accent.toLowerCase() : '';
    const accent = /^#[0-9a-f]{6}$/.test(asked) ? asked : DEFAULT_ACCENT;
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.body = previewCss(accent, textColourOn(accent));
  });

  router.post(`${S}/settings/appearance`, htmlErrors, sameOrigin, form, signedIn, member, owner(null), async (ctx: Ctx) => {
    const typed: AppearanceValues = {
      name: field(ctx, 'name'),
      displayName: field(ctx, 'display-name'),
      logoUrl: field(ctx, 'logo-url'),
      accentColor: field(ctx, 'accent-color'),
    };
    // Preview: the page with the typed values, nothing saved.
    if (field(ctx, 'intent') === 'preview') return show(ctx, 200, { appearance: typed, previewing: true });
    const given = { name: typed.name, 'display-name': typed.displayName, 'logo-url': typed.logoUrl, 'accent-color': typed.accentColor };
    await change(ctx, given, { appearance: typed }, 'appearance');
  });

  router.post(`${S}/settings/methods`, htmlErrors, sameOrigin, form, signedIn, member, owner(null), async (ctx: Ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const chosen = (Array.isArray(body.methods) ? body.methods : [body.methods]).filter((m): m is string => typeof m === 'string' && m !== '');
    await change(ctx, { methods: chosen.join(',') }, { methods: chosen }, 'methods');
  });

  router.post(`${S}/settings/treasury`, htmlErrors, sameOrigin, form, signedIn, member, owner(null), async (ctx: Ctx) => {
    const treasury = field(ctx, 'treasury');
    await change(ctx, { treasury }, { treasury }, 'treasury');
  });

  router.post(`${S}/settings/refund-window`, htmlErrors, sameOrigin, form, signedIn, member, owner(null), async (ctx: Ctx) => {
    const days = field(ctx, 'refund-window-days');
    await change(ctx, { 'refund-window-days': days }, { refundWindowDays: days }, 'refund-window');
  });
}
