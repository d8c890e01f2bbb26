// The dashboard's shared steps (issue 24): the page writer, the session cookie, and the middleware
// every dashboard route names — HTML errors, the form parser (koa-body), the same-origin check, the
// session, the store membership and the owner check. dashboard.ts and each area's routes file
// (dashboard<Area>.ts) take them from dashboardSteps(deps), so a new page adds a file, not a copy.
import type { Middleware, ParameterizedContext } from 'koa';
import { koaBody } from 'koa-body';
import { isDatabaseUnavailable } from '../../db/pool.ts';
import { KassaError, statusOf } from '../../errors.ts';
import { isUuid } from '../../uuid.ts';
import { type Actor, recordAudit } from '../../dashboard/audit.ts';
import { DASHBOARD_CSP, messagePage, type StoreContext, type Viewer } from '../../dashboard/pages.ts';
import { membershipsOf, roleIn, type Role } from '../../dashboard/people.ts';
import { findSession, type Session, SESSION_MAX_MS } from '../../dashboard/sessions.ts';
import type { AppDeps, KassaState } from '../context.ts';
import { unsafeInBody } from '../plainText.ts';

/** Where the dashboard's routes are mounted (links add BASE_URL's own path before it). */
export const DASHBOARD_PATH = '/dashboard';

export interface DashboardState extends KassaState {
  session?: Session;
  actor?: Actor;
  viewer?: Viewer;
  store?: StoreContext;
}
export type DashboardCtx = ParameterizedContext<DashboardState>;
type Ctx = DashboardCtx;

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

export type DashboardSteps = ReturnType<typeof dashboardSteps>;

