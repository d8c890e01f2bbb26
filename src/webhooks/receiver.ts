// The Kassa webhook receiver kit, published as `kassa-webhooks` (packages/webhooks). Self-contained on purpose: it uses
// only Node built-ins (node:crypto for Ed25519, global fetch) and nothing else from Kassa, so a
// merchant can also copy this one file.

import { createPublicKey, verify as verifySignature, type KeyObject } from 'node:crypto';

/**
 * Verifies Kassa webhooks exactly as the interface's "Receiver contract" asks.
 *
 * ```ts
 * import { createWebhookVerifier } from 'kassa-webhooks';
 * const verifier = createWebhookVerifier({
 *   keysUrl: 'https://pay.example.com/pay/v1/webhook/keys',
 *   storeID: '0b5e2c9a-…', // your store's id: `kassa store create`'s `id`
 * });
 *
 * // in your HTTP handler, with the *raw* request body (a Buffer, before any JSON parsing):
 * const result = await verifier.handle(rawBody, req.headers, async (payload) => {
 *   await markOrderPaid(payload.order_id ?? payload.paymentID, payload.metadata);
 * });
 * res.writeHead(result.status).end();
 * ```
 *
 * What it does, point by point:
 * 1. Verifies the Ed25519 signature (`X-Signature`, base64) over the **exact raw body bytes** with the
 *    key whose `kid` equals `X-Signature-Kid`; the key is the base64-decoded `x` of that key (standard
 *    base64 as Kassa publishes it; base64url, padded or not, is accepted too).
 * 2. On an unknown kid it fetches the key set again, updates its cache and retries; still unknown →
 *    rejected (401). It **never** tries another key. To keep forged requests from turning into a flood
 *    of key-set fetches, at most one successful unknown-kid refetch happens per `minRefetchIntervalMs`
 *    (10 s); a kid still unknown within that interval is rejected (401) without a fetch.
 * 3. Caches the key set for `cacheTtlMs` (default 6 h, clamped to 6–12 h); it fetches only on a cache
 *    miss, an expired cache or an unknown kid. Concurrent fetches are coalesced.
 * 4. Rejects (401) a body whose `signAt` is older than 30 s or more than 5 s in the future.
 * 4a. Rejects (403) a body for another store. Every store of a Kassa deployment is signed with the
 *    same keys, so a signature alone says only "sent by this Kassa": another store's payment can name
 *    your receiver as its `webhookURL` (or your URL as its endpoint) and your `order_id`. Kassa names
 *    the store inside the signed bytes (`payload.storeID`); with `storeID` set (one id, or a list for
 *    a receiver of several stores) the kit rejects a body that names another store, or none (a Kassa
 *    older than that), before your callback runs and before the seen store records it. 403 is
 *    final for the body: Kassa retries it like any non-2xx until its 12-hour window ends, and the
 *    sending store's delivery log shows 403. Without `storeID` the kit accepts every store's webhooks,
 *    as before, and warns once per process (`process.emitWarning`, code `KASSA_WEBHOOKS_NO_STORE_ID`):
 *    pass it.
 * 5. Reports `duplicate: true` for a paymentID already marked processed (`markProcessed`, or `handle`
 *    after your callback succeeded). The default store is an in-memory set of the last 100,000 ids —
 *    pass your own `seen` store (a database table) to survive restarts and to share between processes.
 *    `verify` only *checks* the store: an id is recorded after processing, so that a failed processing
 *    is retried by Kassa rather than skipped.
 * 6. Answer 200 only after verification and processing (`handle` does exactly that); any other status
 *    makes Kassa retry (with exponential backoff, for up to 12 h). Answer within 30 s.
 * 7. When the key set cannot be fetched, the result is status 500, so that Kassa retries.
 *
 * Both of Kassa's bodies are verified the same way (points 1–4 and 6–7): a payment's webhook
 * (`{"payload","signAt"}`, sent to its `webhookURL`) and a store endpoint's event
 * (`{"type","eventID","payload","signAt"}`, docs/API.md, Store webhook endpoints). An event's result
 * carries `event` instead of `payload`, its duplicates are told by `eventID`, and `handle` passes it
 * to its `onEvent` callback:
 *
 * ```ts
 * const result = await verifier.handle(rawBody, req.headers, onPayment, async (event) => {
 *   if (event.type === 'payment.expired') await releaseStock(event.payload.paymentID);
 * });
 * ```
 *
 * Statuses: 401 for anything about authenticity (missing or malformed signature headers, unknown kid,
 * bad signature, signAt outside the window); 403 for a genuine body for another store (or naming no
 * store, when `storeID` is set); 400 for a correctly signed body that is not a webhook (bad JSON or
 * shape); 500 when the key set or the seen store is unavailable.
 */
