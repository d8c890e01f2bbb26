// The webhook key set (GET {checkout_base_url}/v1/webhook/keys): its JSON Schema and its presenter.
// Each key is the JWK the receiver kit reads (src/webhooks/sign.ts, publicJwk).
import type { FromSchema } from 'json-schema-to-ts';
import { publicJwk } from '../webhooks/sign.ts';

export const keySetSchema = {
  type: 'object',
  required: ['keys'],
  properties: {
    keys: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['kid', 'x'],
        properties: {
          kid: { type: 'string' },
          x: { type: 'string' },
          kty: { const: 'OKP' },
          crv: { const: 'Ed25519' },
          alg: { const: 'EdDSA' },
          use: { const: 'sig' },
        },
      },
    },
  },
} as const;
type KeySet = FromSchema<typeof keySetSchema>;

/** The active key first, then keys retired less than 24 hours ago (the order `publishedKeys` gives). */
export function presentKeySet(keys: ReadonlyArray<{ kid: string; publicKey: Uint8Array }>): KeySet {
  return { keys: keys.map((key) => publicJwk(key.kid, key.publicKey)) };
}