export function dashboardSteps(deps: AppDeps) {
  const { pool, config } = deps;
  const base = new URL(config.baseUrl);
  const root = `${base.pathname.replace(/\/+$/, '')}${DASHBOARD_PATH}`;
  // Secure off loopback (a browser keeps no Secure cookie over plain http://127.0.0.1); with Secure,
  // the __Host- prefix pins the cookie to this host and path /.
  const secure = !LOOPBACK.test(base.hostname);
  const cookieName = secure ? '__Host-kassa_dashboard' : 'kassa_dashboard';
  const R = DASHBOARD_PATH;

  const setSessionCookie = (ctx: Ctx, token: string | null) => {
    const attributes = [
      'Path=/',
      'HttpOnly',
      'SameSite=Strict',
      ...(secure ? ['Secure'] : []),
      `Max-Age=${token === null ? 0 : Math.floor(SESSION_MAX_MS / 1000)}`,
    ];
    ctx.append('Set-Cookie', `${cookieName}=${token ?? ''}; ${attributes.join('; ')}`);
  };
  const sessionToken = (ctx: Ctx): string | null => {
    for (const part of (ctx.get('Cookie') || '').split(';')) {
      const [name, ...value] = part.trim().split('=');
      if (name === cookieName) return value.join('=');
    }
    return null;
  };
  const clientOf = (ctx: Ctx): Pick<Actor, 'clientAddress' | 'userAgent'> => ({ clientAddress: ctx.ip || null, userAgent: ctx.get('User-Agent') || null });

  const page = (ctx: Ctx, status: number, body: string) => {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Security-Policy', DASHBOARD_CSP);
    // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with a form,
    // which the same-origin check would refuse; other sites still get no referrer.
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.body = body;
  };
  const message = (ctx: Ctx, status: number, title: string, text: string, signInLink = false) =>
    page(ctx, status, messagePage({ root, title, text, viewer: ctx.state.viewer ?? null, store: ctx.state.store ?? null, signIn: signInLink }));
  const notFound = (ctx: Ctx) => message(ctx, 404, 'Not found', 'There is nothing here, or it is not yours to see.');
  const redirect = (ctx: Ctx, location: string) => {
    ctx.status = 303;
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(location);
  };

  // ---- Steps.
  /** Every error below is a page, never the JSON envelope. */
  const htmlErrors: Middleware<DashboardState> = async (ctx, next) => {
    try {
      await next();
    } catch (caught) {
      if (isDatabaseUnavailable(caught)) {
        ctx.state.log.warn({ err: caught }, 'database unavailable');
        ctx.set('Retry-After', '5');
        message(ctx, 503, 'Unavailable', 'The dashboard cannot reach its database right now. Try again in a moment.');
      } else if (caught instanceof KassaError && caught.code === 'rate_limit_exceeded') {
        // The app's per-client limit (guards.clientLimit): a page with Retry-After, not the JSON envelope.
        const seconds = caught.details.retryAfterSeconds ?? 1;
        ctx.set('Retry-After', String(seconds));
        message(ctx, 429, 'Too many requests', `Too many requests from your address. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`);
      } else if (caught instanceof KassaError && (caught.code === 'payload_too_large' || caught.code === 'unsupported_media_type')) {
        message(ctx, 400, 'Not accepted', 'The form could not be read.');
      } else if (caught instanceof KassaError && statusOf(caught.code) === 400) {
        // A refusal the domain words for people (the form's text under the unsafe-text rule, say).
        message(ctx, 400, 'Not accepted', caught.message);
      } else if (
        (caught as { status?: number }).status === 413 ||
        (caught as { status?: number }).status === 400 ||
        (caught as { status?: number }).status === 415
      ) {
        message(ctx, 400, 'Not accepted', 'The form could not be read.');
      } else {
        ctx.state.log.error({ err: caught }, 'unexpected error on the dashboard');
        message(ctx, 500, 'Something went wrong', 'The page could not be made. Try again; if it keeps failing, tell the operator.');
      }
    }
  };
  /** Forms only (application/x-www-form-urlencoded), at most 16 KiB. */
  const parseForm = koaBody({
    urlencoded: true,
    json: false,
    text: false,
    multipart: false,
    formLimit: '16kb',
    encoding: 'utf-8',
  }) as unknown as Middleware<DashboardState>;
  /** The form, parsed, under the rule every route keeps (http/plainText.ts): no U+0000, no lone surrogate. */
  const form: Middleware<DashboardState> = async (ctx, next) => {
    await parseForm(ctx, async () => {
      const unsafe = unsafeInBody(ctx.request.body);
      if (unsafe) throw unsafe;
      await next();
    });
  };
  /**
   * CSRF: a POST is taken only from a page of this origin — its Origin header must be the
   * dashboard's own (BASE_URL's, or the Host it was sent to). The session cookie is SameSite=Strict
   * as well, so another site's form carries no session; this refuses it even before that.
   */
  const sameOrigin: Middleware<DashboardState> = async (ctx, next) => {
    const origin = ctx.get('Origin');
    // (Koa 3's ctx.origin is the Origin header itself: the request's own origin is made here.)
    if (origin === '' || (origin !== base.origin && origin !== `${ctx.protocol}://${ctx.host}`)) {
      message(ctx, 403, 'Refused', 'This form was not sent from the dashboard itself (cross-site request refused).');
      return;
    }
    await next();
  };
  const signedIn: Middleware<DashboardState> = async (ctx, next) => {
    const token = sessionToken(ctx);
    const session = token ? await findSession(pool, token, deps.now()) : null;
    if (!session) {
      if (token) setSessionCookie(ctx, null);
      if (ctx.method === 'GET') redirect(ctx, `${root}/sign-in?next=${encodeURIComponent(ctx.originalUrl)}`);
      else message(ctx, 401, 'Signed out', 'Your session has ended. Sign in again.', true);
      return;
    }
    ctx.state.session = session;
    ctx.state.actor = { userId: session.userId, name: session.email, ...clientOf(ctx) };
    ctx.state.viewer = { email: session.email, memberships: await membershipsOf(pool, session.userId) };
    await next();
  };
  /** The store of the path must be one the user is a member of; otherwise it does not exist for them. */
  const member: Middleware<DashboardState> = async (ctx, next) => {
    const storeId = (ctx.params as { storeId?: string }).storeId ?? '';
    const membership = isUuid(storeId) ? ctx.state.viewer!.memberships.find((m) => m.storeId === storeId.toLowerCase()) : undefined;
    if (!membership) return notFound(ctx);
    ctx.state.store = { id: membership.storeId, name: membership.storeName, role: membership.role };
    await next();
  };
  /** Actions that change money or access: owners only, checked again in the database (not only from the page's data). */
  const owner =
    (refused: 'refund.refused' | 'webhook.refused' | null): Middleware<DashboardState> =>
    async (ctx, next) => {
      const role: Role | null = await roleIn(pool, ctx.state.session!.userId, ctx.state.store!.id);
      if (role !== 'owner') {
        if (refused) {
          await recordAudit(
            pool,
            ctx.state.actor!,
            { storeId: ctx.state.store!.id, action: refused, subject: (ctx.params as { paymentId?: string }).paymentId ?? null, detail: { role } },
            deps.now(),
          );
        }
        message(ctx, 403, 'Not allowed', 'Only an owner of this store can do that. Nothing was changed.');
        return;
      }
      await next();
    };
  const safeNext = (value: unknown): string =>
    typeof value === 'string' && value.startsWith(`${root}/`) && !value.startsWith('//') && !/[\\\r\n]/.test(value) ? value : `${root}/`;
  const field = (ctx: Ctx, name: string): string => {
    const value = (ctx.request.body as Record<string, unknown> | undefined)?.[name];
    return typeof value === 'string' ? value : '';
  };

  return {
    root,
    /** The dashboard's route prefix (DASHBOARD_PATH) and a store's (`${R}/stores/:storeId`). */
    R,
    S: `${R}/stores/:storeId`,
    setSessionCookie,
    sessionToken,
    clientOf,
    page,
    message,
    notFound,
    redirect,
    htmlErrors,
    form,
    sameOrigin,
    signedIn,
    member,
    owner,
    safeNext,
    field,
  };
}
