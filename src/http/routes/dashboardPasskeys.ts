// The dashboard's passkeys (issue 24): the Passkeys page of a signed-in person (add, list, remove)
// and the sign-in with a passkey instead of the password. The browser's ceremony runs in
// static/passkeys.js: it asks for options (a POST that makes a one-time challenge, answered as
// JSON), lets the authenticator answer, and posts the answer with an ordinary form. The checks
// (challenge, origin and RP ID from BASE_URL, signature, user verification, counter) and the
// audit rows are src/dashboard/passkeys.ts's.
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
import { FormProblem } from '../../errors.ts';
import { RECENT_SIGN_IN_MS, needsCurrentPassword, signedInRecently } from '../../dashboard/sessions.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import type { AppDeps } from '../context.ts';
import { emptyForm, type PasskeyForm, passkeyForm, type PasskeySignInForm, passkeySignInForm } from './dashboard.schema.ts';
import { type DashboardCtx as Ctx, type DashboardRouter, type SignedIn, uuidParams } from './dashboardSteps.ts';

const NOTICES: Record<string, string> = { added: 'Passkey added: you can sign in with it from now on.', removed: 'Passkey removed.' };

export function dashboardPasskeysRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool, config } = deps;
  const { root, page, message, notFound, redirect, setSessionCookie, clientOf, safeNext } = dash.steps;
  const paths = dashboardPaths(root);
  const party = relyingParty(config.baseUrl);

  const json = (ctx: Ctx, body: unknown) => {
    ctx.status = 200;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  };
  const showPasskeys = async (
    ctx: Ctx & { state: SignedIn },
    status: number,
    extra: { notice?: string | null; problems?: Record<string, string>; name?: string } = {},
  ) => {
    const passkeys: readonly PasskeyRow[] = await passkeysOf(pool, ctx.state.session.userId);
    const canAdd = signedInRecently(ctx.state.session, deps.now());
    const askCurrent = needsCurrentPassword(ctx.state.session, deps.now());
    page(ctx, status, passkeysPage({ root, viewer: ctx.state.viewer, passkeys, canAdd, askCurrent, recentMinutes: RECENT_SIGN_IN_MS / 60_000, ...extra }));
  };
  /** Adding a passkey (its options and its answer) needs a sign-in from the last RECENT_SIGN_IN_MS. */
  const recentSignIn: Middleware<SignedIn> = async (ctx, next) => {
    if (!signedInRecently(ctx.state.session, deps.now())) {
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
  dash.signedIn.get('/passkeys', async (ctx) => {
    const notice = typeof ctx.query.notice === 'string' && Object.hasOwn(NOTICES, ctx.query.notice) ? NOTICES[ctx.query.notice]! : null;
    await showPasskeys(ctx, 200, { notice });
  });
  dash.signedIn.post('/passkeys/options', { steps: [recentSignIn], form: emptyForm }, async (ctx) => {
    const session = ctx.state.session;
    json(ctx, await registrationOptions(pool, { userId: session.userId, email: session.email, party, clientAddress: ctx.ip || null, now: deps.now() }));
  });
  dash.signedIn.post<{ form: PasskeyForm }>(
    '/passkeys',
    { steps: [recentSignIn], form: passkeyForm, refused: (ctx, problems) => showPasskeys(ctx, 400, { problems }) },
    async (ctx) => {
      const session = ctx.state.session;
      const name = ctx.state.form.name ?? '';
      try {
        await addPasskey(pool, {
          session,
          current: ctx.state.form.current ?? '',
          answer: ctx.state.form.credential ?? '',
          name,
          party,
          actor: ctx.state.actor,
          now: deps.now(),
        });
      } catch (error) {
        if (!(error instanceof FormProblem)) throw error;
        return showPasskeys(ctx, 400, { problems: { [error.field ?? 'form']: error.message }, name });
      }
      redirect(ctx, paths.passkeys('notice=added'));
    },
  );
  dash.signedIn.post<{ params: { passkeyId: string } }>('/passkeys/:passkeyId/remove', { params: uuidParams('passkeyId'), form: emptyForm }, async (ctx) => {
    const session = ctx.state.session;
    const passkeyId = ctx.state.params.passkeyId;
    if (!(await removePasskey(pool, { userId: session.userId, email: session.email, passkeyId, actor: ctx.state.actor, now: deps.now() }))) {
      return notFound(ctx);
    }
    redirect(ctx, paths.passkeys('notice=removed'));
  });

  // ---- Sign-in with a passkey (instead of the password).
  dash.anyone.post('/sign-in/passkey/options', { form: emptyForm }, async (ctx) => {
    const options = await signInOptions(pool, { party, clientAddress: ctx.ip || null, now: deps.now() });
    if (!options) {
      ctx.set('Retry-After', String(PASSKEY_CHALLENGE_MS / 1000));
      return message(ctx, 429, 'Too many passkey sign-ins', 'Finish or cancel the passkey sign-ins already started, or try again in a few minutes.');
    }
    json(ctx, options);
  });
  const signInRefused = (ctx: Ctx, problems: Record<string, string>) => page(ctx, 400, signInPage({ root, problem: Object.values(problems).join(' ') }));
  dash.anyone.post<{ form: PasskeySignInForm }>('/sign-in/passkey', { form: passkeySignInForm, refused: signInRefused }, async (ctx) => {
    const { credential = '', next } = ctx.state.form;
    const result = await signInWithPasskey(pool, { answer: credential, party, actor: clientOf(ctx), now: deps.now() });
    if (result.outcome === 'limited') {
      ctx.set('Retry-After', String(result.retryAfterSeconds));
      const minutes = Math.ceil(result.retryAfterSeconds / 60);
      page(ctx, 429, signInPage({ root, problem: `Too many failed sign-ins from your address. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` }));
      return;
    }
    if (result.outcome === 'refused') {
      ctx.state.log.info({ reason: result.reason }, 'passkey sign-in refused');
      const problem = 'That passkey did not sign you in. Try again, or sign in with your email and password.';
      page(ctx, 401, signInPage({ root, problem, next: safeNext(next) }));
      return;
    }
    setSessionCookie(ctx, result.token);
    redirect(ctx, safeNext(next));
  });
}
