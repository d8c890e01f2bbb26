// Webhook bodies, signatures and signing keys (docs/API.md, Webhooks).
//
// Decisions:
// - `signAt` is `Date.prototype.toISOString()`: RFC 3339 in UTC with milliseconds,
//   e.g. `2025-06-01T12:00:00.123Z`. Every delivery attempt is signed afresh with a new signAt.
// - The signature is Ed25519 (detached, 64 bytes) over the exact UTF-8 bytes of the body that is
//   sent, in standard base64 with padding (the `X-Signature` header).
// - The key set's `x` is the raw 32-byte Ed25519 public key in **standard base64 with padding**
//   (44 characters), because docs/API.md says `x` is the base64 raw Ed25519 public key and the
//   public key is the base64-decoded `x`. JWK's usual base64url-without-padding would not decode with a strict
//   standard base64 decoder. The receiver kit (receiver.ts) accepts both encodings.
import { randomBytes } from 'node:crypto';
import nacl from 'tweetnacl';

interface WebhookEvent {
  paymentId: string;
  /** The payment's store: the body's `payload.storeID`, which the receiver kit checks (issue 48.1). */
  storeId: string;
  metadata: Record<string, string>;
  /** The merchant's order id; the `order_id` member is present only when the payment has one. */
  orderId?: string | null;
}

/**
 * The exact body of a webhook:
 * `{"payload":{"paymentID","status":"completed","metadata","order_id"?,"storeID"},"signAt"}`.
 * Member order is fixed. `signAt` is RFC 3339 UTC with milliseconds (`toISOString()`).
 * `storeID` (additive to the seed's body) names the store inside the signed bytes: every store's
 * webhooks are signed with the one key of the deployment, so without it a store could point its own
 * payment's webhookURL at another shop's receiver and have that shop take the body for its own
 * (issue 48.1). Throws RangeError on an invalid date.
 */
export function buildWebhookBody(event: WebhookEvent, signAt: Date): string {
  const payload: Record<string, unknown> = {
    paymentID: event.paymentId,
    status: 'completed',
    metadata: { ...event.metadata },
  };
  if (event.orderId !== undefined && event.orderId !== null) payload.order_id = event.orderId;
  payload.storeID = event.storeId;
  return JSON.stringify({ payload, signAt: signAt.toISOString() });
}

/**
 * The exact body a store's webhook endpoint gets (webhooks/events.ts):
 * `{"type","eventID","payload","signAt"}`, members in that order, `signAt` as the seed body's. Signed
 * with `signBody` and sent with the same headers. The payload, as the event recorded it, gets
 * `storeID`, the endpoint's store, as the seed body's does (where it has one — a ping's — it keeps
 * its place and takes the endpoint's store).
 */
export function buildEventBody(event: { type: string; eventId: string; storeId: string; payload: unknown }, signAt: Date): string {
  const recorded = typeof event.payload === 'object' && event.payload !== null && !Array.isArray(event.payload) ? event.payload : {};
  const payload = { ...recorded, storeID: event.storeId };
  return JSON.stringify({ type: event.type, eventID: event.eventId, payload, signAt: signAt.toISOString() });
}

const storeIdSchema = {
  type: 'string',
  format: 'uuid',
  description:
    'The store the webhook is for: the payment’s (or the endpoint’s) store. Inside the signed bytes, so a receiver can reject another store’s webhook (the receiver kit does, given `storeID`).',
} as const;

/** The JSON Schema of the per-payment webhook's body (`buildWebhookBody`), published in the OpenAPI document's `webhooks`. */
export const webhookBodySchema = {
  type: 'object',
  required: ['payload', 'signAt'],
  properties: {
    payload: {
      type: 'object',
      required: ['paymentID', 'status', 'metadata', 'storeID'],
      properties: {
        paymentID: { type: 'string', format: 'uuid' },
        status: { type: 'string', const: 'completed' },
        metadata: { type: 'object', additionalProperties: { type: 'string' } },
        order_id: { type: 'string', description: 'The merchant’s order id, when the payment has one.' },
        storeID: storeIdSchema,
      },
    },
    signAt: {
      type: 'string',
      format: 'date-time',
      description: 'When this attempt was signed (RFC 3339 UTC, milliseconds); receivers refuse one older than 30 s.',
    },
  },
} as const;

