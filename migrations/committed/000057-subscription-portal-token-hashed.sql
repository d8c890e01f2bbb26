--! Previous: sha1:8ebf2843916117f2597db7d829f978b3c79a1e34
--! Hash: sha1:f703e1248978d960ad39fbd439cde3d37d88a580
--! Message: subscription portal token hashed

-- The customer's portal of a subscription ({checkout_base_url}/s/{token}; docs/API.md, Subscriptions):
-- Kassa keeps only the SHA-256 of the token, as it does for API tokens and dashboard sessions, so a
-- copy of the database (a backup, a read-only reporting role) opens no subscriber's portal. The
-- portal URL is shown once, in the answer that issues it (POST /v1/subscriptions, POST
-- /v1/subscriptions/{id}/portal, the dashboard's page after making or re-issuing it). Existing
-- tokens are hashed here: their URLs keep working.
alter table subscriptions add column portal_token_hash bytea;
update subscriptions set portal_token_hash = sha256(convert_to(portal_token, 'UTF8'));
alter table subscriptions alter column portal_token_hash set not null;
alter table subscriptions add constraint subscriptions_portal_token_hash_is_sha256 check (octet_length(portal_token_hash) = 32);
-- The plain token goes, with its unique index and 000055's index on its hash.
drop index subscriptions_by_portal_token_hash;
alter table subscriptions drop column portal_token;
create unique index subscriptions_by_portal_token_hash on subscriptions (portal_token_hash);
comment on index subscriptions_by_portal_token_hash is 'The portal finds its subscription by the SHA-256 of the token in its address (one row, or none).';
comment on column subscriptions.portal_token_hash is 'SHA-256 of the secret token of the customer''s portal URL ({checkout_base_url}/s/{token}); the token itself is not kept (shown once, when issued or re-issued).';
