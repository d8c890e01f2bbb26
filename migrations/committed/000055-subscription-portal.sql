--! Previous: sha1:97503fbf3f99524c79220f68a912af489bbc56ca
--! Hash: sha1:1c3970757383a69f48acf2effb678fd7f1e6f4e8
--! Message: subscription portal

-- The customer's portal of a subscription ({checkout_base_url}/s/{token}; docs/API.md, Subscriptions):
-- whether a plan's subscribers may cancel there, and the portal's lookup by the hash of its secret.

alter table plans add column customer_may_cancel boolean not null default true;
comment on column plans.customer_may_cancel is 'Whether a subscriber may cancel (at the end of the paid period) from the customer''s portal; the shop can always cancel through the API.';

-- The portal finds its subscription by the SHA-256 of the token in the address, so how long the
-- lookup takes says nothing about how much of a guessed token is right; the token itself is then
-- compared in constant time (src/subscriptions/records.ts). The token is base64url: decode(…,
-- 'escape') is its own bytes, and immutable as an index expression must be.
create unique index subscriptions_by_portal_token_hash on subscriptions (sha256(decode(portal_token, 'escape')));
