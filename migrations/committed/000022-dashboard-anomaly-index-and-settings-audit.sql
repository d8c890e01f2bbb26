--! Previous: sha1:d33f82443da3cd29848c922e5a3c5a7ae3efea3c
--! Hash: sha1:3a8477598c690626ef6213466bd9ef1afceae3f3
--! Message: dashboard anomaly index and settings audit

-- The payments page's anomaly filter (dashboard/payments.ts anomalyCondition): the few transfers
-- that make an anomaly, by effect, so a store's overpaid or paid-late payments are found from them
-- rather than by testing every payment of the store (bench/dashboard.ts: 8-16 ms at 100,000 payments
-- without it).
create index transfers_anomalies on transfers (effect, payment_id)
  where effect in ('partial', 'overpaid', 'after_completion', 'after_expiry', 'after_cancel', 'wrong_coin');
comment on index transfers_anomalies is 'The dashboard''s payments filtered by anomaly (partially paid, overpaid, paid late, paid after cancel, wrong coin): the transfers behind each.';

comment on column audit_log.action is 'What, as noun.verb: refund.create, refund.refused, webhook.redeliver, webhook.refused, token.issue, token.revoke, webhook_key.rotate, member.role_change, member.remove, invitation.create, invitation.accept, passkey.add, passkey.remove, session.sign_in (detail.method: password or passkey), session.sign_out, session.sign_out_everywhere, store.update (name, display name, logo, accent colour, payment methods: detail holds the new values), treasury.change (detail: from, to).';