/** The JSON Schema of a store endpoint's event body (`buildEventBody`), published in the OpenAPI document's `webhooks`. */
export const eventBodySchema = {
  type: 'object',
  required: ['type', 'eventID', 'payload', 'signAt'],
  properties: {
    type: { type: 'string', description: 'The event type (docs/API.md, Store webhook endpoints).' },
    eventID: { type: 'string', format: 'uuid', description: 'The same for every endpoint and every delivery of the event: what duplicates are told by.' },
    payload: {
      type: 'object',
      required: ['storeID'],
      description: 'What happened; each type’s members are in docs/API.md. Every payload carries `storeID`.',
      properties: { storeID: storeIdSchema },
      additionalProperties: true,
    },
    signAt: webhookBodySchema.properties.signAt,
  },
} as const;

/** Base64 (standard, padded) Ed25519 detached signature of the exact UTF-8 bytes of `body`. */
export function signBody(body: string, secretKey: Uint8Array): string {
  if (secretKey.length !== nacl.sign.secretKeyLength) {
    throw new TypeError(`secretKey must be a ${nacl.sign.secretKeyLength}-byte Ed25519 secret key`);
  }
  const signature = nacl.sign.detached(new Uint8Array(Buffer.from(body, 'utf8')), secretKey);
  return Buffer.from(signature).toString('base64');
}

/** Checks a base64 signature of `body` against a raw 32-byte public key. Never throws. */
export function verifyBody(body: string | Uint8Array, signature: string, publicKey: Uint8Array): boolean {
  try {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const sig = Buffer.from(signature, 'base64');
    if (sig.length !== nacl.sign.signatureLength || publicKey.length !== nacl.sign.publicKeyLength) return false;
    return nacl.sign.detached.verify(new Uint8Array(bytes), new Uint8Array(sig), publicKey);
  } catch {
    return false;
  }
}

export interface SigningKey {
  kid: string;
  /** Raw 32-byte Ed25519 public key. */
  publicKey: Uint8Array;
  /** tweetnacl's 64-byte secret key (32-byte seed followed by the public key). */
  secretKey: Uint8Array;
}

/**
 * A new Ed25519 signing key. `kid` is `k`, the UTC creation day and 8 random hex digits
 * (`k20250601-9f3a2c1b`, the format src/webhooks/keys.ts uses too): short, safe in a header,
 * sortable by creation day, and random enough never to collide.
 */
export function generateSigningKey(now: Date): SigningKey {
  const pair = nacl.sign.keyPair();
  const day = now.toISOString().slice(0, 10).replaceAll('-', '');
  return { kid: `k${day}-${randomBytes(4).toString('hex')}`, publicKey: pair.publicKey, secretKey: pair.secretKey };
}

/** Rebuilds a key from its stored 32-byte seed (the first half of tweetnacl's secret key). */
export function signingKeyFromSeed(kid: string, seed: Uint8Array): SigningKey {
  const pair = nacl.sign.keyPair.fromSeed(seed);
  return { kid, publicKey: pair.publicKey, secretKey: pair.secretKey };
}

export interface PublicJwk {
  kid: string;
  /** Raw Ed25519 public key, standard base64 with padding (see the decision at the top). */
  x: string;
  kty: 'OKP';
  crv: 'Ed25519';
  alg: 'EdDSA';
  use: 'sig';
}

/** One entry of `GET {checkout_base_url}/v1/webhook/keys` → `{"keys": [PublicJwk, …]}`. */
export function publicJwk(kid: string, publicKey: Uint8Array): PublicJwk {
  if (publicKey.length !== nacl.sign.publicKeyLength) {
    throw new TypeError(`publicKey must be a ${nacl.sign.publicKeyLength}-byte Ed25519 public key`);
  }
  return { kid, x: Buffer.from(publicKey).toString('base64'), kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' };
}
