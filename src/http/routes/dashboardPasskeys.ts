// The dashboard's passkeys (issue 24): the Passkeys page of a signed-in person (add, list, remove)
// and the sign-in with a passkey instead of the password. The browser's ceremony runs in
// static/passkeys.js: it asks for options (a POST that makes a one-time challenge, answered as
// JSON), lets the authenticator answer, and posts the answer with an ordinary form. The checks
// (challenge, origin and RP ID from BASE_URL, signature, user verification, counter) and the
// audit rows are src/dashboard/passkeys.ts's.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import {
  PASSKEY_CHALLENGE_MS,
  type PasskeyRow,
  addPasskey,
  passkeysOf,
  registrationOptions,
  relyingParty,
  removePasskey,
  signInOptions,
  signInWithPasskey,
} from '../../dashboard/passkeys.ts';
import { passkeysPage } from '../../dashboard/passkeysPage.ts';
import { signInPage } from '../../dashboard/pages.ts';
import { FormProblem } from '../../dashboard/people.ts';
import { RECENT_SIGN_IN_MS, signedInRecently } from '../../dashboard/sessions.ts';
import type { AppDeps, KassaState } from '../context.ts';
import type { DashboardCtx as Ctx, DashboardState, DashboardSteps } from './dashboardSteps.ts';

const NOTICES: Record<string, string> = { added: 'Passkey added: you can sign in with it from now on.', removed: 'Passkey removed.' };

export function dashboardPasskeysRoutes(router: Router<KassaState>, deps: AppDeps, steps: DashboardSteps): void {
  const { pool, config } = deps;
  const { root, R, page, message, htmlErrors, form, sameOrigin, signedIn, notFound, redirect, setSessionCookie, clientOf, safeNext, field } = steps;
  const party = relyingParty(config.baseUrl);

  const json = (ctx: Ctx, body: unknown) => {
    ctx.status = 200;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  };
  const showPasskeys = async (ctx: Ctx, status: number, extra: { notice?: string | null; problems?: Record<string, string>; name?: string } = {}) => {
    const passkeys: readonly PasskeyRow[] = await passkeysOf(pool, ctx.state.session!.userId);
    const canAdd = signedInRecently(ctx.state.session!, deps.now());
    page(ctx, status, passkeysPage({ root, viewer: ctx.state.viewer!, passkeys, canAdd, recentMinutes: RECENT_SIGN_IN_MS / 60_000, ...extra }));
  };
  /** Adding a passkey (its options and its answer) needs a sign-in from the last RECENT_SIGN_IN_MS. */
  const recentSignIn: Middleware<DashboardState> = async (ctx, next) => {
    if (!signedInRecently(ctx.state.session!, deps.now())) {
      return message(
        ctx,
        403,
        'Sign in again',
        `Adding a passkey needs a sign-in from the last ${RECENT_SIGN_IN_MS / 60_000} minutes. Sign out, sign in again, then add it. Nothing was changed.`,
      );
    }
    await next();
  };

  // ---- A signed-in person's passkeys.
  router.get(`${R}/passkeys`, htmlErrors, signedIn, async (ctx: Ctx) => {
    const notice = typeof ctx.query.notice === 'string' && Object.hasOwn(NOTICES, ctx.query.notice) ? NOTICES[ctx.query.notice]! : null;
    await showPasskeys(ctx, 200, { notice });
  });
  router.post(`${R}/passkeys/options`, htmlErrors, sameOrigin, signedIn, recentSignIn, async (ctx: Ctx) => {
    const session = ctx.state.session!;
    json(ctx, await registrationOptions(pool, { userId: session.userId, email: session.email, party, clientAddress: ctx.ip || null, now: deps.now() }));
  });
  router.post(`${R}/passkeys`, htmlErrors, sameOrigin, form, signedIn, recentSignIn, async (ctx: Ctx) => {
    const session = ctx.state.session!;
    const name = field(ctx, 'name').slice(0, 200);
    try {
      await addPasskey(pool, {
        userId: session.userId,
        email: session.email,
        answer: field(ctx, 'credential'),
        name,
        party,
        actor: ctx.state.actor!,
        now: deps.now(),
      });
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      return showPasskeys(ctx, 400, { problems: { [error.field ?? 'form']: error.message }, name });
    }
    redirect(ctx, `${root}/passkeys?notice=added`);
  });
  router.post(`${R}/passkeys/:passkeyId/remove`, htmlErrors, sameOrigin, form, signedIn, async (ctx: Ctx) => {
    const session = ctx.state.session!;
    const passkeyId = (ctx.params as { passkeyId: string }).passkeyId;
    if (!(await removePasskey(pool, { userId: session.userId, email: session.email, passkeyId, actor: ctx.state.actor!, now: deps.now() }))) {
      return notFound(ctx);
    }
    redirect(ctx, `${root}/passkeys?notice=removed`);
  });

  // ---- Sign-in with a passkey (instead of the password).
  router.post(`${R}/sign-in/passkey/options`, htmlErrors, sameOrigin, async (ctx: Ctx) => {
    const options = await signInOptions(pool, { party, clientAddress: ctx.ip || null, now: deps.now() });
    if (!options) {
      ctx.set('Retry-After', String(PASSKEY_CHALLENGE_MS / 1000));
      return message(ctx, 429, 'Too many passkey sign-ins', 'Finish or cancel the passkey sign-ins already started, or try again in a few minutes.');
    }
    json(ctx, options);
  });
  router.post(`${R}/sign-in/passkey`, htmlErrors, sameOrigin, form, async (ctx: Ctx) => {
    const result = await signInWithPasskey(pool, { answer: field(ctx, 'credential'), party, actor: clientOf(ctx), now: deps.now() });
    if (result.outcome === 'limited') {
      ctx.set('Retry-After', String(result.retryAfterSeconds));
      const minutes = Math.ceil(result.retryAfterSeconds / 60);
      page(ctx, 429, signInPage({ root, problem: `Too many failed sign-ins from your address. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` }));
      return;
    }
    if (result.outcome === 'refused') {
      ctx.state.log.info({ reason: result.reason }, 'passkey sign-in refused');
      const problem = 'That passkey did not sign you in. Try again, or sign in with your email and password.';
      page(ctx, 401, signInPage({ root, problem, next: safeNext(field(ctx, 'next')) }));
      return;
    }
    setSessionCookie(ctx, result.token);
    redirect(ctx, safeNext(field(ctx, 'next')));
  });
}
