--! Previous: sha1:86a5cb1a20b7420cb105fe19c1bbb9dd5d8133a1
--! Hash: sha1:77bb4e05919241dde552d7ec9b68f05bf444109e
--! Message: store branding

-- The shop's face on the hosted checkout (`kassa store update ID --display-name … --logo-url …
-- --accent-color #…`): the name customers see, a logo, and the colour of the page's main button.
-- All optional: without them the page shows the store name and Kassa's own colours.
alter table stores
  add column display_name text,
  add column logo_url text,
  add column accent_color text,
  add constraint stores_display_name_is_not_blank check (display_name is null or length(btrim(display_name)) between 1 and 200),
  add constraint stores_logo_url_is_https check (logo_url is null or (logo_url ~ '^https://[^\s]+$' and length(logo_url) <= 2000)),
  add constraint stores_accent_color_is_hex check (accent_color is null or accent_color ~ '^#[0-9a-f]{6}$');
comment on column stores.display_name is 'The name the checkout shows customers; null: the store name.';
comment on column stores.logo_url is 'HTTPS URL of the logo the checkout shows (loaded by the customer''s browser); null: none.';
comment on column stores.accent_color is 'Colour of the checkout''s main button and top edge, #rrggbb in lower case; null: Kassa''s own.';
