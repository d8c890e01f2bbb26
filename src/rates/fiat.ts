// The fiat currencies a payment can be priced in (docs/API.md, Currencies). Coins are data: the
// `coins` table, seeded by migration and read where a coin ticker is checked.
export const FIAT_CURRENCIES = ['USD', 'EUR', 'RUB'] as const;

type FiatCurrency = (typeof FIAT_CURRENCIES)[number];

export const isFiatCurrency = (code: string): code is FiatCurrency => (FIAT_CURRENCIES as readonly string[]).includes(code);
