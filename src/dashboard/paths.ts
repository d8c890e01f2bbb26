// The dashboard's URLs, made in one place (issue 33): pages and routes ask for a page's path by what
// it is, never spell it (BTCPay's `asp-action`: URLs derived, not hand-built). `root` is the
// dashboard's own path under BASE_URL (e.g. "/dashboard"); a query is passed already encoded.
/** Where the dashboard lives under BASE_URL's path. */
export const DASHBOARD_PATH = '/dashboard';

const withQuery = (path: string, query?: string): string => (query ? `${path}?${query}` : path);

export function dashboardPaths(root: string) {
  const store = (storeId: string) => {
    const at = `${root}/stores/${storeId}`;
    const payment = (paymentId: string, query?: string) => withQuery(`${at}/payments/${paymentId}`, query);
    return {
      /** The store's home page (its landing page): sales, money waiting, what needs attention. */
      home: () => at,
      /** What the dashboard's words mean (glossary.ts), `#term` for one. */
      glossary: (term?: string) => (term ? `${at}/glossary#${term}` : `${at}/glossary`),
      payments: (query?: string) => withQuery(`${at}/payments`, query),
      paymentsCsv: (query?: string) => withQuery(`${at}/payments.csv`, query),
      paymentEvents: (since: string) => `${at}/payments/events?since=${since}`,
      payment,
      refunds: (paymentId: string) => `${payment(paymentId)}/refunds`,
      redeliver: (paymentId: string) => `${payment(paymentId)}/webhook/redeliver`,
      /** A treasury refund's request handed to a wallet (POST), and the wallet's refusal of it (POST). */
      treasuryRequestSent: (paymentId: string, refundId: string) => `${payment(paymentId)}/treasury-refunds/${refundId}/request-sent`,
      treasuryRequestDeclined: (paymentId: string, refundId: string) => `${payment(paymentId)}/treasury-refunds/${refundId}/request-declined`,
      money: (query?: string) => withQuery(`${at}/money`, query),
      /** A refund fee top-up from the owner's wallet (POST: asked; the Money page then offers to send it). */
      refundFees: () => `${at}/money/refund-fees`,
      webhooks: (query?: string) => withQuery(`${at}/webhooks`, query),
      rotateKey: () => `${at}/webhooks/keys/rotate`,
      endpoints: () => `${at}/webhooks/endpoints`,
      endpoint: (endpointId: string) => {
        const endpoint = `${at}/webhooks/endpoints/${endpointId}`;
        return {
          test: () => `${endpoint}/test`,
          delete: () => `${endpoint}/delete`,
          redeliver: (deliveryId: string) => `${endpoint}/deliveries/${deliveryId}/redeliver`,
        };
      },
      /** What the signed-in member is told, and how (GET), and its forms (POST). */
      notifications: (query?: string) => withQuery(`${at}/notifications`, query),
      notificationChoices: () => `${at}/notifications/choices`,
      telegramCode: () => `${at}/notifications/telegram/code`,
      telegramCheck: () => `${at}/notifications/telegram/check`,
      telegramUnlink: () => `${at}/notifications/telegram/unlink`,
      notificationsBot: () => `${at}/notifications/bot`,
      settings: (query?: string) => withQuery(`${at}/settings`, query),
      settingsSection: (section: 'appearance' | 'methods' | 'treasury' | 'refund-window' | 'telegram' | 'embed' | 'dust') => `${at}/settings/${section}`,
      previewCss: (accent: string) => `${at}/settings/preview.css?accent=${encodeURIComponent(accent)}`,
      team: () => `${at}/team`,
      invitations: () => `${at}/team/invitations`,
      revokeInvitation: (invitationId: string) => `${at}/team/invitations/${invitationId}/revoke`,
      memberRole: (userId: string) => `${at}/team/members/${userId}/role`,
      memberRemove: (userId: string) => `${at}/team/members/${userId}/remove`,
      memberResetPassword: (userId: string) => `${at}/team/members/${userId}/reset-password`,
      tokens: () => `${at}/tokens`,
      revokeToken: (jti: string) => `${at}/tokens/${jti}/revoke`,
      audit: (query?: string) => withQuery(`${at}/audit`, query),
      links: (query?: string) => withQuery(`${at}/links`, query),
      newLink: () => `${at}/links`,
      newPayment: () => `${at}/links/payments`,
      link: (linkId: string, query?: string) => withQuery(`${at}/links/${linkId}`, query),
      deactivateLink: (linkId: string) => `${at}/links/${linkId}/deactivate`,
      sharePayment: (paymentId: string) => `${payment(paymentId)}/share`,
      /** Subscriptions: the list with its filters (GET) and a new subscription (POST); one subscription's page and its forms. */
      subscriptions: (query?: string) => withQuery(`${at}/subscriptions`, query),
      newSubscription: () => `${at}/subscriptions`,
      subscription: (subscriptionId: string, query?: string) => withQuery(`${at}/subscriptions/${subscriptionId}`, query),
      subscriptionCredit: (subscriptionId: string) => `${at}/subscriptions/${subscriptionId}/credits`,
      cancelSubscription: (subscriptionId: string) => `${at}/subscriptions/${subscriptionId}/cancel`,
      reissuePortal: (subscriptionId: string) => `${at}/subscriptions/${subscriptionId}/portal`,
      /** The subscriptions' plans: the list (GET), a new plan (POST), archiving one (POST). */
      plans: (query?: string) => withQuery(`${at}/plans`, query),
      newPlan: () => `${at}/plans`,
      archivePlan: (planId: string) => `${at}/plans/${planId}/archive`,
      unmatched: (query?: string) => withQuery(`${at}/unmatched`, query),
      assignUnmatched: (unmatchedId: string) => `${at}/unmatched/${unmatchedId}/assign`,
      keepUnmatched: (unmatchedId: string) => `${at}/unmatched/${unmatchedId}/keep`,
      refundUnmatched: (unmatchedId: string) => `${at}/unmatched/${unmatchedId}/refund`,
      /** An unmatched transfer's refund: its request handed to a wallet (POST), and the wallet's refusal of it (POST). */
      unmatchedRequestSent: (unmatchedId: string, refundId: string) => `${at}/unmatched/${unmatchedId}/refunds/${refundId}/request-sent`,
      unmatchedRequestDeclined: (unmatchedId: string, refundId: string) => `${at}/unmatched/${unmatchedId}/refunds/${refundId}/request-declined`,
    };
  };
  return {
    /** The stores page (and where a sign-in goes by default). */
    home: `${root}/`,
    signIn: (query?: string) => withQuery(`${root}/sign-in`, query),
    /** First-run setup (the setup code, the first store and its owner): offered only until Kassa is set up. */
    setup: () => `${root}/setup`,
    /** An owner's form for a further store (GET), and making it (POST). */
    newStore: () => `${root}/new-store`,
    /** TON Connect's manifest and wallet list for the treasury refund's signing (the dashboard's own). */
    tonConnectManifest: () => `${root}/tonconnect-manifest.json`,
    tonConnectWallets: () => `${root}/tonconnect-wallets.json`,
    /** Forgotten password: ask for a reset link by email. */
    forgotPassword: () => `${root}/forgot-password`,
    signInPasskey: () => `${root}/sign-in/passkey`,
    signInPasskeyOptions: () => `${root}/sign-in/passkey/options`,
    signOut: () => `${root}/sign-out`,
    signOutEverywhere: () => `${root}/sign-out-everywhere`,
    invitation: (token: string) => `${root}/invite/${token}`,
    passwordPage: (query?: string) => withQuery(`${root}/password`, query),
    passkeys: (query?: string) => withQuery(`${root}/passkeys`, query),
    passkeyOptions: () => `${root}/passkeys/options`,
    removePasskey: (passkeyId: string) => `${root}/passkeys/${passkeyId}/remove`,
    asset: (file: string, version: string) => `${root}/assets/${file}?v=${version}`,
    store,
  };
}

type DashboardPaths = ReturnType<typeof dashboardPaths>;
export type StorePaths = ReturnType<DashboardPaths['store']>;
