--! Previous: sha1:aa61c62136c62a2ff42dd89fb1d58b17f531c9ec
--! Hash: sha1:5971d53951e78affbde513e0bf7ba23b08db7561
--! Message: payments by order id

-- Kassa schema: a store's payments by its own order id (GET /v1/payments?order_id=…). An order id
-- is the merchant's: Kassa does not make it unique (a shop may retry an order with a new payment),
-- so the lookup answers every payment of the store with that order id, newest first, as the list
-- does.

create index payments_by_store_order_id on payments (store_id, order_id, created_at desc, id desc) where order_id is not null;
comment on index payments_by_store_order_id is 'GET /v1/payments?order_id=: a store''s payments with one order id, newest first, with cursor pagination.';
