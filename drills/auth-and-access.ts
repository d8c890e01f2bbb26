// Drill 7 — auth and access, along the OWASP API Security Top 10 (2023):
//   API2 broken authentication: every authenticated endpoint refuses a missing header, garbage, a
//        token signed by another key, `alg: none`, HS256 keyed with public-key material, expired,
//        revoked (`kassa token revoke`) and deleted-store tokens — each exactly the same 401;
//   API1 BOLA: another store's token on store A's payment ids → 404 payment_not_found, nothing of A
//        in the answer, lists never mix stores, idempotency keys never cross stores;
//   API3 property exposure: the public checkout endpoints show no metadata, order_id, webhook URL
//        or store id;
//   API4 resource consumption: bodies over 64 KiB → 413, rate limits → 429 with Retry-After on
//        the merchant API and the checkout, the per-client cap of event streams;
//   API5 function level: /metrics behind its token;
//   API7 SSRF: private, loopback, link-local and metadata addresses refused at creation (names
//        that merely resolve to them: refused at delivery);
//   and tokens never appear in the service's logs.
//
//   node drills/auth-and-access.ts [--long]
import crypto from 'node:crypto';
import http from 'node:http';
import { SignJWT } from 'jose';
import { issueToken } from '../src/auth/tokens.ts';
import { sql, z } from '../src/db/pool.ts';
import { createStore, parseMethodList } from '../src/stores/stores.ts';
import { postWebhook } from '../src/webhooks/send.ts';
import { kassa as kassaCli } from '../test/helpers/cli.ts';
import { documentedErrors, drill, drillDatabase, drillStore, LONG, rawRequest, startKassa, type RawResponse } from './lib.ts';

/** Store A's payments beyond the four fixed ones (BOLA and list checks go over all of them). */
const EXTRA_PAYMENTS = LONG ? 60 : 6;
/** How long the long tier holds the merchant rate limit under pressure to measure the rate it lets through. */
const SUSTAIN_SECONDS = LONG ? 10 : 0;
const RATE = 5;

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');
const DOCUMENTED = documentedErrors();

type Call = (
  method: string,
  path: string,
  options?: { token?: string; authorization?: string; body?: unknown; raw?: string | Buffer; headers?: Record<string, string> },
) => Promise<RawResponse>;

function caller(base: string): Call {
  return (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    else if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let body: string | Buffer | undefined = options.raw;
    if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    return rawRequest(base, { method, path, headers, ...(body !== undefined ? { body } : {}) });
  };
}

/** An event stream held open; `close()` ends it. */
function openStream(base: string, path: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; close: () => void }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, agent: false }, (res) => {
      let text = '';
      let settled = false;
      const done = () => {
        if (settled) return;
        settled = true;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, close: () => req.destroy() });
      };
      res.on('data', (chunk) => {
        text += chunk;
        done();
      });
      res.on('end', done);
      if (res.statusCode !== 200) res.resume();
    });
    req.on('error', reject);
    req.end();
  });
}

