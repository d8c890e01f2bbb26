// The dashboard's Store settings (issue 24): every member sees the page, owners change the store
// through the command `kassa store update` runs (dashboard/settings.ts changeStore: the same
// validation, the treasury's included, and the audit log, in one transaction). A refusal is the
// page again with the message beside the field, and nothing changed.
import { textColourOn } from '../../checkout/page.ts';
import { strictCsp } from '../../web/csp.ts';
import { changeStore, checkTreasury, formMessage, type StoreField } from '../../dashboard/settings.ts';
import { createJettonWalletLookup, ownApiUrl } from '../../checkout/jettonWallets.ts';
import { ChainApiError } from '../../chain/apiError.ts';
import { FormProblem } from '../../errors.ts';
import { type AppearanceValues, DEFAULT_ACCENT, previewCss, previewLogo, settingsPage, type SettingsPageInput } from '../../dashboard/settingsPage.ts';
import { catalogueMethods, findStore } from '../../stores/stores.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import type { AppDeps } from '../context.ts';
import { telegramMiniAppUrl } from '../../telegram/telegramUrls.ts';
import {
  type AppearanceForm,
  appearanceForm,
  type MethodsForm,
  methodsForm,
  type RefundWindowForm,
  refundWindowForm,
  type TelegramForm,
  telegramForm,
  type TreasuryForm,
  treasuryForm,
  type EmbedForm,
  embedForm,
  type DustForm,
  dustForm,
} from './dashboard.schema.ts';
import type { DashboardCtx, DashboardRouter, OfStore } from './dashboardSteps.ts';

type Ctx = DashboardCtx & { state: OfStore };
type Extra = Omit<SettingsPageInput, 'root' | 'viewer' | 'store' | 'saved' | 'catalogue'>;

const NOTICES: Record<string, string> = {
  appearance: 'Appearance saved: the checkout shows it from now on.',
  methods: 'Payment methods saved: new checkouts offer these.',
  treasury: "Treasury saved: the store's money is swept there from now on.",
  'refund-window': 'Refund window saved: sales completed from now on stay refundable from their deposits that long.',
  telegram: 'Telegram saved: payments created from now on carry the Mini App link.',
  embed: 'Sites saved: their pages may show the payment element from now on.',
  dust: 'Saved: smaller unmatched amounts are listed without an alert.',
};