export function createWebhookVerifier(options: WebhookVerifierOptions): WebhookVerifier {
  return new Verifier(options);
}

/** The `payload` member of a webhook body. */
export interface WebhookPayload {
  paymentID: string;
  /** Always `completed` today: the only event is a payment reaching `completed`. */
  status: string;
  metadata: Record<string, string>;
  /** The merchant's order id, present when the payment has one. */
  order_id?: string;
  /** The payment's store (absent only from a Kassa older than issue 48.1). Checked against `storeID` when set. */
  storeID?: string;
}

/** A store endpoint's event: the body `{"type","eventID","payload","signAt"}` without its signAt. */
export interface WebhookEvent {
  /** payment.pending, payment.completed, payment.expired, payment.cancelled, payment.money_received, refund.confirmed, refund.failed, sweep.confirmed, sweep.failed, money.unmatched, money.assigned, or ping. */
  type: string;
  /** The same for every endpoint that hears the event and for every delivery of it: what duplicates are told by. */
  eventID: string;
  /** What happened (docs/API.md, Store webhook endpoints, lists each type's members); `payload.storeID` is the endpoint's store. */
  payload: Record<string, unknown>;
}

export type VerifyResult =
  | { ok: true; payload: WebhookPayload; event?: undefined; duplicate: boolean; kid: string; signAt: Date }
  | { ok: true; event: WebhookEvent; payload?: undefined; duplicate: boolean; kid: string; signAt: Date }
  | { ok: false; status: 400 | 401 | 403 | 500; reason: string };

export interface HandleResult {
  /** The HTTP status to answer Kassa with. */
  status: 200 | 400 | 401 | 403 | 500;
  reason?: string;
  payload?: WebhookPayload;
  event?: WebhookEvent;
  duplicate?: boolean;
}

/** Where processed paymentIDs are remembered. Both methods may be async (a database table). */
export interface SeenStore {
  has(paymentId: string): boolean | Promise<boolean>;
  add(paymentId: string): void | Promise<void>;
}

/** Request headers as Node's `req.headers` (any case) or a Fetch `Headers` object. */
export type HeadersLike = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface WebhookVerifierOptions {
  /** `{checkout_base_url}/v1/webhook/keys`. */
  keysUrl: string;
  /**
   * Your store's id (`kassa store create`'s `id`; the dashboard's Settings), or the ids of every store
   * this receiver serves. A body for any other store — or naming none — is rejected with 403. Leave it
   * out and every store's webhooks signed by this Kassa are accepted (with a warning): always pass it.
   */
  storeID?: string | readonly string[];
  /** Key-set cache lifetime; default 6 h, clamped to 6–12 h as the interface recommends. */
  cacheTtlMs?: number;
  /** Clock, for tests: epoch milliseconds or a Date. Default `Date.now`. */
  now?: () => number | Date;
  /** Fetch implementation, for tests or a proxy. Default the global `fetch`. */
  fetch?: typeof globalThis.fetch;
  /** Processed-paymentID store; default in-memory (see {@link createMemorySeenStore}). */
  seen?: SeenStore;
  /** Timeout of one key-set fetch; default 10 s. */
  fetchTimeoutMs?: number;
  /** Minimum time between two key-set refetches caused by unknown kids; default 10 s. */
  minRefetchIntervalMs?: number;
  /** Oldest accepted signAt; default 30 s (the interface's limit). */
  maxAgeMs?: number;
  /** Furthest accepted signAt in the future; default 5 s. */
  maxFutureMs?: number;
}

export interface WebhookVerifier {
  /** Checks signature, key id, signAt and duplicate status. Never throws. */
  verify(rawBody: string | Uint8Array, headers: HeadersLike): Promise<VerifyResult>;
  /** Records a paymentID (or an event's eventID) as processed, so that later deliveries are reported as duplicates. */
  markProcessed(id: string): Promise<void>;
  /**
   * verify → (skip a duplicate) → `onPayment(payload)`, or `onEvent(event)` for an endpoint's event →
   * markProcessed → 200. The callback throwing gives 500, so Kassa retries; an event without an
   * `onEvent` gives 400. Never throws itself.
   */
  handle(
    rawBody: string | Uint8Array,
    headers: HeadersLike,
    onPayment: (payload: WebhookPayload) => unknown,
    onEvent?: (event: WebhookEvent) => unknown,
  ): Promise<HandleResult>;
}

export const DEFAULT_CACHE_TTL_MS = 6 * 60 * 60 * 1000;
export const MAX_CACHE_TTL_MS = 12 * 60 * 60 * 1000;

