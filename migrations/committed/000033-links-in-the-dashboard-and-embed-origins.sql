--! Previous: sha1:91a4fb994835e71c24f349f27feb99e101e55389
--! Hash: sha1:994012b3cbce605c29bc8c089f8fba01627c810e
--! Message: links in the dashboard and embed origins

-- Where a payment and a payment link came from (issue 30): a link's visit and the dashboard are
-- ways of creating a payment of their own, beside the API's two.
alter table payments drop constraint payments_created_via_is_known;
alter table payments add constraint payments_created_via_is_known check (created_via in ('payments', 'invoice', 'payment_link', 'dashboard'));
comment on column payments.created_via is 'payments: POST /v1/payments; invoice: POST /v1/payments/create; payment_link: a visit of its payment link ({checkout_base_url}/l/{id}); dashboard: a one-off payment made in the dashboard.';
-- Payments of links made before this migration were recorded as the API's.
update payments set created_via = 'payment_link' where payment_link_id is not null and created_via = 'payments';

alter table payment_links add column created_via text not null default 'api';
alter table payment_links add constraint payment_links_created_via_is_known check (created_via in ('api', 'dashboard'));
comment on column payment_links.created_via is 'api: POST /v1/payment-links; dashboard: made in the dashboard (its audit row says by whom).';

-- The drop-in element (<kassa-pay>, CONTRACT §11): the origins of the shop's own pages that may embed it.
alter table stores add column embed_origins text;
comment on column stores.embed_origins is 'The origins (scheme://host[:port], comma-separated, normalised) whose pages may embed <kassa-pay> for this store: CORS on the checkout''s reads and frame-ancestors of the embedded checkout. Null: none.';
