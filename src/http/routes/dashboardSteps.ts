// The dashboard's pipeline (issues 24, 33): the page writer, the session cookie, and the steps every
// dashboard route passes through — installed by the dashboard's router (dashboardRouter, below), never
// named route by route. Every request under /dashboard: error pages, then the per-client limit. Every
// non-GET: the same-origin check, then the form parser (koa-body, the unsafe-text rule), unless the
// route opts out by name (BTCPay's global antiforgery filter, Outline's `api.use(verifyCSRFToken())`).
// Then the stage the route is registered at: `anyone`, `signedIn` (the session: SignedIn<>), `store`
// (a store the person is a member of: OfStore<>), `payment` (that store's payment: OfStorePayment<>);
// then `can` (dashboard/policy.ts, checked again in the database), the path parameters against their
// JSON Schema, the route's own steps, the query string and the form against theirs (http/validate.ts:
// the API's own, where the API has the field), and the handler, which reads typed state and never
// asserts it.
import type Router from '@koa/router';
import type { Middleware, Next, ParameterizedContext } from 'koa';
import { koaBody } from 'koa-body';
import { KassaError } from '../../errors.ts';
import { errorPages } from '../errorEnvelope.ts';
import { type Actor, recordAudit } from '../../dashboard/audit.ts';
import { DASHBOARD_REFERRER, messagePage, type StoreContext, type Viewer } from '../../dashboard/pages.ts';
import { membershipsOf, roleIn } from '../../dashboard/memberships.ts';
import { type Action, can, refusedAuditOf } from '../../dashboard/policy.ts';
import { findSession, type Session, SESSION_MAX_MS } from '../../dashboard/sessions.ts';
import { findStorePayment, type StorePayment } from '../../payments/view.ts';
import type { AppDeps, KassaState } from '../context.ts';
import type { Guards } from '../guards.ts';
import { readCookie } from '../cookies.ts';
import { unsafeInBody } from '../plainText.ts';
import { PAGE_CSP } from '../../web/csp.ts';
import { pageHeaders } from '../../web/page.ts';
import { DASHBOARD_PATH, dashboardPaths } from '../../dashboard/paths.ts';
import { bodyCheck, type ParamsDefinition, paramsCheck, type QueryDefinition, queryCheck } from '../validate.ts';

/** Where the dashboard's routes are mounted (links add BASE_URL's own path before it). */
export { DASHBOARD_PATH };

interface DashboardState extends KassaState {
  session?: Session;
  actor?: Actor;
  viewer?: Viewer;
  store?: StoreContext;
  /** Set by a route's form step: the form as its schema validated it. */
  form?: unknown;
}
export type DashboardCtx = ParameterizedContext<DashboardState>;
type Ctx = DashboardCtx;

type Input = { params?: unknown; query?: unknown; form?: unknown };
/** Behind the `signedIn` stage: the session, who acts (for audit rows) and what the header shows. */
export type SignedIn<In extends Input = Record<never, never>> = DashboardState & In & { session: Session; actor: Actor; viewer: Viewer };
/** Behind the `store` stage: the path's store is one the person is a member of (with their role). */
export type OfStore<In extends Input = Record<never, never>> = SignedIn<In> & { store: StoreContext };
/** Behind the `payment` stage: the path's payment is that store's. */
export type OfStorePayment<In extends Input = Record<never, never>> = OfStore<In> & { payment: StorePayment };

/** What a form step found wrong: the form field (or `form`) → the message. */
export type Problems = Record<string, string>;

/** Marks the same-origin step (read by test/structure/dashboard-pipeline.test.ts). */
export const ORIGIN_CHECK = Symbol('dashboard origin check');
/** Where a route's form and query steps keep their schemas (read by the dashboard's no-5xx fuzz). */
export const FORM_SCHEMA = Symbol('dashboard form schema');
export const QUERY_SCHEMA = Symbol('dashboard query schema');
/**
 * Marks the step that holds a store route's action (dashboard/policy.ts): its value is the action.
 * Read by test/structure/dashboard-permissions.test.ts, which posts as every role lacking it.
 */
