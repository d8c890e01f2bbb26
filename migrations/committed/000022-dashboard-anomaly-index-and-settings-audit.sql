--! Previous: sha1:a577b19b298bea6c9107671a725131f46d937f1d
--! Hash: sha1:63e886b0c5b46fa9c42b6430f5f02ace183f88fd
--! Message: dashboard anomaly index and settings audit

-- The payments page's anomaly filter (dashboard/payments.ts anomalyCondition): the few transfers
-- that make an anomaly, by effect, so a store's overpaid or paid-late payments are found from them
-- rather than by testing every payment of the store (bench/dashboard.ts: 8-16 ms at 100,000 payments
-- without it).
create index transfers_anomalies on transfers (effect, payment_id)
  where effect in ('partial', 'overpaid', 'after_completion', 'after_expiry', 'after_cancel', 'wrong_coin');
comment on index transfers_anomalies is 'The dashboard''s payments filtered by anomaly (partially paid, overpaid, paid late, paid after cancel, wrong coin): the transfers behind each.';

comment on column audit_log.action is 'What, as noun.verb: refund.create, refund.refused, webhook.redeliver, webhook.refused, token.issue, token.revoke, webhook_key.rotate, member.role_change, member.remove, invitation.create, invitation.accept, passkey.add, passkey.remove, session.sign_in (detail.method: password or passkey), session.sign_out, session.sign_out_everywhere, store.update (name, display name, logo, accent colour, payment methods: detail holds the new values), treasury.change (detail: from, to).';
