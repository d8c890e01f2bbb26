// The dashboard's doors (issues 24, 35): signing in with a password, a forgotten password's link,
// signing out (here or everywhere), and an invitation's one-time link (bound to its email:
// invitations.ts invitationTaker), which sets a first password or joins a signed-in person to the store.
// Passkey sign-in is dashboardPasskeys.ts's. The pipeline is the dashboard router's (dashboardSteps.ts).
import { forgotPasswordPage, invitationPage, signInPage } from '../../dashboard/pages.ts';
import { sendPasswordReset } from '../../dashboard/passwordResets.ts';
import { dashboardPaths } from '../../dashboard/paths.ts';
import { normalizeEmail } from '../../dashboard/forms.ts';
import { FormProblem } from '../../errors.ts';
import { acceptInvitation, findOpenInvitation, invitationTaker } from '../../dashboard/invitations.ts';
import { findSession, openSession, signIn, signOut, signOutEverywhere } from '../../dashboard/sessions.ts';
import { canSendMail } from '../../net/mail.ts';
import type { AppDeps } from '../context.ts';
import {
  emptyForm,
  type ForgotPasswordForm,
  forgotPasswordForm,
  type InvitationForm,
  invitationForm,
  type SignInForm,
  signInForm,
} from './dashboard.schema.ts';
import type { DashboardCtx, DashboardRouter } from './dashboardSteps.ts';

/** An invitation's one-time token in its link (dashboard/secrets.ts). */
const invitationParams = {
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['token'],
    properties: { token: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', errorCode: 'invalid_request' } },
  },
} as const;

