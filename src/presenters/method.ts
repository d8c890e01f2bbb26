// The payment method as the API shows it (GET /v1/payment-methods), and the coin and chain badges
// every outward shape links to. Schema and presenter side by side: the presenter's type is derived
// from the schema the OpenAPI document publishes.
import type { FromSchema } from 'json-schema-to-ts';
import type { MethodRow } from '../payments/methods.ts';

export function coinImageUrl(checkoutBaseUrl: string, symbol: string): string {
  return `${checkoutBaseUrl}/assets/coins/${encodeURIComponent(symbol)}.svg`;
}

export function chainImageUrl(checkoutBaseUrl: string, symbol: string): string {
  return `${checkoutBaseUrl}/assets/chains/${encodeURIComponent(symbol)}.svg`;
}

/** A coin or a chain: its name, symbol and badge. */
export const coinOrChainSchema = {
  type: 'object',
  required: ['name', 'symbol', 'imgUrl'],
  properties: { name: { type: 'string' }, symbol: { type: 'string' }, imgUrl: { type: 'string', format: 'uri' } },
} as const;

export const paymentMethodSchema = {
  type: 'object',
  required: ['id', 'coin', 'chain'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    coin: {
      ...coinOrChainSchema,
      required: [...coinOrChainSchema.required, 'decimals'],
      properties: { ...coinOrChainSchema.properties, decimals: { type: 'integer' } },
    },
    chain: coinOrChainSchema,
  },
} as const;
type PresentedMethod = FromSchema<typeof paymentMethodSchema>;

/** docs/API.md, GET /v1/payment-methods: {id, coin: {name, symbol, imgUrl, decimals}, chain: {name, symbol, imgUrl}}. */
export function presentMethod(method: MethodRow, checkoutBaseUrl: string): PresentedMethod {
  return {
    id: method.id,
    coin: { name: method.coin_name, symbol: method.coin_symbol, imgUrl: coinImageUrl(checkoutBaseUrl, method.coin_symbol), decimals: method.coin_decimals },
    chain: { name: method.chain_name, symbol: method.chain_symbol, imgUrl: chainImageUrl(checkoutBaseUrl, method.chain_symbol) },
  };
}