export function dashboardSettingsRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool, config } = deps;
  const { root, page, redirect, notFound } = dash.steps;
  const paths = dashboardPaths(root);
  const jettonWallets = createJettonWalletLookup(config, pool);

  const show = async (ctx: Ctx, status: number, extra: Extra = {}) => {
    const [saved, catalogue] = await Promise.all([findStore(pool, ctx.state.store.id), catalogueMethods(pool)]);
    if (!saved) return notFound(ctx);
    page(
      ctx,
      status,
      settingsPage({
        root,
        viewer: ctx.state.viewer,
        store: ctx.state.store,
        saved,
        catalogue,
        miniAppUrl: telegramMiniAppUrl(config.checkoutBaseUrl),
        network: config.tonNetwork,
        ...extra,
      }),
    );
    // The preview shows the logo as the checkout does: its origin alone is added to img-src.
    const logo = previewLogo(extra.appearance?.logoUrl ?? saved.logoUrl ?? '');
    if (logo) ctx.set('Content-Security-Policy', strictCsp({ imageOrigin: logo.origin }));
  };

  /** Runs the store's update command; a refusal shows the page again (400) with what was typed. */
  const change = async (ctx: Ctx, given: Record<string, string>, typed: Extra, section: string, field?: StoreField) => {
    try {
      await changeStore(pool, { storeId: ctx.state.store.id, given, network: config.tonNetwork, actor: ctx.state.actor, now: deps.now() });
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      const flag = (error.field ?? field ?? 'appearance') as StoreField | 'appearance';
      return show(ctx, 400, { ...typed, problem: { field: flag, message: formMessage(error) } });
    }
    redirect(ctx, paths.store(ctx.state.store.id).settings(`saved=${section}`));
  };

  dash.store.get('/settings', async (ctx) => {
    const saved = typeof ctx.query.saved === 'string' && Object.hasOwn(NOTICES, ctx.query.saved) ? NOTICES[ctx.query.saved] : null;
    await show(ctx, 200, { notice: saved });
  });

  // The preview's colour, and the text colour the checkout would put on it.
  dash.store.get('/settings/preview.css', async (ctx) => {
    const asked = typeof ctx.query.accent === 'string' ? ctx.query.accent.toLowerCase() : '';
    const accent = /^#[0-9a-f]{6}$/.test(asked) ? asked : DEFAULT_ACCENT;
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.body = previewCss(accent, textColourOn(accent));
  });

  /** A form the schema refuses (a field far too long, say): the page again, the problem beside the section. */
  const refused = (field: StoreField | 'appearance') => (ctx: Ctx, problems: Record<string, string>) =>
    show(ctx, 400, { problem: { field, message: Object.values(problems).join(' ') } });

  dash.store.post<{ form: AppearanceForm }>(
    '/settings/appearance',
    { can: 'settings.change', form: appearanceForm, refused: refused('appearance') },
    async (ctx) => {
      const form = ctx.state.form;
      const typed: AppearanceValues = {
        name: form.name ?? '',
        displayName: form['display-name'] ?? '',
        logoUrl: form['logo-url'] ?? '',
        accentColor: form['accent-color'] ?? '',
      };
      // Preview: the page with the typed values, nothing saved.
      if (form.intent === 'preview') return show(ctx, 200, { appearance: typed, previewing: true });
      const given = { name: typed.name, 'display-name': typed.displayName, 'logo-url': typed.logoUrl, 'accent-color': typed.accentColor };
      await change(ctx, given, { appearance: typed }, 'appearance');
    },
  );

  dash.store.post<{ form: MethodsForm }>('/settings/methods', { can: 'settings.change', form: methodsForm, refused: refused('methods') }, async (ctx) => {
    const { methods } = ctx.state.form;
    const chosen = (Array.isArray(methods) ? methods : [methods]).filter((m): m is string => typeof m === 'string' && m !== '');
    await change(ctx, { methods: chosen.join(',') }, { methods: chosen }, 'methods');
  });

  dash.store.post<{ form: TreasuryForm }>('/settings/treasury', { can: 'settings.change', form: treasuryForm, refused: refused('treasury') }, async (ctx) => {
    const treasury = (ctx.state.form.treasury ?? '').trim();
    const settlement = ctx.state.form.settlement;
    // One change: the store command checks the two together (treasury settlement needs a treasury).
    const given = (to: string) => ({ treasury: to, ...(settlement === undefined ? {} : { settlement }) });
    // Emptied: sales stay in Kassa's wallets from now on (nothing to confirm).
    if (treasury === '') return change(ctx, given(treasury), given(treasury), 'treasury');
    // An address Kassa knows to be wrong is refused; a right one is shown back as the owner's wallet
    // app writes it, and saved only by the post that confirms it.
    const origin = ownApiUrl(ctx.req.socket);
    // A chain API that cannot answer now leaves the kind unknown: Kassa refuses only what it knows to be wrong.
    const kindOf = (raw: string) =>
      jettonWallets.tokenContractKind(raw, origin).catch((error: unknown) => {
        if (error instanceof ChainApiError) return null;
        throw error;
      });
    const checked = await checkTreasury(pool, treasury, config.tonNetwork, kindOf);
    if ('problem' in checked) return show(ctx, 400, { treasury, settlement, problem: { field: 'treasury', message: checked.problem } });
    if (ctx.state.form.confirmed !== 'yes') return show(ctx, 200, { treasury, settlement, treasuryConfirm: checked.forms });
    await change(ctx, given(checked.forms.shown), given(treasury), 'treasury');
  });

  dash.store.post<{ form: RefundWindowForm }>(
    '/settings/refund-window',
    { can: 'settings.change', form: refundWindowForm, refused: refused('refund-window-days') },
    async (ctx) => {
      const days = ctx.state.form['refund-window-days'] ?? '';
      await change(ctx, { 'refund-window-days': days }, { refundWindowDays: days }, 'refund-window');
    },
  );

  dash.store.post<{ form: TelegramForm }>(
    '/settings/telegram',
    { can: 'settings.change', form: telegramForm, refused: refused('telegram-bot') },
    async (ctx) => {
      const form = ctx.state.form;
      const typed = { bot: form['telegram-bot'] ?? '', app: form['telegram-app'] ?? '', botId: form['telegram-bot-id'] ?? '' };
      await change(ctx, { 'telegram-bot': typed.bot, 'telegram-app': typed.app, 'telegram-bot-id': typed.botId }, { telegram: typed }, 'telegram');
    },
  );

  dash.store.post<{ form: EmbedForm }>('/settings/embed', { can: 'settings.change', form: embedForm, refused: refused('embed-origins') }, async (ctx) => {
    const origins = ctx.state.form['embed-origins'] ?? '';
    await change(ctx, { 'embed-origins': origins }, { embedOrigins: origins }, 'embed', 'embed-origins');
  });

  dash.store.post<{ form: DustForm }>('/settings/dust', { can: 'settings.change', form: dustForm, refused: refused('unmatched-dust') }, async (ctx) => {
    const dust = ctx.state.form['unmatched-dust'] ?? '';
    await change(ctx, { 'unmatched-dust': dust }, { unmatchedDust: dust }, 'dust', 'unmatched-dust');
  });
}
