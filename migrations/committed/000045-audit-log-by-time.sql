--! Previous: sha1:242adf18ae641efbcf716473b45dca880c30f618
--! Hash: sha1:a1fae402b22989731da2ae12033a3975809ce4e9
--! Message: audit log by time

-- A store's audit log by time (issue 47 item 4): the Audit log page orders its entries by when they
-- happened, newest first (dashboard/audit.ts listAudit), and pages on (at, id).
create index audit_log_by_store_time on audit_log (store_id, at desc, id desc);
comment on index audit_log_by_store_time is 'A store''s audit log by time, newest first (the Audit log page, keyset on at and id).';