export const ROUTE_ACTION = Symbol('dashboard route action');
/** Marks a route's named opt-out of the same-origin step: its value is the reason. */
export const ORIGIN_CHECK_OPT_OUT = Symbol('dashboard origin check opt-out');

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

type DashboardSteps = ReturnType<typeof dashboardSteps>;

export function dashboardSteps(deps: AppDeps) {
  const { pool, config } = deps;
  const base = new URL(config.baseUrl);
  const root = `${base.pathname.replace(/\/+$/, '')}${DASHBOARD_PATH}`;
  const paths = dashboardPaths(root);
  // Secure off loopback (a browser keeps no Secure cookie over plain http://127.0.0.1); with Secure,
  // the __Host- prefix pins the cookie to this host and path /.
  const secure = !LOOPBACK.test(base.hostname);
  const cookieName = secure ? '__Host-kassa_dashboard' : 'kassa_dashboard';

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
  const sessionToken = (ctx: Ctx): string | null => readCookie(ctx.get('Cookie') || '', cookieName);
  const clientOf = (ctx: Ctx): Pick<Actor, 'clientAddress' | 'userAgent'> => ({ clientAddress: ctx.ip || null, userAgent: ctx.get('User-Agent') || null });

  const page = (ctx: Ctx, status: number, body: string) => {
    ctx.status = status;
    // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with a form,
    // which the same-origin check would refuse; other sites still get no referrer.
    pageHeaders(ctx, { csp: PAGE_CSP, referrer: DASHBOARD_REFERRER });
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

  // ---- Steps every request under /dashboard passes through (installed once by dashboardRouter).
  /** Every error below is a page, never the JSON envelope. */
  /** Every error under /dashboard as a page: errorEnvelope.ts's one mapping (the API's status and headers), in the dashboard's look. */
  const htmlErrors = errorPages<DashboardState>((ctx, failed) => message(ctx, failed.status, failed.title, failed.text));
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
    let read = false;
    try {
      await parseForm(ctx, async () => {
        read = true;
        const unsafe = unsafeInBody(ctx.request.body);
        if (unsafe) throw unsafe;
        await next();
      });
    } catch (error) {
      // The form itself could not be read (koa-body's 413, 415 or 400): said as the catalogue's code.
      const status = (error as { status?: unknown }).status;
      if (read || typeof status !== 'number' || status < 400 || status >= 500) throw error;
      throw new KassaError(status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : 'malformed_request');
    }
  };
  /**
   * CSRF: a POST is taken only from a page of this origin — its Origin header must be the
   * dashboard's own (BASE_URL's, or the Host it was sent to). The session cookie is SameSite=Strict
   * as well, so another site's form carries no session; this refuses it even before that.
   */
  const sameOrigin: Middleware<DashboardState> = Object.assign(
    async (ctx: Ctx, next: () => Promise<unknown>) => {
      if (ctx.method === 'GET' || ctx.method === 'HEAD') return next();
      const origin = ctx.get('Origin');
      // (Koa 3's ctx.origin is the Origin header itself: the request's own origin is made here.)
      if (origin === '' || (origin !== base.origin && origin !== `${ctx.protocol}://${ctx.host}`)) {
        message(ctx, 403, 'Refused', 'This form was not sent from the dashboard itself (cross-site request refused).');
        return;
      }
      await next();
    },
    { [ORIGIN_CHECK]: true },
  );

  // ---- The stages.
  const signedIn: Middleware<DashboardState> = async (ctx, next) => {
    const token = sessionToken(ctx);
    const session = token ? await findSession(pool, token, deps.now()) : null;
    if (!session) {
      if (token) setSessionCookie(ctx, null);
      if (ctx.method === 'GET') redirect(ctx, paths.signIn(`next=${encodeURIComponent(ctx.originalUrl)}`));
      else message(ctx, 401, 'Signed out', 'Your session has ended. Sign in again.', true);
      return;
    }
    ctx.state.session = session;
    ctx.state.actor = { userId: session.userId, name: session.email, ...clientOf(ctx) };
    ctx.state.viewer = { email: session.email, memberships: await membershipsOf(pool, session.userId) };
    await next();
  };
  /** A path parameter that is not what its schema says names nothing: the not-found page. */
  const pathParams = (definition: ParamsDefinition): Middleware<DashboardState> => {
    const check = paramsCheck(definition);
    const names = Object.keys(definition.schema.properties);
    return async (ctx, next) => {
      let params: Record<string, string>;
      try {
        // Its own parameters only (a route's path also holds its stage's: storeId, paymentId).
        const all = (ctx as unknown as { params: Record<string, string> }).params;
        params = check(Object.fromEntries(names.filter((name) => Object.hasOwn(all, name)).map((name) => [name, all[name]!])));
      } catch (error) {
        if (error instanceof KassaError) return notFound(ctx);
        throw error;
      }
      Object.assign((ctx as unknown as { params: Record<string, string> }).params, params);
      ctx.state.params = { ...(ctx.state.params as object | undefined), ...params };
      await next();
    };
  };
  const storeIdOnly = pathParams(uuidParams('storeId'));
  /** The store of the path must be one the person is a member of; otherwise it does not exist for them. */
  const member: Middleware<SignedIn> = async (ctx, next) =>
    storeIdOnly(ctx, async () => {
      const storeId = (ctx.params as { storeId: string }).storeId;
      const membership = ctx.state.viewer.memberships.find((m) => m.storeId === storeId);
      if (!membership) return notFound(ctx);
      ctx.state.store = { id: membership.storeId, name: membership.storeName, role: membership.role };
      await next();
    });
  const paymentIdOnly = pathParams(uuidParams('paymentId'));
  /** The store's payment (another store's, or none, is not found — before anything else is read). */
  const storePayment: Middleware<OfStore> = async (ctx, next) =>
    paymentIdOnly(ctx, async () => {
      const payment = await findStorePayment(pool, ctx.state.store.id, (ctx.params as { paymentId: string }).paymentId);
      if (!payment) return notFound(ctx);
      ctx.state.payment = payment;
      await next();
    });
  /** The action's rule (dashboard/policy.ts), with the role read again from the database, not only from the page's data. */
  const allowed =
    (action: Action): Middleware<OfStore> =>
    async (ctx, next) => {
      const role = await roleIn(pool, ctx.state.session.userId, ctx.state.store.id);
      if (!can(role, action)) {
        const refused = refusedAuditOf(action);
        if (refused) {
          const subject = (ctx.params as { paymentId?: string }).paymentId ?? null;
          await recordAudit(pool, ctx.state.actor, { storeId: ctx.state.store.id, action: refused, subject, detail: { role } }, deps.now());
        }
        message(ctx, 403, 'Not allowed', 'Only an owner of this store can do that. Nothing was changed.');
        return;
      }
      await next();
    };
  /**
   * A query string under its schema (validate.ts's check); a refusal goes to `refused` with the
   * problem beside its parameter, or is the "Not accepted" page. Empty values are absent.
   */
  const queryStep = <S extends DashboardState>(definition: QueryDefinition, refused?: Refused<S>): Middleware<S> => {
    const check = queryCheck(definition);
    const step: Middleware<S> = async (ctx, next) => {
      try {
        ctx.state.query = check(present(ctx.query));
      } catch (error) {
        if (!(error instanceof KassaError) || !refused) throw error;
        return refused(ctx, problemsOf(error));
      }
      await next();
    };
    return Object.assign(step, { [QUERY_SCHEMA]: definition.schema });
  };
  /** The parsed form under its schema (the API's own where the API has the field); a refusal as the query's. */
  const formStep = <S extends DashboardState>(schema: object, refused?: Refused<S>): Middleware<S> => {
    const check = bodyCheck(schema);
    const step: Middleware<S> = async (ctx, next) => {
      try {
        ctx.state.form = check(present(ctx.request.body as Record<string, unknown> | undefined));
      } catch (error) {
        if (!(error instanceof KassaError) || !refused) throw error;
        return refused(ctx, problemsOf(error));
      }
      await next();
    };
    return Object.assign(step, { [FORM_SCHEMA]: schema });
  };
  const safeNext = (value: unknown): string =>
    typeof value === 'string' && value.startsWith(`${root}/`) && !value.startsWith('//') && !/[\\\r\n]/.test(value) ? value : paths.home;

  return {
    root,
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
    storePayment,
    allowed,
    pathParams,
    queryStep,
    formStep,
    safeNext,
  };
}

