// Who may do what in a store (issue 33): one table read by the routes' `can` step (which checks the
// role again in the database) and by the pages (which show an action only to those who may take it),
// as Outline's policies and BTCPay's `Policies.CanModifyStoreSettings` serve both the handler and the
// view. A refusal of an action listed with `refusedAudit` is written to the audit log.
import type { Role } from './roles.ts';

interface Rule {
  roles: readonly Role[];
  /** The audit action a refusal writes (money and deliveries: someone tried). */
  refusedAudit?: 'refund.refused' | 'webhook.refused';
}

const EVERY_MEMBER: Rule = { roles: ['owner', 'viewer'] };
const OWNERS: Rule = { roles: ['owner'] };

export const POLICY = {
  /** The payments list, a payment's page, Money, Webhooks, Settings (reading). */
  'store.read': EVERY_MEMBER,
  'refund.create': { roles: ['owner'], refusedAudit: 'refund.refused' },
  'webhook.redeliver': { roles: ['owner'], refusedAudit: 'webhook.refused' },
  'webhook_key.rotate': OWNERS,
  'webhook_endpoints.manage': OWNERS,
  'settings.change': OWNERS,
  'team.manage': OWNERS,
  'tokens.manage': OWNERS,
  'audit.read': OWNERS,
  /** Payment links and one-off payments: make and switch off (every member sees them). */
  'links.manage': OWNERS,
  /** Plans and subscriptions: make and archive plans, subscribe a customer, add credit, cancel (every member sees them). */
  'subscriptions.manage': OWNERS,
  /** Unmatched money: assign to a payment, keep with a note (every member sees it). */
  'unmatched.resolve': OWNERS,
  /** Money for refund fees: ask the owner's wallet to send a top-up (every member sees the balance). */
  'refund_fees.top_up': OWNERS,
  /** One's own notifications in a store: what to be told, and one's Telegram chat (each member their own). */
  'notifications.own': EVERY_MEMBER,
  /** Making a further store (the person becomes its owner): an owner of any store (dashboard/setup.ts mayCreateStore). */
  'store.create': OWNERS,
} as const satisfies Record<string, Rule>;

export type Action = keyof typeof POLICY;

/** Whether a member of this role (null: none) may take the action. */
export const can = (role: Role | null | undefined, action: Action): boolean => role != null && (POLICY[action].roles as readonly Role[]).includes(role);

/** The audit action a refusal of `action` writes, if any. */
export const refusedAuditOf = (action: Action): 'refund.refused' | 'webhook.refused' | undefined => (POLICY[action] as Rule).refusedAudit;