await drill('auth and access (OWASP API Top 10 2023)', async (report) => {
  const db = await drillDatabase();
  // The main Kassa: rate limits off, webhook URLs checked as in production.
  const kassa = await startKassa({ databaseUrl: db.url, part: 'api', env: { WEBHOOK_ALLOW_INSECURE: 'false' } });
  const a = await drillStore(db.url);
  const b = await drillStore(db.url);
  const pool = a.pool;
  const call = caller(kassa.url);
  const tokensUsed = new Set<string>([a.token, b.token]);
  let limited: Awaited<ReturnType<typeof startKassa>> | null = null;
  try {
    // ---- Store A's payments, with everything private set.
    const secret = crypto.randomBytes(6).toString('hex');
    const privateFields = {
      order_id: `order-SECRET-${secret}`,
      metadata: { customer_email: `buyer-${secret}@example.com`, internal_note: `meta-SECRET-${secret}` },
      webhookURL: `https://hooks.example.com/SECRET-hook-${secret}`,
      returnURL: `https://shop.example.com/thanks-${secret}`,
      description: 'Two coffees',
    };
    const create = async (token: string, body: Record<string, unknown>) => {
      const response = await call('POST', '/v1/payments', { token, body });
      if (response.status !== 201) throw new Error(`setup: create answered ${response.status} ${response.text}`);
      return response.json as { id: string; status: string };
    };
    const aCreated = await create(a.token, { amount: '10', currency: 'USD', ...privateFields });
    const aPending = await create(a.token, { amount: '2', currency: 'USDT', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] }, ...privateFields });
    const aToCancel = await create(a.token, { amount: '3', currency: 'USD', ...privateFields });
    const aEnded = await create(a.token, { amount: '4', currency: 'USD', ...privateFields });
    await call('POST', `/v1/payments/${aEnded.id}/cancel`, { token: a.token });
    const aIds = [aCreated.id, aPending.id, aToCancel.id, aEnded.id];
    for (let i = 0; i < EXTRA_PAYMENTS; i++) aIds.push((await create(a.token, { amount: String(i + 1), currency: 'EUR', order_id: `a-${i}-${secret}` })).id);
    const bIds = [
      (await create(b.token, { amount: '5', currency: 'USD' })).id,
      (await create(b.token, { amount: '6', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } })).id,
    ];
    const privateStrings = [
      privateFields.order_id,
      privateFields.metadata.customer_email,
      privateFields.metadata.internal_note,
      privateFields.webhookURL,
      `SECRET-hook-${secret}`,
      a.storeId,
      'customer_email',
      'internal_note',
      'order_id',
      'webhookURL',
      'store_id',
      'storeId',
    ];
    const count = () => pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments`);
    const statusOf = (id: string) => pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from payments where id = ${id}`);

    // ---- The authenticated endpoints: the known ones, the OpenAPI document's, the webhook routes when mounted.
    type Endpoint = { method: string; path: string; body?: unknown };
    const createBody = { amount: '1', currency: 'USD' };
    const invoiceBody = { invoiceType: 'FIAT', fiatAmount: '1', fiatCurrency: 'USD' };
    const endpoints: Endpoint[] = [
      { method: 'GET', path: '/v1/payment-methods' },
      { method: 'GET', path: '/v1/payments/methods' },
      { method: 'POST', path: '/v1/payments', body: createBody },
      { method: 'POST', path: '/v1/payments/create', body: invoiceBody },
      { method: 'GET', path: '/v1/payments' },
      { method: 'GET', path: '/v1/payments/:id' },
      { method: 'GET', path: '/v1/payments/:id/status' },
      { method: 'GET', path: '/v1/payments/:id/transfers' },
      { method: 'POST', path: '/v1/payments/:id/cancel', body: {} },
    ];
    const spec = (await call('GET', '/openapi.json')).json as { paths: Record<string, Record<string, { security?: unknown[] }>> };
    for (const [specPath, operations] of Object.entries(spec.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (Array.isArray(operation.security) && operation.security.length === 0) continue;
        const path = specPath.replace(/\{[^}]+\}/g, ':id');
        if (!endpoints.some((e) => e.method === method.toUpperCase() && e.path === path))
          endpoints.push({ method: method.toUpperCase(), path, ...(method === 'post' ? { body: {} } : {}) });
      }
    }
    const notMounted: string[] = [];
    for (const candidate of [
      { method: 'GET', path: '/v1/payments/:id/webhook-deliveries' },
      { method: 'POST', path: '/v1/payments/:id/webhook/redeliver', body: {} },
    ]) {
      if (endpoints.some((e) => e.method === candidate.method && e.path === candidate.path)) continue;
      const probe = await call(candidate.method, candidate.path.replace(':id', aCreated.id), {
        token: a.token,
        ...(candidate.body ? { body: candidate.body } : {}),
      });
      if (probe.json?.error?.code === 'route_not_found') notMounted.push(`${candidate.method} ${candidate.path}`);
      else endpoints.push(candidate);
    }
    const pathOf = (endpoint: Endpoint, id = aToCancel.id) => endpoint.path.replace(':id', id);
    const control: string[] = [];
    for (const endpoint of endpoints) {
      if (endpoint.method === 'POST' && endpoint.path.endsWith('/cancel')) continue; // the cancel target stays open for the refusals
      const response = await call(endpoint.method, pathOf(endpoint, endpoint.path.includes('/webhook/') ? aCreated.id : aPending.id), {
        token: a.token,
        ...(endpoint.body ? { body: endpoint.body } : {}),
      });
      if (response.status === 401 || response.status >= 500) control.push(`${endpoint.method} ${endpoint.path} ${response.status}`);
    }
    report.check(
      `A's valid token works on every authenticated endpoint (control)`,
      control.length === 0,
      `${endpoints.length} endpoints${notMounted.length ? `; not mounted in this build: ${notMounted.join(', ')}` : ''}${control.length ? `; refused: ${control.join(', ')}` : ''}`,
    );

    // ---- API2: broken credentials, all refused the same way.
    const [headerPart, payloadPart, signaturePart] = a.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payloadPart, 'base64url').toString()) as { sub: string; jti: string; iat: number };
    const der = await pool.oneFirst(
      sql.type(z.object({ secret: z.instanceof(Buffer) }))`select secret from service_secrets where name = 'api_token_signing_key'`,
    );
    const serviceKey = crypto.createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    const servicePublic = crypto.createPublicKey(serviceKey);
    const publicJwk = servicePublic.export({ format: 'jwk' }) as { x: string };
    const webhookKeys = (await call('GET', '/pay/v1/webhook/keys')).json as { keys: Array<{ x: string }> };
    const attacker = crypto.generateKeyPairSync('ed25519');
    const hmac = (algorithm: 'sha256' | 'sha384' | 'sha512', alg: string, key: crypto.BinaryLike) => {
      const header = b64url(JSON.stringify({ alg, typ: 'JWT' }));
      return `${header}.${payloadPart}.${crypto.createHmac(algorithm, key).update(`${header}.${payloadPart}`).digest('base64url')}`;
    };
    const signWith = (key: crypto.KeyObject, payload: Record<string, unknown>, header: Record<string, unknown> = { alg: 'EdDSA', typ: 'JWT' }) =>
      new SignJWT(payload).setProtectedHeader(header as never).sign(key);
    const expired = await issueToken(pool, a.storeId, 60, new Date(Date.now() - 3600_000));
    const toRevoke = await issueToken(pool, a.storeId, null, new Date());
    const storeC = await createStore(pool, `Drill deleted ${Date.now()}`, parseMethodList('TON/TON'));
    const deleted = await issueToken(pool, storeC.id, null, new Date());
    const beforeRevoke = await call('GET', '/v1/payment-methods', { token: toRevoke.token });
    const beforeDelete = await call('GET', '/v1/payment-methods', { token: deleted.token });
    const revoke = await kassaCli(['token', 'revoke', toRevoke.jti], { DATABASE_URL: db.url });
    await pool.query(sql.typeAlias('void')`delete from stores where id = ${storeC.id}`);
    report.check(
      'revoked and deleted-store tokens worked before',
      beforeRevoke.status === 200 && beforeDelete.status === 200 && revoke.code === 0,
      `before: ${beforeRevoke.status}, ${beforeDelete.status}; kassa token revoke exit ${revoke.code} ${revoke.stdout.trim()}`,
    );

    const now = Math.floor(Date.now() / 1000);
    const bad: Array<[string, string | undefined]> = [
      ['no Authorization header', undefined],
      ['empty bearer', 'Bearer '],
      ['garbage', 'Bearer garbage'],
      ['three empty-ish parts', 'Bearer a.b.c'],
      ['Basic scheme', `Basic ${Buffer.from(`${a.storeId}:${a.token}`).toString('base64')}`],
      ['token without scheme', a.token],
      ['token and junk', `Bearer ${a.token} ${a.token}`],
      ['signed by another Ed25519 key', `Bearer ${await signWith(attacker.privateKey, claims)}`],
      [
        'embedded jwk of the attacker',
        `Bearer ${await signWith(attacker.privateKey, claims, { alg: 'EdDSA', jwk: attacker.publicKey.export({ format: 'jwk' }) })}`,
      ],
      [
        'jku/kid injection',
        `Bearer ${await signWith(attacker.privateKey, claims, { alg: 'EdDSA', jku: 'https://evil.example/jwks.json', kid: '../../../dev/null' })}`,
      ],
      ['alg none, no signature', `Bearer ${b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${payloadPart}.`],
      ['alg none, signature kept', `Bearer ${b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${payloadPart}.${signaturePart}`],
      ['alg NONE', `Bearer ${b64url(JSON.stringify({ alg: 'NONE' }))}.${payloadPart}.`],
      ['HS256 keyed with the token public key (PEM)', `Bearer ${hmac('sha256', 'HS256', servicePublic.export({ format: 'pem', type: 'spki' }) as string)}`],
      ['HS256 keyed with the token public key (DER)', `Bearer ${hmac('sha256', 'HS256', servicePublic.export({ format: 'der', type: 'spki' }))}`],
      ['HS256 keyed with the raw public key', `Bearer ${hmac('sha256', 'HS256', Buffer.from(publicJwk.x, 'base64url'))}`],
      ['HS256 keyed with the JWK x', `Bearer ${hmac('sha256', 'HS256', publicJwk.x)}`],
      ['HS256 keyed with the published webhook key', `Bearer ${hmac('sha256', 'HS256', webhookKeys.keys[0]!.x)}`],
      ['HS256 keyed with the webhook key bytes', `Bearer ${hmac('sha256', 'HS256', Buffer.from(webhookKeys.keys[0]!.x, 'base64'))}`],
      ['HS512 keyed with the token public key (PEM)', `Bearer ${hmac('sha512', 'HS512', servicePublic.export({ format: 'pem', type: 'spki' }) as string)}`],
      ['ES256 by an attacker key', `Bearer ${await signWith(crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, claims, { alg: 'ES256' })}`],
      ['payload swapped to store B, signature kept', `Bearer ${headerPart}.${b64url(JSON.stringify({ ...claims, sub: b.storeId }))}.${signaturePart}`],
      ['signature truncated', `Bearer ${headerPart}.${payloadPart}.${signaturePart.slice(0, 20)}`],
      ['signature of another token', `Bearer ${headerPart}.${payloadPart}.${b.token.split('.')[2]}`],
      ['expired', `Bearer ${expired.token}`],
      ['revoked with kassa token revoke', `Bearer ${toRevoke.token}`],
      ['of a deleted store', `Bearer ${deleted.token}`],
      // Signed with the service's real key (read from the database): only the database checks stop these.
      ['real key, jti never issued', `Bearer ${await signWith(serviceKey, { sub: a.storeId, jti: crypto.randomUUID(), iat: now })}`],
      ["real key, sub of store B with A's jti", `Bearer ${await signWith(serviceKey, { sub: b.storeId, jti: claims.jti, iat: now })}`],
      ['real key, no jti', `Bearer ${await signWith(serviceKey, { sub: a.storeId, iat: now })}`],
      ['real key, exp in the past', `Bearer ${await signWith(serviceKey, { ...claims, exp: now - 60 })}`],
      ['real key, nbf in the future', `Bearer ${await signWith(serviceKey, { ...claims, nbf: now + 3600 })}`],
      [
        'real key, alg Ed25519 but a non-UUID jti',
        `Bearer ${await signWith(serviceKey, { sub: a.storeId, jti: "' or 1=1 --", iat: now }, { alg: 'Ed25519' })}`,
      ],
    ];
    for (const [, header] of bad) if (header) tokensUsed.add(header.replace(/^\w+ /, ''));
    tokensUsed.add(expired.token).add(toRevoke.token).add(deleted.token);

    const paymentsBefore = await count();
    const bodies = new Set<string>();
    const wrong: string[] = [];
    for (const [name, authorization] of bad) {
      for (const endpoint of endpoints) {
        const response = await call(endpoint.method, pathOf(endpoint), {
          ...(authorization !== undefined ? { authorization } : {}),
          ...(endpoint.body ? { body: endpoint.body } : {}),
        });
        bodies.add(response.text);
        const ok =
          response.status === 401 &&
          response.json?.error?.type === 'authentication_error' &&
          response.json?.error?.code === 'auth_invalid' &&
          response.json?.error?.param === undefined &&
          response.headers['www-authenticate'] === 'Bearer';
        if (!ok) wrong.push(`${name} on ${endpoint.method} ${endpoint.path}: ${response.status} ${response.text.slice(0, 120)}`);
      }
    }
    for (const line of wrong.slice(0, 10)) process.stdout.write(`auth problem: ${line}\n`);
    report.check(
      `${bad.length} broken credentials × ${endpoints.length} endpoints: 401 auth_invalid + WWW-Authenticate: Bearer`,
      wrong.length === 0,
      `${bad.length * endpoints.length} requests, ${wrong.length} not refused as required`,
    );
    report.check('every refusal has the identical body (no hint which check failed)', bodies.size === 1, `${bodies.size} distinct bodies`);
    const paymentsAfter = await count();
    report.check(
      'refused requests changed nothing',
      paymentsAfter === paymentsBefore && (await statusOf(aToCancel.id)) === 'created',
      `${paymentsAfter - paymentsBefore} payments created; cancel target ${await statusOf(aToCancel.id)}`,
    );

    // ---- API1: BOLA — store B's valid token on store A's payments.
    // A payment's endpoints (/v1/payments/:id…); a store's other resources (payment links, webhook
    // endpoints) answer their own not-found codes to another store's token, tested in
    // test/http/payment-links.test.ts and test/webhooks/endpoints.test.ts.
    const perPayment = endpoints.filter((e) => e.path.startsWith('/v1/payments/:id'));
    const randomAnswers = new Map<string, string>();
    for (const endpoint of perPayment) {
      const response = await call(endpoint.method, pathOf(endpoint, crypto.randomUUID()), {
        token: b.token,
        ...(endpoint.body ? { body: endpoint.body } : {}),
      });
      randomAnswers.set(`${endpoint.method} ${endpoint.path}`, `${response.status} ${response.text}`);
    }
    const bola: string[] = [];
    const leaks: string[] = [];
    let bolaRequests = 0;
    const statusesBefore = await Promise.all(aIds.map(statusOf));
    for (const id of aIds) {
      for (const variant of [id, id.toUpperCase()]) {
        for (const endpoint of perPayment) {
          bolaRequests += 1;
          const response = await call(endpoint.method, pathOf(endpoint, variant), {
            token: b.token,
            ...(endpoint.body ? { body: endpoint.body } : {}),
            headers: endpoint.method === 'POST' ? { 'x-idempotency-key': crypto.randomUUID() } : {},
          });
          if (response.status !== 404 || response.json?.error?.code !== 'payment_not_found')
            bola.push(`${endpoint.method} ${endpoint.path} → ${response.status} ${response.text.slice(0, 100)}`);
          for (const text of [id, ...privateStrings.slice(0, 6)])
            if (response.text.toLowerCase().includes(text.toLowerCase())) leaks.push(`${endpoint.method} ${endpoint.path} shows ${text}`);
          if (response.text !== randomAnswers.get(`${endpoint.method} ${endpoint.path}`)!.slice(4))
            leaks.push(`${endpoint.method} ${endpoint.path}: answer differs from an unknown id's`);
        }
      }
    }
    const statusesAfter = await Promise.all(aIds.map(statusOf));
    for (const line of [...bola, ...leaks].slice(0, 10)) process.stdout.write(`bola problem: ${line}\n`);
    report.check(
      `BOLA: B's token on A's ${aIds.length} payments × ${perPayment.length} per-payment endpoints → 404 payment_not_found`,
      bola.length === 0,
      `${bolaRequests} requests (ids as given and upper-cased), ${bola.length} not 404`,
    );
    report.check("BOLA: the 404 shows nothing of A and equals an unknown id's", leaks.length === 0, `${leaks.length} differences or leaks`);
    report.check(
      "BOLA: A's payments unchanged (B's cancels did nothing)",
      statusesAfter.every((status, i) => status === statusesBefore[i]),
      `${statusesAfter.filter((s, i) => s !== statusesBefore[i]).length} changed`,
    );

    // Lists never mix stores; a cursor of another store's payment is answered like an unknown one.
    const listed = async (token: string) => {
      const ids: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < 50; page++) {
        const response = await call('GET', `/v1/payments?limit=100${after ? `&starting_after=${after}` : ''}`, { token });
        const data = (response.json?.data ?? []) as Array<{ id: string }>;
        ids.push(...data.map((p) => p.id));
        if (!response.json?.has_more || data.length === 0) break;
        after = data.at(-1)!.id;
      }
      return ids;
    };
    const bList = await listed(b.token);
    const aList = await listed(a.token);
    const filtered: string[] = [];
    for (const status of ['created', 'pending', 'completed', 'expired', 'cancelled']) {
      const response = await call('GET', `/v1/payments?status=${status}&limit=100`, { token: b.token });
      filtered.push(...((response.json?.data ?? []) as Array<{ id: string }>).map((p) => p.id));
    }
    const cursorA = await call('GET', `/v1/payments?starting_after=${aCreated.id}`, { token: b.token });
    const cursorRandom = await call('GET', `/v1/payments?starting_after=${crypto.randomUUID()}`, { token: b.token });
    const mixed = [...bList, ...filtered].filter((id) => aIds.includes(id)).length + aList.filter((id) => bIds.includes(id)).length;
    report.check(
      "lists never show another store's payments",
      mixed === 0 && bList.length >= bIds.length && aList.length >= aIds.length,
      `B lists ${bList.length}, A lists ${aList.length}, ${mixed} of the other store`,
    );
    report.check(
      "a cursor of another store's payment is answered like an unknown one",
      cursorA.status === 400 && cursorA.text === cursorRandom.text,
      `${cursorA.status} ${cursorA.json?.error?.code}`,
    );

    // Idempotency keys are scoped to the store: B reusing A's key gets its own payment, never A's.
    const key = crypto.randomUUID();
    const first = await call('POST', '/v1/payments', { token: a.token, body: { amount: '7', currency: 'USD' }, headers: { 'x-idempotency-key': key } });
    const same = await call('POST', '/v1/payments', { token: b.token, body: { amount: '7', currency: 'USD' }, headers: { 'x-idempotency-key': key } });
    const other = await call('POST', '/v1/payments', {
      token: b.token,
      body: { amount: '8', currency: 'USD' },
      headers: { 'x-idempotency-key': crypto.randomUUID() },
    });
    const otherSameKey = await call('POST', '/v1/payments', { token: b.token, body: { amount: '9', currency: 'EUR' }, headers: { 'x-idempotency-key': key } });
    report.check(
      'idempotency keys never cross stores',
      first.status === 201 &&
        same.status === 201 &&
        same.json.id !== first.json.id &&
        same.headers['idempotent-replayed'] === undefined &&
        other.status === 201 &&
        otherSameKey.status === 422,
      `A ${first.status}; B same key+body ${same.status} (${same.json?.id === first.json?.id ? "A's payment!" : 'its own'}); B same key, other body ${otherSameKey.status} (its own earlier use)`,
    );

    // ---- API3: the public checkout shows nothing private.
    const publicAnswers: Array<[string, string]> = [];
    const grab = async (label: string, method: string, path: string, options: Parameters<Call>[2] = {}) => {
      const response = await call(method, path, options);
      publicAnswers.push([`${label} ${response.status}`, `${JSON.stringify(response.headers)}\n${response.text}`]);
      return response;
    };
    for (const id of [aCreated.id, aPending.id]) {
      await grab('page en', 'GET', `/pay/${id}`);
      await grab('page ru', 'GET', `/pay/${id}?lang=ru`, { headers: { 'accept-language': 'ru' } });
      await grab('json', 'GET', `/pay/v1/checkout/payments/${id}`);
      const stream = await openStream(kassa.url, `/pay/v1/checkout/payments/${id}/events`);
      stream.close();
      publicAnswers.push([`events ${stream.status}`, stream.text]);
    }
    const methods = (await call('GET', '/v1/payment-methods', { token: a.token })).json.data as Array<{ id: string; coin: { symbol: string } }>;
    await grab('choose method', 'POST', `/pay/v1/checkout/payments/${aCreated.id}/method`, {
      body: { paymentMethodID: methods.find((m) => m.coin.symbol === 'TON')!.id },
    });
    await grab('choose again (409)', 'POST', `/pay/v1/checkout/payments/${aCreated.id}/method`, { body: { paymentMethodID: methods[0]!.id } });
    await grab('page ended', 'GET', `/pay/${aEnded.id}`);
    await grab('json ended', 'GET', `/pay/v1/checkout/payments/${aEnded.id}`);
    await grab('unknown id', 'GET', `/pay/v1/checkout/payments/${crypto.randomUUID()}`);
    await grab('webhook keys', 'GET', '/pay/v1/webhook/keys');
    const exposed: string[] = [];
    for (const [label, text] of publicAnswers) {
      for (const needle of [...privateStrings, a.token, claims.jti, 'metadata']) if (text.includes(needle)) exposed.push(`${label}: ${needle}`);
    }
    const jsonView = await call('GET', `/pay/v1/checkout/payments/${aEnded.id}`);
    report.check(
      'public checkout endpoints show no metadata, order_id, webhook URL, store id',
      exposed.length === 0 && publicAnswers.length >= 12,
      `${publicAnswers.length} answers (page en/ru, JSON, events, method choice, ended, 404) grepped; ${exposed.length ? exposed.slice(0, 4).join('; ') : 'nothing found'}`,
    );
    report.check(
      'the public JSON view has only the documented fields',
      Object.keys(jsonView.json).every((k) =>
        ['id', 'status', 'amount', 'currency', 'store', 'description', 'timer', 'paymentDetails', 'returnURL'].includes(k),
      ) && Object.keys(jsonView.json.store).join() === 'name',
      Object.keys(jsonView.json).join(', '),
    );
    const page = await call('GET', `/pay/${aPending.id}`);
    const headersOk =
      page.headers['cache-control'] === 'no-store' &&
      String(page.headers['content-security-policy'] ?? '').includes("default-src 'none'") &&
      page.headers['x-frame-options'] === 'DENY' &&
      page.headers['referrer-policy'] === 'no-referrer' &&
      page.headers['x-content-type-options'] === 'nosniff';
    report.check(
      'the checkout page: no-store, strict CSP, no framing, no referrer',
      headersOk,
      `CSP: ${String(page.headers['content-security-policy']).slice(0, 60)}…`,
    );

    // ---- API4: resource consumption.
    const big = JSON.stringify({ amount: '1', currency: 'USD', description: 'x'.repeat(70 * 1024) });
    const tooLarge = [
      await call('POST', '/v1/payments', { token: a.token, raw: big }),
      await rawRequest(kassa.url, {
        method: 'POST',
        path: '/v1/payments',
        headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' },
        body: big,
        chunked: true,
      }),
      await call('POST', '/v1/payments', { raw: big }),
      await call('POST', `/pay/v1/checkout/payments/${aPending.id}/method`, { raw: big }),
      await rawRequest(kassa.url, {
        method: 'POST',
        path: `/pay/v1/checkout/payments/${aPending.id}/method`,
        headers: { 'content-type': 'application/json' },
        body: big,
        chunked: true,
      }),
    ];
    report.check(
      'bodies over 64 KiB → 413 payload_too_large (declared or chunked, with or without a token)',
      tooLarge.every((r) => r.status === 413 && r.json?.error?.code === 'payload_too_large'),
      tooLarge.map((r) => r.status).join(' '),
    );
    const nearLimit = await call('POST', '/v1/payments', {
      token: a.token,
      raw: JSON.stringify({ amount: '1', currency: 'USD', description: 'x'.repeat(60 * 1024) }),
    });
    const deep = await call('POST', '/v1/payments', {
      token: a.token,
      raw: `{"amount":"1","currency":"USD","metadata":${'{"a":'.repeat(10_000)}"x"${'}'.repeat(10_000)}}`,
    });
    const deepArray = await call('POST', '/v1/payments', { token: a.token, raw: '['.repeat(60_000) + ']'.repeat(4) });
    const wide = await call('POST', '/v1/payments', {
      token: a.token,
      body: { amount: '1', currency: 'USD', metadata: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])) },
    });
    const limit = await call('GET', '/v1/payments?limit=101', { token: a.token });
    report.check(
      'under the limit, oversized and deep input is refused by validation, not by a crash',
      nearLimit.status === 400 && deep.status === 400 && deepArray.status === 400 && wide.status === 400 && limit.status === 400,
      `60 KiB description ${nearLimit.status} ${nearLimit.json?.error?.code}; 10,000-deep metadata ${deep.status} ${deep.json?.error?.code}; 60,000-deep array ${deepArray.status}; 11 metadata keys ${wide.status}; limit=101 ${limit.status} ${limit.json?.error?.code}`,
    );

    // The per-client cap of open event streams (50): the 51st is 429.
    const streams = [];
    for (let i = 0; i < 50; i++) streams.push(await openStream(kassa.url, `/pay/v1/checkout/payments/${aPending.id}/events`));
    const overCap = await openStream(kassa.url, `/pay/v1/checkout/payments/${aPending.id}/events`);
    for (const stream of streams) stream.close();
    overCap.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const again = await openStream(kassa.url, `/pay/v1/checkout/payments/${aPending.id}/events`);
    again.close();
    report.check(
      'event streams per client are capped (51st → 429 + Retry-After)',
      streams.every((s) => s.status === 200) && overCap.status === 429 && overCap.headers['retry-after'] !== undefined && again.status === 200,
      `50 × ${streams[0]?.status}, then ${overCap.status} (Retry-After ${overCap.headers['retry-after']}); after closing: ${again.status}`,
    );

    // Rate limits: a second Kassa on the same database with RATE_LIMIT_PER_STORE=5, RATE_LIMIT_PER_CLIENT=5.
    const metricsToken = crypto.randomBytes(16).toString('hex');
    limited = await startKassa({
      databaseUrl: db.url,
      part: 'api',
      env: { RATE_LIMIT_PER_STORE: String(RATE), RATE_LIMIT_PER_CLIENT: String(RATE), WEBHOOK_ALLOW_INSECURE: 'false', METRICS_TOKEN: metricsToken },
    });
    const limitedCall = caller(limited.url);
    // The bucket holds 2 × RATE and refills RATE per second, also while a burst is being answered
    // (slowly, on a loaded machine): what may pass is the full bucket plus what refilled meanwhile.
    const mayPass = (elapsedMs: number) => 2 * RATE + Math.ceil((elapsedMs / 1000) * RATE);
    const burst = async (label: string, send: () => Promise<RawResponse>, n = 30) => {
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: n }, send));
      const elapsedMs = performance.now() - started;
      const ok = answers.filter((r) => r.status !== 429).length;
      const refused = answers.filter((r) => r.status === 429);
      const wellFormed = refused.every(
        (r) =>
          Number(r.headers['retry-after']) >= 1 &&
          (r.json
            ? r.json.error?.code === 'rate_limit_exceeded' && r.json.error.type === 'rate_limit_error'
            : String(r.headers['content-type']).startsWith('text/html')),
      );
      return {
        label,
        ok,
        refused: refused.length,
        wellFormed,
        retryAfter: refused[0]?.headers['retry-after'],
        limitHeader: answers[0]?.headers['ratelimit-limit'],
        allowed: mayPass(elapsedMs),
        elapsedMs,
      };
    };
    const merchantBurst = await burst('merchant GET /v1/payments', () => limitedCall('GET', '/v1/payments?limit=1', { token: a.token }));
    const otherStore = await limitedCall('GET', '/v1/payments?limit=1', { token: b.token });
    const refill = () => new Promise((resolve) => setTimeout(resolve, 2200)); // an empty bucket (10) is full again after 2 s
    await refill();
    const merchantCreate = await burst('merchant POST /v1/payments', () =>
      limitedCall('POST', '/v1/payments', { token: a.token, body: { amount: '1', currency: 'USD' } }),
    );
    await new Promise((resolve) => setTimeout(resolve, Number(merchantCreate.retryAfter ?? 1) * 1000));
    const recovered = await limitedCall('GET', '/v1/payments?limit=1', { token: a.token });
    report.check(
      `merchant API: 429 + Retry-After past the burst (RATE_LIMIT_PER_STORE=${RATE})`,
      merchantBurst.refused > 0 &&
        merchantBurst.ok <= merchantBurst.allowed &&
        merchantBurst.wellFormed &&
        merchantCreate.refused > 0 &&
        merchantCreate.wellFormed,
      `30 reads at once: ${merchantBurst.ok} × 200 (at most ${merchantBurst.allowed} in ${Math.round(merchantBurst.elapsedMs)} ms), ${merchantBurst.refused} × 429 (Retry-After ${merchantBurst.retryAfter}, RateLimit-Limit ${merchantBurst.limitHeader}); 30 creates: ${merchantCreate.ok} × 201, ${merchantCreate.refused} × 429`,
    );
    report.check('after Retry-After seconds the store is served again', recovered.status === 200, `waited ${merchantCreate.retryAfter} s: ${recovered.status}`);
    report.check("one store's exhausted bucket does not limit another store", otherStore.status === 200, `store B at once after: ${otherStore.status}`);
    const publicBursts = [];
    for (const [label, send] of [
      ['checkout JSON', () => limitedCall('GET', `/pay/v1/checkout/payments/${aPending.id}`)],
      ['checkout page', () => limitedCall('GET', `/pay/${aPending.id}`)],
      ['method choice', () => limitedCall('POST', `/pay/v1/checkout/payments/${aToCancel.id}/method`, { body: { paymentMethodID: crypto.randomUUID() } })],
      ['webhook keys', () => limitedCall('GET', '/pay/v1/webhook/keys')],
    ] as const) {
      publicBursts.push(await burst(label, send));
      await refill();
    }
    report.check(
      `public checkout: 429 + Retry-After past the burst (RATE_LIMIT_PER_CLIENT=${RATE})`,
      publicBursts.every((p) => p.refused > 0 && p.wellFormed),
      `${publicBursts.map((p) => `${p.label} ${p.ok}/${p.refused}`).join(', ')} (answered/429 of 30 at once, the bucket full before each)`,
    );
    // Forged tokens: past RATE_LIMIT_PER_CLIENT failures per second (bursts of twice that) a client is
    // refused before any signature is verified; a token this process verified before still passes.
    const [forgedHeader, forgedPayload] = a.token.split('.');
    const forgedStarted = performance.now();
    const forged = await Promise.all(
      Array.from({ length: 30 }, () =>
        limitedCall('GET', '/v1/payments?limit=1', { token: `${forgedHeader}.${forgedPayload}.${crypto.randomBytes(64).toString('base64url')}` }),
      ),
    );
    const forgedAllowed = mayPass(performance.now() - forgedStarted);
    const forged401 = forged.filter((r) => r.status === 401 && r.json?.error?.code === 'auth_invalid').length;
    const forged429 = forged.filter((r) => r.status === 429 && r.json?.error?.code === 'rate_limit_exceeded' && Number(r.headers['retry-after']) >= 1).length;
    const knownDuringBlock = await limitedCall('GET', '/v1/payments?limit=1', { token: a.token });
    report.check(
      `forged tokens: 401 up to the failure budget, then 429 before verifying (RATE_LIMIT_PER_CLIENT=${RATE}); a known token still served`,
      forged401 > 0 && forged401 <= forgedAllowed && forged429 > 0 && forged401 + forged429 === forged.length && knownDuringBlock.status === 200,
      `30 forged at once: ${forged401} × 401 (at most ${forgedAllowed}), ${forged429} × 429, ${forged.length - forged401 - forged429} other; store A's token meanwhile: ${knownDuringBlock.status}`,
    );
    await refill();
    if (SUSTAIN_SECONDS > 0) {
      // Hold the bucket under pressure (about 4× the rate) and measure what gets through.
      await new Promise((resolve) => setTimeout(resolve, 2 * 1000));
      let served = 0;
      let refused = 0;
      const until = Date.now() + SUSTAIN_SECONDS * 1000;
      while (Date.now() < until) {
        const response = await limitedCall('GET', '/v1/payments?limit=1', { token: a.token });
        if (response.status === 200) served += 1;
        else if (response.status === 429) refused += 1;
        await new Promise((resolve) => setTimeout(resolve, 1000 / (4 * RATE)));
      }
      const sustained = (served - 2 * RATE) / SUSTAIN_SECONDS;
      report.check(
        `sustained: about ${RATE} requests/s get through`,
        Math.abs(sustained - RATE) <= 1.5,
        `${served} served, ${refused} refused in ${SUSTAIN_SECONDS} s → ${sustained.toFixed(1)}/s beyond the burst of ${2 * RATE}`,
      );
      report.figure('sustained rate let through (limit 5/s)', `${sustained.toFixed(2)}/s`);
    }

    // ---- API5: /metrics behind its token (with METRICS_TOKEN set).
    const metricsNone = await limitedCall('GET', '/metrics');
    const metricsMerchant = await limitedCall('GET', '/metrics', { token: a.token });
    const metricsRight = await limitedCall('GET', '/metrics', { authorization: `Bearer ${metricsToken}` });
    report.check(
      '/metrics: 404 without its token (a store token is not it), 200 with it',
      metricsNone.status === 404 && metricsMerchant.status === 404 && metricsRight.status === 200,
      `${metricsNone.status} / ${metricsMerchant.status} / ${metricsRight.status}`,
    );

    // ---- API7: SSRF — webhookURL and returnURL (WEBHOOK_ALLOW_INSECURE off).
    const refusedUrls = [
      'http://example.com/hook',
      'https://localhost/hook',
      'https://LOCALHOST./hook',
      'https://api.localhost/hook',
      'https://127.0.0.1/hook',
      'https://127.1/hook',
      'https://2130706433/hook',
      'https://0x7f.0.0.1/hook',
      'https://0177.0.0.1/hook',
      'https://0.0.0.0/hook',
      'https://10.0.0.1/hook',
      'https://172.16.0.1/hook',
      'https://172.31.255.254/hook',
      'https://192.168.1.1/hook',
      'https://100.64.0.1/hook',
      'https://169.254.169.254/latest/meta-data/',
      'https://169.254.170.2/v2/credentials',
      'https://[::1]/hook',
      'https://[::]/hook',
      'https://[fe80::1]/hook',
      'https://[fd00:ec2::254]/latest/meta-data/',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:a9fe:a9fe]/hook',
      'https://metadata.google.internal/computeMetadata/v1/',
      'https://metadata/hook',
      'https://printer.local/hook',
      'https://user:pass@example.com/hook',
      'https://example.com/hook#fragment',
      'file:///etc/passwd',
      'gopher://example.com:70/_x',
      'ftp://example.com/x',
      'javascript:alert(1)',
      `https://example.com/${'a'.repeat(520)}`,
    ];
    const ssrf: string[] = [];
    for (const url of refusedUrls) {
      for (const [field, code] of [
        ['webhookURL', 'invalid_webhook_url'],
        ['returnURL', 'invalid_return_url'],
      ] as const) {
        for (const [path, body] of [
          ['/v1/payments', { amount: '1', currency: 'USD' }],
          ['/v1/payments/create', { invoiceType: 'FIAT', fiatAmount: '1', fiatCurrency: 'USD' }],
        ] as const) {
          const response = await call('POST', path, { token: a.token, body: { ...body, [field]: url } });
          if (response.status !== 400 || response.json?.error?.code !== code || response.json?.error?.param !== field)
            ssrf.push(`${field}=${url} on ${path}: ${response.status} ${response.json?.error?.code}`);
        }
      }
    }
    for (const line of ssrf.slice(0, 10)) process.stdout.write(`ssrf problem: ${line}\n`);
    report.check(
      `SSRF: ${refusedUrls.length} private/loopback/link-local/metadata/odd URLs refused at creation`,
      ssrf.length === 0,
      `${refusedUrls.length * 4} requests (webhookURL, returnURL × both creates), ${ssrf.length} accepted`,
    );
    const resolving = ['https://127.0.0.1.nip.io/hook', 'https://169.254.169.254.nip.io/latest', 'https://10-0-0-1.sslip.io/hook', 'https://localtest.me/hook'];
    const atCreation = await Promise.all(
      resolving.map((url) => call('POST', '/v1/payments', { token: a.token, body: { amount: '1', currency: 'USD', webhookURL: url } })),
    );
    const resolvesTo: Record<string, string> = {
      '127.0.0.1.nip.io': '127.0.0.1',
      '169.254.169.254.nip.io': '169.254.169.254',
      '10-0-0-1.sslip.io': '10.0.0.1',
      'localtest.me': '127.0.0.1',
    };
    const atDelivery = await Promise.all(
      resolving.map((url) =>
        postWebhook({ url, body: '{}', timeoutMs: 5000, lookup: async (host) => [{ address: resolvesTo[host] ?? '203.0.113.1', family: 4 }] }),
      ),
    );
    report.check(
      'SSRF: names that resolve to private IPs: allowed at creation, refused at delivery',
      atCreation.every((r) => r.status === 201) && atDelivery.every((r) => !r.ok && /refused$/.test(r.error ?? '')),
      `creation ${atCreation.map((r) => r.status).join('/')} (by design: a name can point anywhere later); delivery (postWebhook, resolver stubbed with what these names resolve to): ${atDelivery[0]?.error}`,
    );

    // ---- No token in the logs (both processes), and none echoed in an answer.
    const logs = `${kassa.output()}\n${limited.output()}`;
    const inLogs = [...tokensUsed].filter((token) => token.length > 20 && logs.includes(token));
    const signatures = [a.token, b.token, expired.token, toRevoke.token, deleted.token].map((t) => t.split('.')[2]!).filter((sig) => logs.includes(sig));
    report.check(
      'no token (nor a signature) in the service logs',
      inLogs.length === 0 && signatures.length === 0 && !/authorization/i.test(logs),
      `${tokensUsed.size} tokens grepped in ${logs.split('\n').length} log lines; ${inLogs.length + signatures.length} found`,
    );
    const undocumented = [...logs.matchAll(/"code":"([a-z_]+)"/g)].map((m) => m[1]!).filter((code) => !DOCUMENTED.has(code));
    report.check(
      'no error logged by the service',
      !/"level":(50|60)/.test(logs),
      `${logs.split('\n').filter((l) => /"level":(50|60)/.test(l)).length} lines at level error${undocumented.length ? `; codes ${undocumented.join(',')}` : ''}`,
    );
  } finally {
    await pool.end();
    await b.pool.end();
    await limited?.stop();
    await kassa.stop();
    await db.destroy();
  }
});