/** An in-memory SeenStore keeping the most recent `maxEntries` ids (oldest forgotten first). */
export function createMemorySeenStore(maxEntries = 100_000): SeenStore {
  const ids = new Set<string>();
  return {
    has: (id) => ids.has(id),
    add: (id) => {
      ids.delete(id);
      ids.add(id);
      while (ids.size > maxEntries) {
        const oldest = ids.values().next();
        if (oldest.done === true) break;
        ids.delete(oldest.value);
      }
    },
  };
}

/** Warned once per process: a verifier without `storeID` accepts every store's webhooks. */
let warnedNoStoreId = false;

function warnNoStoreId(): void {
  if (warnedNoStoreId) return;
  warnedNoStoreId = true;
  const message =
    "createWebhookVerifier without storeID accepts every store's webhooks signed by this Kassa: another store's payment can name your receiver and your order_id. Pass storeID (your store's id).";
  const node = (globalThis as { process?: { emitWarning?: (message: string, options: { code: string }) => void } }).process;
  if (typeof node?.emitWarning === 'function') node.emitWarning(message, { code: 'KASSA_WEBHOOKS_NO_STORE_ID' });
  else console.warn(`Warning: ${message}`);
}

/**
 * Whether a body's `payload.storeID` is one of the configured stores: null when it is, else why not
 * (for a 403). Every store of a deployment signs with the same keys, so this is what ties a genuine
 * body to this receiver's store.
 */
function otherStore(stores: ReadonlySet<string> | null, storeId: unknown): string | null {
  if (stores === null) return null;
  if (typeof storeId !== 'string' || storeId === '') return "payload.storeID is missing: the body names no store, and this receiver takes only its own store's";
  if (!stores.has(storeId.toLowerCase())) return `payload.storeID "${storeId.slice(0, 64)}" is another store's: this receiver takes only its own store's`;
  return null;
}

class KeysUnavailable extends Error {
  override name = 'KeysUnavailable';
}

interface KeyCache {
  keys: Map<string, KeyObject>;
  fetchedAt: number;
}

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