/** A refusal's page: the problems by form field. */
type Refused<S extends DashboardState> = (ctx: ParameterizedContext<S>, problems: Problems) => Promise<void> | void;

/** Uuid path parameters (lower-cased when valid), as the API's paymentIdParams. */
export const uuidParams = (...names: [string, ...string[]]): ParamsDefinition => ({
  schema: {
    type: 'object',
    additionalProperties: false,
    required: names,
    properties: Object.fromEntries(names.map((name) => [name, { type: 'string', format: 'uuid', errorCode: 'invalid_request' } as const])),
  },
});

/** A form's or query's fields without the empty ones (an empty input is a field not given), keys as sent. */
function present(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields ?? {})) {
    if (typeof value === 'string' && value.trim() === '') continue;
    out[name] = typeof value === 'string' ? value.trim() : value;
  }
  return out;
}

/** The KassaError of a schema's refusal as a form problem: its param is the form field (`form` when it names none). */
function problemsOf(error: KassaError): Problems {
  const field = error.param === undefined ? 'form' : error.param.split(/[.[]/)[0]!;
  return { [field]: error.message };
}

type Stage = 'anyone' | 'signedIn' | 'store' | 'payment';
type StateOf<S extends Stage, In extends Input> = S extends 'anyone'
  ? DashboardState & In
  : S extends 'signedIn'
    ? SignedIn<In>
    : S extends 'store'
      ? OfStore<In>
      : OfStorePayment<In>;
type Handler<State> = (ctx: ParameterizedContext<State>, next: Next) => Promise<void> | void;

/** What a route adds to its stage's steps, in this order after them. */
interface RouteOptions<State extends DashboardState> {
  /**
   * The action's rule (dashboard/policy.ts); a `store` or `payment` stage only, where every route
   * that changes state names one (a GET without it is reading the store, which every member may).
   */
  can?: Action;
  /** The route's own path parameters (beyond storeId and paymentId): a refusal is the not-found page. */
  params?: ParamsDefinition;
  /** The route's own checks, after `can` and the path parameters (a passkey's recent sign-in, say). */
  steps?: Middleware<State>[];
  /** The query string's schema; a refusal goes to `refused`, else the "Not accepted" page. */
  query?: QueryDefinition;
  /** The form's schema (a non-GET); a refusal goes to `refused`, else the "Not accepted" page. */
  form?: object;
  refused?: Refused<State>;
  /** A named opt-out of the same-origin check for this non-GET: why it needs none. */
  withoutOriginCheck?: string;
}

interface StageRouter<S extends Stage> {
  get<In extends Input = Record<never, never>>(
    path: string,
    ...rest: [Handler<StateOf<S, In>>] | [RouteOptions<StateOf<S, In>>, Handler<StateOf<S, In>>]
  ): void;
  post<In extends Input = Record<never, never>>(
    path: string,
    ...rest: [Handler<StateOf<S, In>>] | [RouteOptions<StateOf<S, In>>, Handler<StateOf<S, In>>]
  ): void;
  /** Every method (the dashboard's own not-found page). */
  all<In extends Input = Record<never, never>>(
    path: string,
    ...rest: [Handler<StateOf<S, In>>] | [RouteOptions<StateOf<S, In>>, Handler<StateOf<S, In>>]
  ): void;
}

export interface DashboardRouter {
  steps: DashboardSteps;
  /** The dashboard's route prefix. */
  R: string;
  /** No session needed (sign-in, invitations, assets): paths under R. */
  anyone: StageRouter<'anyone'>;
  /** A signed-in person (SignedIn<>): paths under R. */
  signedIn: StageRouter<'signedIn'>;
  /** A store of theirs (OfStore<>): paths under `${R}/stores/:storeId`. */
  store: StageRouter<'store'>;
  /** A payment of that store (OfStorePayment<>): paths under `${R}/stores/:storeId/payments/:paymentId`. */
  payment: StageRouter<'payment'>;
}

/**
 * The dashboard's router: installs, once, the error pages and the per-client limit on every path
 * under /dashboard, and on every non-GET the same-origin check and the form parser (a route opts
 * out of the check only by naming why); then each route's stage, `can`, parameters, query, form.
 */
export function dashboardRouter(router: Router<KassaState>, deps: AppDeps, guards: Guards): DashboardRouter {
  const steps = dashboardSteps(deps);
  const R = DASHBOARD_PATH;
  // Every dashboard request first spends from the app's per-client limit (RATE_LIMIT_PER_CLIENT, as the
  // checkout's): a sign-in or an invitation costs a 32 MiB scrypt, a CSV up to 10,000 rows. Refused:
  // the 429 page with Retry-After (htmlErrors). Registered before the routes, so it runs before each.
  router.use(R, steps.htmlErrors as Middleware<KassaState>, guards.clientLimit);

  const STAGES: Record<Stage, { prefix: string; steps: Middleware<never>[] }> = {
    anyone: { prefix: R, steps: [] },
    signedIn: { prefix: R, steps: [steps.signedIn] },
    store: { prefix: `${R}/stores/:storeId`, steps: [steps.signedIn, steps.member] },
    payment: { prefix: `${R}/stores/:storeId/payments/:paymentId`, steps: [steps.signedIn, steps.member, steps.storePayment] },
  };
  /** A store page every member may see: the membership step checked it (dashboard/policy.ts 'store.read'). */
  const readsStore = Object.assign(async (_: unknown, next: () => Promise<unknown>) => next(), { [ROUTE_ACTION]: 'store.read' satisfies Action });
  const stage = <S extends Stage>(name: S): StageRouter<S> => {
    const add =
      (method: 'get' | 'post' | 'all') =>
      (path: string, ...rest: unknown[]): void => {
        const handler = rest.at(-1) as Middleware<never>;
        const options = (rest.length > 1 ? rest[0] : {}) as RouteOptions<DashboardState>;
        // Anything but GET (and HEAD) may change state: POST, and every method of `all`.
        const changes = method !== 'get';
        const pipeline: Middleware<never>[] = [];
        if (changes) {
          if (options.withoutOriginCheck)
            pipeline.push(Object.assign(async (_: unknown, next: () => Promise<unknown>) => next(), { [ORIGIN_CHECK_OPT_OUT]: options.withoutOriginCheck }));
          else pipeline.push(steps.sameOrigin as Middleware<never>);
          pipeline.push(steps.form as Middleware<never>);
        }
        pipeline.push(...STAGES[name].steps);
        // Every store route names its action: `can`, or reading the store (its GET pages, which every
        // member sees: the membership step is the check). A store route that changes state without
        // `can` carries no action, and the permissions test refuses it.
        if (options.can) pipeline.push(Object.assign(steps.allowed(options.can), { [ROUTE_ACTION]: options.can }) as Middleware<never>);
        else if (name !== 'anyone' && name !== 'signedIn' && method === 'get') pipeline.push(readsStore as Middleware<never>);
        if (options.params) pipeline.push(steps.pathParams(options.params) as Middleware<never>);
        pipeline.push(...((options.steps ?? []) as Middleware<never>[]));
        if (options.query) pipeline.push(steps.queryStep(options.query, options.refused) as Middleware<never>);
        if (options.form) pipeline.push(steps.formStep(options.form, options.refused) as Middleware<never>);
        pipeline.push(handler);
        router[method](`${STAGES[name].prefix}${path}`, ...(pipeline as Middleware<KassaState>[]));
      };
    return { get: add('get'), post: add('post'), all: add('all') } as StageRouter<S>;
  };
  return { steps, R, anyone: stage('anyone'), signedIn: stage('signedIn'), store: stage('store'), payment: stage('payment') };
}
