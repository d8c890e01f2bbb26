--! Previous: sha1:cf9ac14ec3e3eb1f99270a60f8a01b02b6b3048b
--! Hash: sha1:8f41a04a43d709f55eef066f3a575e3d2edb9b87
--! Message: audit log by time

-- A store's audit log by time (issue 47 item 4): the Audit log page orders its entries by when they
-- happened, newest first (dashboard/audit.ts listAudit), and pages on (at, id).
create index audit_log_by_store_time on audit_log (store_id, at desc, id desc);
comment on index audit_log_by_store_time is 'A store''s audit log by time, newest first (the Audit log page, keyset on at and id).';