function decodeBase64(text: string): Buffer | null {
  if (!BASE64.test(text)) return null;
  return Buffer.from(text.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
}

function readHeader(headers: HeadersLike, name: string): string | undefined {
  if (typeof headers.get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() !== name) continue;
    if (Array.isArray(value)) return value.length === 1 ? value[0] : undefined;
    return value;
  }
  return undefined;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class Verifier implements WebhookVerifier {
  readonly #keysUrl: string;
  readonly #ttl: number;
  readonly #now: () => number;
  readonly #fetch: (url: string, init: RequestInit) => Promise<Response>;
  readonly #seen: SeenStore;
  readonly #fetchTimeoutMs: number;
  readonly #minRefetchIntervalMs: number;
  readonly #maxAgeMs: number;
  readonly #maxFutureMs: number;
  readonly #stores: ReadonlySet<string> | null;
  #cache: KeyCache | null = null;
  #inflight: Promise<KeyCache> | null = null;
  #lastUnknownKidRefetch = Number.NEGATIVE_INFINITY;
  readonly #processing = new Map<string, Promise<boolean>>();

  constructor(options: WebhookVerifierOptions) {
    let url: URL;
    try {
      url = new URL(options.keysUrl);
    } catch {
      throw new TypeError('keysUrl must be an absolute http(s) URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError('keysUrl must be an absolute http(s) URL');
    this.#keysUrl = url.href;
    const ttl = options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS;
    this.#ttl = Number.isFinite(ttl) ? Math.min(MAX_CACHE_TTL_MS, Math.max(DEFAULT_CACHE_TTL_MS, ttl)) : DEFAULT_CACHE_TTL_MS;
    const now = options.now ?? Date.now;
    this.#now = () => {
      const value = now();
      return typeof value === 'number' ? value : value.getTime();
    };
    const fetchImpl = options.fetch ?? globalThis.fetch;
    this.#fetch = (input, init) => fetchImpl(input, init);
    this.#seen = options.seen ?? createMemorySeenStore();
    this.#fetchTimeoutMs = options.fetchTimeoutMs ?? 10_000;
    this.#minRefetchIntervalMs = options.minRefetchIntervalMs ?? 10_000;
    this.#maxAgeMs = options.maxAgeMs ?? 30_000;
    this.#maxFutureMs = options.maxFutureMs ?? 5_000;
    const stores = options.storeID === undefined ? null : typeof options.storeID === 'string' ? [options.storeID] : [...options.storeID];
    if (stores !== null && (stores.length === 0 || stores.some((id) => typeof id !== 'string' || id.trim() === ''))) {
      throw new TypeError('storeID must be your store id (a non-empty string) or a non-empty list of them');
    }
    this.#stores = stores === null ? null : new Set(stores.map((id) => id.trim().toLowerCase()));
    if (this.#stores === null) warnNoStoreId();
  }

  async #fetchKeys(): Promise<KeyCache> {
    let response: Response;
    try {
      response = await this.#fetch(this.#keysUrl, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(this.#fetchTimeoutMs),
      });
    } catch (err) {
      throw new KeysUnavailable(`key set fetch failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new KeysUnavailable(`key set answered HTTP ${response.status}`);
    }
    let document: unknown;
    try {
      document = await response.json();
    } catch {
      throw new KeysUnavailable('key set is not valid JSON');
    }
    if (!isPlainObject(document) || !Array.isArray(document.keys)) throw new KeysUnavailable('key set has no "keys" array');
    const keys = new Map<string, KeyObject>();
    for (const entry of document.keys) {
      if (!isPlainObject(entry)) continue;
      const { kid, x, kty, crv, alg, use } = entry;
      if (typeof kid !== 'string' || kid === '' || typeof x !== 'string') continue;
      // Fields beyond kid and x are optional; when present they must describe an Ed25519 signing key.
      if ((kty !== undefined && kty !== 'OKP') || (crv !== undefined && crv !== 'Ed25519')) continue;
      if ((alg !== undefined && alg !== 'EdDSA' && alg !== 'Ed25519') || (use !== undefined && use !== 'sig')) continue;
      const raw = decodeBase64(x);
      if (raw === null || raw.length !== 32) continue;
      try {
        keys.set(kid, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' }));
      } catch {
        // Not a valid Ed25519 point: ignore this key, keep the others.
      }
    }
    return { keys, fetchedAt: this.#now() };
  }

  /** Fetches the key set (coalescing concurrent callers) and replaces the cache. */
  #reload(): Promise<KeyCache> {
    if (this.#inflight === null) {
      this.#inflight = this.#fetchKeys()
        .then((cache) => {
          this.#cache = cache;
          return cache;
        })
        .finally(() => {
          this.#inflight = null;
        });
    }
    return this.#inflight;
  }

  /** The key for `kid`, or null when unknown after the refetch the contract allows. */
  async #keyFor(kid: string): Promise<KeyObject | null> {
    let cache = this.#cache;
    let fetchedNow = false;
    if (cache === null || this.#now() - cache.fetchedAt >= this.#ttl) {
      cache = await this.#reload();
      fetchedNow = true;
    }
    const key = cache.keys.get(kid);
    if (key !== undefined) return key;
    if (fetchedNow) return null; // the set is fresh from this very call: refetching tells nothing new
    const now = this.#now();
    if (now - this.#lastUnknownKidRefetch < this.#minRefetchIntervalMs) return null;
    cache = await this.#reload(); // concurrent callers share one fetch; a failed fetch does not count
    this.#lastUnknownKidRefetch = now;
    return cache.keys.get(kid) ?? null;
  }

  async verify(rawBody: string | Uint8Array, headers: HeadersLike): Promise<VerifyResult> {
    const reject = (status: 400 | 401 | 403 | 500, reason: string): VerifyResult => ({ ok: false, status, reason });
    try {
      const signatureHeader = readHeader(headers, 'x-signature')?.trim();
      const kid = readHeader(headers, 'x-signature-kid')?.trim();
      if (signatureHeader === undefined || signatureHeader === '') return reject(401, 'missing X-Signature header');
      if (kid === undefined || kid === '') return reject(401, 'missing X-Signature-Kid header');
      if (kid.length > 256) return reject(401, 'malformed X-Signature-Kid header');
      const signature = decodeBase64(signatureHeader);
      if (signature === null || signature.length !== 64) return reject(401, 'malformed X-Signature header');

      let key: KeyObject | null;
      try {
        key = await this.#keyFor(kid);
      } catch (err) {
        if (err instanceof KeysUnavailable) return reject(500, `webhook key set unavailable (${err.message})`);
        throw err;
      }
      if (key === null) return reject(401, `unknown signing key id "${kid.slice(0, 64)}"`);

      const bytes = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
      let valid = false;
      try {
        valid = verifySignature(null, bytes, key, signature);
      } catch {
        valid = false;
      }
      if (!valid) return reject(401, 'invalid signature');

      let body: unknown;
      try {
        body = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
      } catch {
        return reject(400, 'body is not valid JSON');
      }
      if (!isPlainObject(body) || !isPlainObject(body.payload)) return reject(400, 'body has no payload object');
      const payload = body.payload;
      const isEvent = 'type' in body || 'eventID' in body;
      let event: WebhookEvent | undefined;
      if (isEvent) {
        if (typeof body.type !== 'string' || body.type === '') return reject(400, 'type is missing');
        if (typeof body.eventID !== 'string' || body.eventID === '') return reject(400, 'eventID is missing');
        event = { type: body.type, eventID: body.eventID, payload };
      }
      const signAtText = body.signAt;
      if (typeof signAtText !== 'string' || !RFC3339.test(signAtText)) return reject(400, 'signAt is not an RFC 3339 time');
      const signAt = Date.parse(signAtText);
      if (Number.isNaN(signAt)) return reject(400, 'signAt is not an RFC 3339 time');
      const now = this.#now();
      if (now - signAt > this.#maxAgeMs) return reject(401, `signAt is older than ${this.#maxAgeMs / 1000} s`);
      if (signAt - now > this.#maxFutureMs) return reject(401, `signAt is more than ${this.#maxFutureMs / 1000} s in the future`);
      // In both branches the store is checked before the seen store is asked (and so before a callback
      // or markProcessed): another store's body is not this shop's at all.
      if (event !== undefined) {
        const other = otherStore(this.#stores, payload.storeID);
        if (other !== null) return reject(403, other);
        let duplicate: boolean;
        try {
          duplicate = await this.#seen.has(event.eventID);
        } catch {
          return reject(500, 'processed-payments store unavailable');
        }
        return { ok: true, event, duplicate, kid, signAt: new Date(signAt) };
      }
      const { paymentID, status, metadata } = payload;
      const orderId = payload.order_id;
      if (typeof paymentID !== 'string' || paymentID === '') return reject(400, 'payload.paymentID is missing');
      if (typeof status !== 'string') return reject(400, 'payload.status is missing');
      if (metadata !== undefined && !isPlainObject(metadata)) return reject(400, 'payload.metadata is not an object');
      if (orderId !== undefined && typeof orderId !== 'string') return reject(400, 'payload.order_id is not a string');
      const storeId = payload.storeID;
      if (storeId !== undefined && typeof storeId !== 'string') return reject(400, 'payload.storeID is not a string');
      const other = otherStore(this.#stores, storeId);
      if (other !== null) return reject(403, other);

      let duplicate: boolean;
      try {
        duplicate = await this.#seen.has(paymentID);
      } catch {
        return reject(500, 'processed-payments store unavailable');
      }
      const result: WebhookPayload = { paymentID, status, metadata: (metadata ?? {}) as Record<string, string> };
      if (typeof orderId === 'string') result.order_id = orderId;
      if (typeof storeId === 'string') result.storeID = storeId;
      return { ok: true, payload: result, duplicate, kid, signAt: new Date(signAt) };
    } catch (err) {
      return reject(500, `verification failed unexpectedly (${err instanceof Error ? err.message : String(err)})`);
    }
  }

  async markProcessed(id: string): Promise<void> {
    await this.#seen.add(id);
  }

  async handle(
    rawBody: string | Uint8Array,
    headers: HeadersLike,
    onPayment: (payload: WebhookPayload) => unknown,
    onEvent?: (event: WebhookEvent) => unknown,
  ): Promise<HandleResult> {
    const result = await this.verify(rawBody, headers);
    if (!result.ok) return { status: result.status, reason: result.reason };
    const told = result.event !== undefined ? { event: result.event } : { payload: result.payload };
    if (result.event !== undefined && onEvent === undefined) return { status: 400, reason: 'an event body, and no onEvent to handle it', ...told };
    if (result.duplicate) return { status: 200, ...told, duplicate: true };
    const id = result.event !== undefined ? result.event.eventID : result.payload.paymentID;
    // A second delivery of the same payment (or event) while the first is still being processed waits for it.
    const running = this.#processing.get(id);
    if (running !== undefined) {
      return (await running) ? { status: 200, ...told, duplicate: true } : { status: 500, reason: 'processing failed', ...told, duplicate: false };
    }
    const work = (async () => {
      try {
        if (result.event !== undefined) await onEvent!(result.event);
        else await onPayment(result.payload);
      } catch {
        return false;
      }
      try {
        await this.markProcessed(id);
      } catch {
        // Processed but not recorded: a redelivery will be processed again. Still answer 200.
      }
      return true;
    })();
    this.#processing.set(id, work);
    try {
      return (await work) ? { status: 200, ...told, duplicate: false } : { status: 500, reason: 'processing failed', ...told, duplicate: false };
    } finally {
      this.#processing.delete(id);
    }
  }
}