export function dashboardSignInRoutes(dash: DashboardRouter, deps: AppDeps): void {
  const { pool, config } = deps;
  const { root, setSessionCookie, clientOf, page, message, notFound, redirect, safeNext } = dash.steps;
  const paths = dashboardPaths(root);

  // ---- Sign-in, sign-out.
  dash.anyone.get('/sign-in', async (ctx) => {
    page(ctx, 200, signInPage({ root, canEmail: canSendMail(config), next: typeof ctx.query.next === 'string' ? safeNext(ctx.query.next) : undefined }));
  });
  // Forgotten password (dashboard/passwordResets.ts): the same answer for every address, given before
  // anything is looked up; the link is made and emailed after it.
  dash.anyone.get('/forgot-password', async (ctx) => {
    if (!canSendMail(config)) return notFound(ctx);
    page(ctx, 200, forgotPasswordPage({ root }));
  });
  dash.anyone.post<{ form: ForgotPasswordForm }>(
    '/forgot-password',
    { form: forgotPasswordForm, refused: (ctx) => page(ctx, 400, forgotPasswordPage({ root, problem: 'Write the email address you sign in with.' })) },
    async (ctx) => {
      if (!canSendMail(config)) return notFound(ctx);
      const email = ctx.state.form.email ?? '';
      if (normalizeEmail(email) === null) return page(ctx, 400, forgotPasswordPage({ root, problem: 'Write the email address you sign in with.' }));
      const client = clientOf(ctx);
      const request = { email, baseUrl: config.baseUrl, client: { clientAddress: client.clientAddress, userAgent: client.userAgent }, now: deps.now() };
      void sendPasswordReset({ pool, config, log: deps.log }, request);
      page(ctx, 200, forgotPasswordPage({ root, sent: true }));
    },
  );
  dash.anyone.post<{ form: SignInForm }>(
    '/sign-in',
    {
      form: signInForm,
      refused: (ctx, problems) =>
        page(
          ctx,
          400,
          signInPage({ root, problem: Object.values(problems)[0], next: safeNext(ctx.request.body && (ctx.request.body as { next?: unknown }).next) }),
        ),
    },
    async (ctx) => {
      const { email = '', password = '', next } = ctx.state.form;
      const result = await signIn(pool, { email, password, actor: clientOf(ctx), now: deps.now() });
      if (result.outcome === 'limited') {
        ctx.set('Retry-After', String(result.retryAfterSeconds));
        const minutes = Math.ceil(result.retryAfterSeconds / 60);
        page(
          ctx,
          429,
          signInPage({ root, email, problem: `Too many failed sign-ins from your address. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` }),
        );
        return;
      }
      if (result.outcome === 'refused') {
        page(ctx, 401, signInPage({ root, email, problem: 'That email and password do not match an account.', next: safeNext(next) }));
        return;
      }
      setSessionCookie(ctx, result.token);
      redirect(ctx, safeNext(next));
    },
  );
  dash.signedIn.post('/sign-out', { form: emptyForm }, async (ctx) => {
    await signOut(pool, ctx.state.session, ctx.state.actor, deps.now());
    setSessionCookie(ctx, null);
    redirect(ctx, paths.signIn('signed_out=1'));
  });
  dash.signedIn.post('/sign-out-everywhere', { form: emptyForm }, async (ctx) => {
    await signOutEverywhere(pool, ctx.state.session, ctx.state.actor, deps.now());
    setSessionCookie(ctx, null);
    redirect(ctx, paths.signIn('signed_out=everywhere'));
  });

  // ---- Invitations: the one-time link (bound to its email: invitations.ts invitationTaker).
  const invitationGone = (ctx: DashboardCtx) =>
    message(ctx, 404, 'Invitation not valid', 'This invitation link was used already, has expired, or never existed. Ask for a new one.', true);
  /** Who is signed in, if anyone (an invitation page needs no session; one to an existing account needs its person's). */
  const signedInEmail = async (ctx: DashboardCtx): Promise<string | null> => {
    const token = dash.steps.sessionToken(ctx);
    return token ? ((await findSession(pool, token, deps.now()))?.email ?? null) : null;
  };
  dash.anyone.get<{ params: { token: string } }>('/invite/:token', { params: invitationParams }, async (ctx) => {
    const token = ctx.state.params.token;
    const invitation = await findOpenInvitation(pool, token, deps.now());
    if (!invitation) return invitationGone(ctx);
    page(ctx, 200, invitationPage({ root, token, invitation, taker: invitationTaker(invitation, await signedInEmail(ctx)) }));
  });
  dash.anyone.post<{ params: { token: string }; form: InvitationForm }>('/invite/:token', { params: invitationParams, form: invitationForm }, async (ctx) => {
    const token = ctx.state.params.token;
    const now = deps.now();
    const invitation = await findOpenInvitation(pool, token, now);
    if (!invitation) return invitationGone(ctx);
    const email = await signedInEmail(ctx);
    const taker = invitationTaker(invitation, email);
    const { password = '', confirm = '' } = ctx.state.form;
    if (taker === 'set_password' && password !== confirm) {
      page(ctx, 400, invitationPage({ root, token, invitation, taker, problems: { confirm: 'The two passwords differ.' } }));
      return;
    }
    let accepted: Awaited<ReturnType<typeof acceptInvitation>>;
    try {
      accepted = await acceptInvitation(pool, { token, password, signedInEmail: email, actor: clientOf(ctx), now });
    } catch (error) {
      if (!(error instanceof FormProblem)) throw error;
      const problems = { [error.field === 'password' ? 'password' : 'form']: error.message };
      page(ctx, taker === 'set_password' ? 400 : 403, invitationPage({ root, token, invitation, taker, problems }));
      return;
    }
    if (!accepted) return invitationGone(ctx);
    // A new password (first sign-in or reset) signs this browser in; a person who joined signed in already stays so.
    if (taker === 'set_password') {
      const { userId } = accepted;
      setSessionCookie(
        ctx,
        await pool.transaction((tx) =>
          openSession(tx, { userId, email: accepted.email, actor: clientOf(ctx), method: 'invitation', generation: accepted.generation, now }),
        ),
      );
    }
    redirect(ctx, paths.store(accepted.storeId).home());
  });
}
