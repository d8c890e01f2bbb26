--! Previous: sha1:b0d7b9742a2ff213e35b63e6a1bce6634909ca9e
--! Hash: sha1:373a10bd4ea2130a6322ede7ec1363f5c1dda5b8
--! Message: payment links

-- Payment links (docs/API.md, Payment links; CONTRACT §11): a store's reusable URL,
-- {checkout_base_url}/l/{id}, where each visit creates one payment priced at that moment.

create table payment_links (
  id uuid primary key,
  store_id uuid not null references stores (id) on delete cascade,
  currency text not null,
  amount numeric,
  min_amount numeric,
  max_amount numeric,
  description text,
  coin_symbol text,
  chain_symbol text,
  max_payments integer,
  expires_at timestamptz,
  return_url text,
  created_at timestamptz not null,
  deactivated_at timestamptz,
  constraint payment_links_amount_fixed_or_open check (amount is null or (min_amount is null and max_amount is null)),
  constraint payment_links_range_ordered check (min_amount is null or max_amount is null or min_amount <= max_amount),
  constraint payment_links_max_payments_positive check (max_payments is null or max_payments > 0),
  constraint payment_links_method_whole check ((coin_symbol is null) = (chain_symbol is null))
);
create index payment_links_by_store on payment_links (store_id, created_at desc, id desc);
comment on table payment_links is 'A store''s payment links: each visit of {checkout_base_url}/l/{id} creates one payment (payments.payment_link_id) at the link''s price, converted at that moment''s rate.';
comment on column payment_links.currency is 'The unit of the price: a fiat code or a coin ticker (as a payment''s currency).';
comment on column payment_links.amount is 'The fixed price; null for an open amount the customer types (within min_amount and max_amount when set).';
comment on column payment_links.min_amount is 'An open amount''s least value (null: any positive amount).';
comment on column payment_links.max_amount is 'An open amount''s greatest value (null: no upper bound).';
comment on column payment_links.coin_symbol is 'With chain_symbol: the one method its payments are preselected with; null for the customer''s choice.';
comment on column payment_links.max_payments is 'How many completed payments use the link up (null: no limit).';
comment on column payment_links.expires_at is 'After this the link creates no payment (null: never).';
comment on column payment_links.deactivated_at is 'When the merchant switched the link off (POST /v1/payment-links/{id}/deactivate); null while active.';

alter table payments add column payment_link_id uuid references payment_links (id);
create index payments_by_payment_link on payments (payment_link_id, created_at desc, id desc) where payment_link_id is not null;
comment on column payments.payment_link_id is 'The payment link whose visit created the payment (null for a payment created through the API).';

create view reporting.payment_links as
  select l.store_id, l.id as payment_link_id, l.currency, l.amount, l.min_amount, l.max_amount, l.description,
         l.created_at, l.expires_at, l.deactivated_at, l.max_payments,
         count(p.id) as payments_created,
         count(p.id) filter (where p.status = 'completed') as payments_completed,
         coalesce(sum(p.amount) filter (where p.status = 'completed'), 0) as amount_paid
  from payment_links l left join payments p on p.payment_link_id = l.id
  group by l.id;
comment on view reporting.payment_links is 'Each payment link with the payments its visits created, how many completed and the sum of their amounts (in the link''s currency).';
