// The fuzz drill's request generators (fast-check): the endpoints Kassa mounts, valid and mutated
// bodies, odd content types, headers, paths and queries. drills/fuzz.ts runs them and checks the
// answers.
import fc from 'fast-check';
import type { RawRequest } from '../lib.ts';

export type Auth = 'merchant' | 'public' | 'none';
export type BodyKind = 'createPayment' | 'createInvoice' | 'empty' | 'method' | 'transfer' | 'jsonrpc' | 'none';
export interface Endpoint {
  method: string;
  /** `:id` is filled with a payment id (or something that is not one); `:sym` with a symbol. */
  path: string;
  auth: Auth;
  body: BodyKind;
}

/** Every route Kassa mounts (in sandbox, with the checkout at /pay); the OpenAPI paths are added too. */
export const ENDPOINTS: Endpoint[] = [
  { method: 'GET', path: '/healthz', auth: 'none', body: 'none' },
  { method: 'GET', path: '/openapi.json', auth: 'none', body: 'none' },
  { method: 'GET', path: '/metrics', auth: 'none', body: 'none' },
  { method: 'GET', path: '/v1/payment-methods', auth: 'merchant', body: 'none' },
  { method: 'GET', path: '/v1/payments/methods', auth: 'merchant', body: 'none' },
  { method: 'POST', path: '/v1/payments', auth: 'merchant', body: 'createPayment' },
  { method: 'POST', path: '/v1/payments/create', auth: 'merchant', body: 'createInvoice' },
  { method: 'GET', path: '/v1/payments', auth: 'merchant', body: 'none' },
  { method: 'GET', path: '/v1/payments/:id', auth: 'merchant', body: 'none' },
  { method: 'GET', path: '/v1/payments/:id/status', auth: 'merchant', body: 'none' },
  { method: 'GET', path: '/v1/payments/:id/transfers', auth: 'merchant', body: 'none' },
  { method: 'POST', path: '/v1/payments/:id/cancel', auth: 'merchant', body: 'empty' },
  { method: 'GET', path: '/v1/payments/:id/webhook-deliveries', auth: 'merchant', body: 'none' },
  { method: 'POST', path: '/v1/payments/:id/webhook/redeliver', auth: 'merchant', body: 'empty' },
  { method: 'GET', path: '/pay/v1/webhook/keys', auth: 'public', body: 'none' },
  { method: 'GET', path: '/pay/v1/checkout/payments/:id', auth: 'public', body: 'none' },
  { method: 'POST', path: '/pay/v1/checkout/payments/:id/method', auth: 'public', body: 'method' },
  { method: 'GET', path: '/pay/v1/checkout/payments/:id/events', auth: 'public', body: 'none' },
  { method: 'GET', path: '/pay/:id', auth: 'public', body: 'none' },
  { method: 'GET', path: '/pay/assets/coins/:sym', auth: 'none', body: 'none' },
  { method: 'GET', path: '/pay/assets/chains/:sym', auth: 'none', body: 'none' },
  { method: 'GET', path: '/pay/assets/:sym', auth: 'none', body: 'none' },
  { method: 'POST', path: '/sandbox/toncenter/api/v2/jsonRPC', auth: 'none', body: 'jsonrpc' },
  { method: 'POST', path: '/sandbox/v1/transfers', auth: 'none', body: 'transfer' },
  { method: 'POST', path: '/sandbox/v1/payments/:id/expire', auth: 'merchant', body: 'empty' },
];

export interface World {
  /** Store A's payments (created, pending, cancelled), store B's, and the deposit address of A's pending one. */
  ownIds: string[];
  otherIds: string[];
  address: string;
  methodIds: string[];
  token: string;
  otherToken: string;
  brokenTokens: string[];
}

// ---- Values ------------------------------------------------------------------------------------

export const latin1 = (min = 0, max = 40) =>
  fc.string({
    unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff })).map((c) => String.fromCharCode(c)),
    minLength: min,
    maxLength: max,
  });

export const nested = (depth: number, leaf: unknown): unknown => {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value];
  return value;
};

export const POLLUTION_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'then'];

/** An object with an own enumerable key `key` (even `__proto__`), so JSON.stringify writes it. */
export function withKey(object: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy = { ...object };
  Object.defineProperty(copy, key, { value, enumerable: true, configurable: true, writable: true });
  return copy;
}

export const loneSurrogates = fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 4 });

/** Values of every wrong kind. */
export const weird: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 4 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 2 },
  { arbitrary: loneSurrogates, weight: 1 },
  { arbitrary: fc.integer({ min: 100, max: 3000 }).map((n) => 'x'.repeat(n)), weight: 1 },
  { arbitrary: fc.integer({ min: 66_000, max: 80_000 }).map((n) => 'y'.repeat(n)), weight: 1 },
  {
    arbitrary: fc.oneof(
      fc.double(),
      fc.integer(),
      fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
      fc.constantFrom('1e400', '-0', '0x10', 'NaN', 'Infinity', ' 10', '10 ', '1_000', '١٠', '10.', '.5', '1e3'),
    ),
    weight: 3,
  },
  { arbitrary: fc.integer().map(String), weight: 2 },
  { arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { '': '' }), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 3000 }).map((depth) => nested(depth, 'deep')), weight: 1 },
  { arbitrary: fc.constantFrom(...POLLUTION_KEYS).chain((key) => fc.jsonValue({ maxDepth: 1 }).map((value) => withKey({}, key, value))), weight: 1 },
);

// Mostly valid values (so that creates succeed too); `weird` ones come in through mutations.
export const amount = fc.oneof(
  { arbitrary: fc.constantFrom('10', '10.50', '0.5', '1', '1.123456', '100000000', '7.25'), weight: 3 },
  { arbitrary: fc.nat(1_000_000).map((n) => String(n + 1)), weight: 1 },
);
export const currency = fc.constantFrom('USD', 'EUR', 'RUB', 'TON', 'USDT');
export const urlish = fc.constantFrom('https://merchant.example.com/hook', 'https://shop.example/return?x=1', 'https://hooks.example.org:8443/p/a/t/h?q=1');

/** Values that are almost right: what a careless client sends. Mutations use them besides `weird`. */
export const nearMiss = fc.constantFrom(
  '0',
  '0.00',
  '01',
  '-1',
  '1e3',
  '1.1234567890',
  ' 10',
  '10,5',
  '',
  'usd',
  'BTC',
  'NOT',
  'XAUt0',
  899,
  43_201,
  3600.5,
  '3600',
  'o'.repeat(129),
  'd'.repeat(513),
  'http://example.com/',
  'https://127.0.0.1/',
  'https://[::1]/',
  'https://169.254.169.254/latest',
  'https://localhost/',
  'https://foo.localhost/',
  'javascript:alert(1)',
  'https://u:p@example.com/',
  'https://example.com/#f',
  `https://example.com/${'p'.repeat(600)}`,
  'https://[::ffff:10.0.0.1]/',
  'https://0x7f.1/',
  'https://metadata.google.internal/',
  'FIAT',
  'CRYPTO',
  '00000000-0000-0000-0000-000000000000',
  [{ coin: 'TON', chain: 'TON' }],
  { methods: [] },
  { methods: [{ coin: 'USDT', chain: 'ton' }] },
);

/** The optional fields both create operations take (the schemas' commonProperties). */
export const commonFields = {
  ttl: fc.integer({ min: 900, max: 43_200 }),
  order_id: fc.string({ minLength: 1, maxLength: 128 }),
  description: fc.string({ unit: 'grapheme', maxLength: 200 }),
  metadata: fc.dictionary(fc.string({ minLength: 1, maxLength: 64 }), fc.string({ unit: 'grapheme', maxLength: 30 }), { maxKeys: 10 }),
  webhookURL: urlish,
  returnURL: urlish,
};

export function validBody(kind: BodyKind, world: World): fc.Arbitrary<Record<string, unknown>> {
  const common = { ...commonFields, paymentMethodID: fc.constantFrom(...world.methodIds) };
  switch (kind) {
    case 'createPayment':
      return fc.record(
        {
          amount,
          currency,
          payment_options: fc.oneof(
            { arbitrary: fc.constant({}), weight: 1 },
            { arbitrary: fc.record({ methods: fc.constantFrom([{ coin: 'TON', chain: 'TON' }], [{ coin: 'USDT', chain: 'TON' }]) }), weight: 4 },
          ),
          ...commonFields,
        },
        { requiredKeys: ['amount', 'currency'] },
      );
    case 'createInvoice':
      return fc.oneof(
        fc.record(
          {
            invoiceType: fc.constant('FIAT'),
            fiatAmount: amount,
            fiatCurrency: fc.constantFrom('USD', 'EUR', 'RUB'),
            paymentMethodID: common.paymentMethodID,
            ...commonFields,
          },
          { requiredKeys: ['invoiceType', 'fiatAmount', 'fiatCurrency'] },
        ),
        fc.record(
          {
            invoiceType: fc.constant('CRYPTO'),
            cryptoAmount: amount,
            fiatCurrency: fc.constantFrom('USD', 'EUR', 'RUB'),
            paymentMethodID: common.paymentMethodID,
            ttl: common.ttl,
            order_id: common.order_id,
          },
          { requiredKeys: ['invoiceType', 'cryptoAmount', 'paymentMethodID'] },
        ),
      );
    case 'method':
      return fc.record({ paymentMethodID: common.paymentMethodID });
    case 'transfer':
      return fc.record(
        {
          to: fc.oneof(
            { arbitrary: fc.constant(world.address), weight: 4 },
            { arbitrary: fc.constantFrom(`EQ${'A'.repeat(46)}`, `0:${'0'.repeat(64)}`, `-1:${'f'.repeat(64)}`, 'not-an-address'), weight: 1 },
          ),
          coin: fc.constantFrom('TON', 'USDT', 'NOT', 'usdt', 'BTC', ''),
          amount: fc.constantFrom('0.001', '0.01', '1', '0.0000000001', '1000000000000', '0'),
          bounce: fc.boolean(),
          comment: fc.string({ maxLength: 40 }),
          fromLookalike: fc.boolean(),
        },
        { requiredKeys: ['to', 'coin', 'amount'] },
      );
    case 'jsonrpc':
      return fc.record(
        {
          method: fc.constantFrom(
            'getTransactions',
            'runGetMethod',
            'getAddressInformation',
            'getAddressBalance',
            'getAddressState',
            'getMasterchainInfo',
            'sendBoc',
            'sendBocReturnHash',
            'getConfigParam',
            '__proto__',
            'constructor',
            'toString',
          ),
          params: fc.record(
            {
              address: fc.oneof(fc.constant(world.address), fc.constantFrom(`EQ${'A'.repeat(46)}`, 'zz', `0:${'1'.repeat(64)}`)),
              limit: fc.constantFrom(1, 5, 100, 0, -1, 1e9, '10', 'x'),
              lt: fc.constantFrom('1', '0', '99999999999999999999', -5),
              hash: fc.constantFrom('0'.repeat(64), 'AAAA', 'A'.repeat(44)),
              to_lt: fc.constantFrom('0', '1', 'abc'),
              method: fc.constantFrom('seqno', 'get_wallet_address', 'get_public_key', 'get_jetton_data', 'get_wallet_data', 85143, 2 ** 40, -1, ''),
              stack: fc.constantFrom(
                [],
                [['num', '1']],
                [['num', '0x10']],
                [['tvm.Slice', 'te6cc']],
                [['cell', 'AAAA']],
                [['num', 'zz']],
                [['tvm.Slice', 'te6cckEBAQEAJAAAQ4AbUzrTQYTUv8s/I9ds2TSZgRjyrgl2S2LKcZMEFcxj6PARy3rF']],
                [[]],
                [null],
              ),
              boc: fc.oneof(fc.base64String({ maxLength: 200 }), fc.constantFrom('te6cckEBAQEAAgAAAEysuc0=', '')),
            },
            { requiredKeys: [] },
          ),
          id: fc.oneof(fc.nat(), fc.string({ maxLength: 10 })),
          jsonrpc: fc.constantFrom('2.0', '1.0'),
        },
        { requiredKeys: ['method'] },
      );
    case 'empty':
    case 'none':
      return fc.constant({});
  }
}

/** One mutation: a key removed, a value replaced with a wrong one (at the top or one level down), or a key added. */
export function mutate(body: Record<string, unknown>, pick: number, value: unknown, newKey: string): Record<string, unknown> {
  const keys = Object.keys(body);
  const key = keys.length > 0 ? keys[pick % keys.length]! : newKey;
  switch (pick % 5) {
    case 0: {
      const copy = { ...body };
      delete copy[key];
      return copy;
    }
    case 1:
    case 2:
      return withKey(body, key, value);
    case 3: {
      const inner = body[key];
      if (inner && typeof inner === 'object' && !Array.isArray(inner))
        return withKey(body, key, mutate(inner as Record<string, unknown>, pick >> 3, value, newKey));
      if (Array.isArray(inner) && inner[0] && typeof inner[0] === 'object')
        return withKey(body, key, [mutate(inner[0] as Record<string, unknown>, pick >> 3, value, newKey), ...inner.slice(1)]);
      return withKey(body, newKey, value);
    }
    default:
      return withKey(body, newKey, value);
  }
}

/** A valid body, unchanged (a quarter of them) or with one to three mutations. */
export function mutatedBody(kind: BodyKind, world: World): fc.Arbitrary<unknown> {
  const mutation = fc.tuple(
    fc.nat(),
    fc.oneof(weird, nearMiss),
    fc.constantFrom(...POLLUTION_KEYS, 'webhookUrl', 'extra', '', 'Amount', 'amount ', 'coin', 'methods', 'params'),
  );
  return fc
    .tuple(validBody(kind, world), fc.nat(3), fc.array(mutation, { minLength: 3, maxLength: 3 }))
    .map(([body, count, mutations]) => mutations.slice(0, count).reduce((current, [pick, value, newKey]) => mutate(current, pick, value, newKey), body));
}

export interface BodyChoice {
  body: string | Buffer | undefined;
  contentType: string | undefined;
  contentEncoding?: string;
}

export const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'APPLICATION/JSON'];
export const ODD_TYPES = [
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset=bogus',
  'application/vnd.api+json',
  'application/merge-patch+json',
  'text/json',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/octet-stream',
  '*/*',
  'application',
  ';;;',
  'application/json, text/plain',
  'application/xml',
];

export const rawBodies: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.constantFrom(
    '',
    '[]',
    '"text"',
    '1',
    'null',
    'true',
    '{',
    '{"amount":',
    '{"amount":"10","amount":"20","currency":"USD"}',
    '\ufeff{"amount":"10","currency":"USD"}',
    '{"a":1e999999}',
    '{"a":"\\ud800"}',
    'a=1&b=2',
    '<xml/>',
    '{"__proto__":{"admin":true},"amount":"10","currency":"USD"}',
    '{"constructor":{"prototype":{"polluted":1}}}',
  ),
  fc.integer({ min: 1000, max: 30_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.integer({ min: 1000, max: 20_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  fc.integer({ min: 65_000, max: 90_000 }).map((n) => JSON.stringify({ amount: '10', currency: 'USD', description: 'z'.repeat(n) })),
  fc.json({ maxDepth: 4 }),
  fc.string({ unit: 'binary', maxLength: 100 }).map((text) => Buffer.from(text, 'utf16le')),
);

export function bodyChoice(kind: BodyKind, world: World): fc.Arbitrary<BodyChoice> {
  const jsonOf = (value: unknown): string => JSON.stringify(value) ?? 'null';
  const base = kind === 'none' ? 'empty' : kind;
  return fc.oneof(
    {
      arbitrary: fc.tuple(mutatedBody(base, world), fc.constantFrom(...JSON_TYPES)).map(([value, contentType]) => ({ body: jsonOf(value), contentType })),
      weight: 10,
    },
    { arbitrary: fc.tuple(weird, fc.constantFrom(...JSON_TYPES)).map(([value, contentType]) => ({ body: jsonOf(value), contentType })), weight: 3 },
    { arbitrary: fc.tuple(rawBodies, fc.constantFrom(...JSON_TYPES, ...ODD_TYPES)).map(([body, contentType]) => ({ body, contentType })), weight: 3 },
    {
      arbitrary: fc.tuple(mutatedBody(base, world), fc.constantFrom(...ODD_TYPES)).map(([value, contentType]) => ({ body: jsonOf(value), contentType })),
      weight: 1,
    },
    {
      arbitrary: fc
        .tuple(mutatedBody(base, world), fc.option(fc.constantFrom(...JSON_TYPES), { nil: undefined }))
        .map(([value, contentType]) => ({ body: jsonOf(value), contentType, contentEncoding: 'gzip' })),
      weight: 1,
    },
    {
      arbitrary: fc
        .tuple(rawBodies, fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'bogus, gzip'))
        .map(([body, contentEncoding]) => ({ body, contentType: 'application/json', contentEncoding })),
      weight: 1,
    },
    { arbitrary: fc.constant({ body: undefined, contentType: undefined }), weight: 2 },
    { arbitrary: fc.constantFrom(...JSON_TYPES).map((contentType) => ({ body: undefined, contentType })), weight: 1 },
  );
}

// ---- Paths -------------------------------------------------------------------------------------

export const ODD_SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2E%2F',
  '%2F',
  '%2f..%2f',
  '%00',
  '%',
  '%zz',
  '%C0%AF',
  '%E2%80%AE',
  '%F0%9F%92%A9',
  '%ff%fe',
  '~',
  '*',
  ';',
  ';jsessionid=1',
  '%3B',
  '%20',
  '+',
  '@',
  ':',
  '$',
  '!',
  "'",
  '(',
  ')',
  ',',
  '&',
  '=',
  '%0a',
  '%0d%0a',
  '%09',
  '%5C',
  '\\',
  '//',
  'null',
  'undefined',
  'NaN',
  '-1',
  '0',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '{paymentID}',
  ':id',
  '__proto__',
  'constructor',
];

/** Path-safe characters (what a raw HTTP request line may carry), percent-encoded otherwise. */
export const pathText = (maxLength: number) => fc.string({ maxLength }).map((text) => encodeURIComponent(text).replaceAll('%2F', '/').replaceAll('%25', '%'));

export function idArb(world: World): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...world.ownIds), weight: 6 },
    { arbitrary: fc.constantFrom(...world.otherIds), weight: 2 },
    { arbitrary: fc.constantFrom(...world.ownIds).map((id) => id.toUpperCase()), weight: 1 },
    { arbitrary: fc.uuid(), weight: 2 },
    { arbitrary: fc.constantFrom(...ODD_SEGMENTS), weight: 3 },
    {
      arbitrary: fc
        .constantFrom(...world.ownIds)
        .chain((id) =>
          fc.constantFrom(
            `${id}/`,
            `${id}%2F..`,
            `${id}/..`,
            `${id}%00`,
            `${id}%0a`,
            `{${id}}`,
            `${id}.json`,
            ` ${id}`.replace(' ', '%20'),
            id.replaceAll('-', ''),
            `${id}-${id}`,
          ),
        ),
      weight: 2,
    },
    { arbitrary: fc.integer({ min: 37, max: 6000 }).map((n) => 'a'.repeat(n)), weight: 1 },
    { arbitrary: pathText(40), weight: 2 },
    { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map(encodeURIComponent), weight: 1 },
  );
}

export const symArb = fc.oneof(
  fc.constantFrom(
    'TON.svg',
    'USDT.svg',
    'NOT.svg',
    'ton.svg',
    'TON',
    'TON.SVG',
    'checkout.css',
    'checkout.js',
    'hasOwnProperty',
    '__proto__',
    'constructor',
    '..%2F..%2Fpackage.json',
    '%2e%2e%2fsrc%2fconfig.ts',
    `${'A'.repeat(17)}.svg`,
  ),
  pathText(30),
);

export const LIST_QUERY_KEYS = [
  'status',
  'limit',
  'created_after',
  'starting_after',
  'lang',
  'v',
  '__proto__',
  'constructor',
  'toString',
  'status[]',
  'limit[0]',
  'unknown',
];
export function queryArb(world: World): fc.Arbitrary<string> {
  const value = fc.oneof(
    fc.constantFrom(
      'created',
      'pending',
      'completed',
      'expired',
      'cancelled',
      'PENDING',
      '1',
      '20',
      '100',
      '101',
      '0',
      '-1',
      '1e2',
      '001',
      '2020-01-01T00:00:00Z',
      '2020-13-45T99:99:99Z',
      'yesterday',
      'en',
      'ru',
      'de',
      '',
    ),
    fc.constantFrom(...world.ownIds, ...world.otherIds),
    pathText(30),
    fc.uuid(),
  );
  return fc.oneof(
    { arbitrary: fc.constant(''), weight: 3 },
    {
      arbitrary: fc
        .array(fc.tuple(fc.constantFrom(...LIST_QUERY_KEYS), value), { minLength: 1, maxLength: 4 })
        .map((pairs) => `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&')}`),
      weight: 3,
    },
    { arbitrary: pathText(40).map((text) => `?${text}`), weight: 1 },
    {
      arbitrary: fc.constantFrom(
        '?',
        '?&&',
        '?=',
        '?a',
        '?status',
        '?limit=5&limit=6',
        '?status=pending&status=created',
        '?%',
        '#frag',
        '?__proto__[polluted]=1',
        '?constructor[prototype][x]=1',
      ),
      weight: 1,
    },
  );
}

export function pathArb(endpoint: Endpoint, world: World): fc.Arbitrary<string> {
  const filled = fc.tuple(idArb(world), symArb).map(([id, sym]) => endpoint.path.replace(':id', id).replace(':sym', sym));
  return fc.tuple(filled, queryArb(world), fc.nat(19)).map(([path, query, twist]) => {
    switch (twist) {
      case 0:
        return `${path}/${query}`;
      case 1:
        return `${path.replace(/\//g, '//')}${query}`;
      case 2:
        return `${path.toUpperCase()}${query}`;
      case 3:
        return `/v1/../${path.slice(1)}${query}`;
      case 4:
        return `${path}%2F${query}`;
      case 5:
        return `${path}/..${query}`;
      default:
        return `${path}${query}`;
    }
  });
}

export const unknownPath: fc.Arbitrary<string> = fc.oneof(
  fc
    .array(
      fc.oneof(
        fc.constantFrom(
          'v1',
          'v2',
          'pay',
          'sandbox',
          'payments',
          'admin',
          '.env',
          '.git',
          'config',
          'etc',
          'passwd',
          'api',
          'graphql',
          'wp-admin',
          'metrics',
          'healthz',
          'openapi.yaml',
          'assets',
          ...ODD_SEGMENTS,
        ),
        pathText(16),
      ),
      { minLength: 1, maxLength: 6 },
    )
    .map((parts) => `/${parts.join('/')}`),
  fc.constantFrom(
    '/',
    '//',
    '/v1',
    '/v1/',
    '/pay',
    '/pay/',
    '/sandbox',
    '/sandbox/v1',
    '/../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/v1/payments/..%2F..%2Fhealthz',
    '/pay/%2e%2e/v1/payments',
    '/*',
    '/v1/payments/*',
    '/favicon.ico',
    '/robots.txt',
    '/.well-known/security.txt',
  ),
  fc.integer({ min: 100, max: 8000 }).map((n) => `/${'b'.repeat(n)}`),
);

// ---- Headers -----------------------------------------------------------------------------------

export function authArb(world: World): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { arbitrary: fc.constant(`Bearer ${world.token}`), weight: 16 },
    { arbitrary: fc.constant(`Bearer ${world.otherToken}`), weight: 2 },
    { arbitrary: fc.constant(undefined), weight: 2 },
    { arbitrary: fc.constantFrom(...world.brokenTokens).map((token) => `Bearer ${token}`), weight: 2 },
    {
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer ',
        'Basic YTpi',
        `bearer ${world.token}`,
        `BEARER  ${world.token}`,
        `Bearer${world.token}`,
        `Bearer ${world.token} extra`,
        `Token ${world.token}`,
        world.token,
        `Bearer ${world.token}.`,
        `Bearer ${'a'.repeat(5000)}.b.c`,
      ),
      weight: 2,
    },
    { arbitrary: latin1(0, 200), weight: 1 },
  );
}

export const headerValue = fc.oneof(
  latin1(0, 80),
  fc.integer({ min: 129, max: 4000 }).map((n) => 'h'.repeat(n)),
  fc.uuid(),
  fc.constantFrom('', ' ', '\t', 'null', '../../', '%00', '\u00ff\u00fe'),
);

export const extraHeaders: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    'x-idempotency-key': fc.oneof(
      fc.uuid(),
      fc.constantFrom(
        '6f1d5c58-8d1c-4b8a-9d59-1f2f7f0d3a01',
        '6F1D5C58-8D1C-4B8A-9D59-1F2F7F0D3A01',
        '{6f1d5c58-8d1c-4b8a-9d59-1f2f7f0d3a01}',
        '6f1d5c588d1c4b8a9d591f2f7f0d3a01',
      ),
      headerValue,
    ),
    'accept-language': fc.oneof(fc.constantFrom('ru', 'ru-RU,ru;q=0.9,en;q=0.8', 'en', '*', 'de-DE', 'ru;q=abc', ';q=1', 'x'.repeat(500), ',,,,'), headerValue),
    'x-request-id': fc.oneof(fc.constantFrom('drill-1', 'a'.repeat(128), 'a'.repeat(129), 'with space', 'ünï', '../x', '<script>'), headerValue),
    accept: fc.oneof(fc.constantFrom('text/html', 'application/json', '*/*', 'text/event-stream', 'image/svg+xml', ''), headerValue),
    'x-forwarded-for': fc.oneof(fc.constantFrom('127.0.0.1', '::1', '10.0.0.1, 1.2.3.4', 'garbage'), headerValue),
    cookie: headerValue,
    origin: fc.oneof(fc.constantFrom('https://evil.example', 'null'), headerValue),
    'if-none-match': headerValue,
    range: fc.oneof(fc.constantFrom('bytes=0-10', 'bytes=-1', 'bytes=9999999-'), headerValue),
    'x-http-method-override': fc.constantFrom('DELETE', 'PUT', 'GET'),
  },
  { requiredKeys: [] },
);

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE'];

export interface Generated {
  request: RawRequest;
  /** Which endpoint it was aimed at (null: an unknown path). */
  endpoint: Endpoint | null;
  /** Did it carry store A's valid token? */
  validToken: boolean;
}

/**
 * A "tidy" request (a third) is well-formed but for its body: the route's own path and method, a
 * real id, the valid token, sane headers, a mutated valid JSON body — so that creates, reads,
 * cancels and method choices succeed too and idempotency keys are replayed. The others are wild.
 */
export function tidyArb(world: World, endpoints: Endpoint[]): fc.Arbitrary<Generated> {
  const idempotencyKeys = ['6f1d5c58-8d1c-4b8a-9d59-1f2f7f0d3a01', '0b7d6c0e-4f4e-4c5a-9d7e-2a7f1c3e5b90', '9a4f7a52-3c1e-4d8e-8b6f-5e2d1c0b9a87'];
  return fc.constantFrom(...endpoints).chain((endpoint) =>
    fc
      .record({
        id: fc.oneof(
          { arbitrary: fc.constantFrom(...world.ownIds), weight: 5 },
          { arbitrary: fc.constantFrom(...world.otherIds), weight: 1 },
          { arbitrary: fc.uuid(), weight: 1 },
        ),
        sym: fc.constantFrom('TON.svg', 'USDT.svg', 'checkout.css', 'checkout.js', 'NOPE.svg'),
        body: mutatedBody(endpoint.body, world),
        key: fc.option(fc.oneof(fc.constantFrom(...idempotencyKeys), fc.uuid()), { nil: undefined }),
        lang: fc.option(fc.constantFrom('ru', 'en', 'ru-RU,ru;q=0.9', 'de'), { nil: undefined }),
        query: endpoint.path === '/v1/payments' && endpoint.method === 'GET' ? queryArb(world) : fc.constant(''),
      })
      .map(({ id, sym, body, key, lang, query }) => {
        const headers: Record<string, string> = {};
        if (endpoint.auth === 'merchant') headers.authorization = `Bearer ${world.token}`;
        if (key !== undefined) headers['x-idempotency-key'] = key;
        if (lang !== undefined) headers['accept-language'] = lang;
        const withBody = endpoint.method === 'POST' && endpoint.body !== 'none';
        if (withBody) headers['content-type'] = 'application/json';
        const request: RawRequest = {
          method: endpoint.method,
          path: endpoint.path.replace(':id', id).replace(':sym', sym) + query,
          headers,
          ...(withBody ? { body: JSON.stringify(body) } : {}),
        };
        return { request, endpoint: endpoint as Endpoint | null, validToken: endpoint.auth === 'merchant' };
      }),
  );
}

export function wildArb(world: World, endpoints: Endpoint[]): fc.Arbitrary<Generated> {
  const target = fc.oneof(
    {
      arbitrary: fc.constantFrom(...endpoints).chain((endpoint) => pathArb(endpoint, world).map((path) => ({ endpoint: endpoint as Endpoint | null, path }))),
      weight: 12,
    },
    { arbitrary: unknownPath.map((path) => ({ endpoint: null as Endpoint | null, path })), weight: 1 },
  );
  return target.chain(({ endpoint, path }) =>
    fc
      .record({
        method: fc.oneof({ arbitrary: fc.constant(endpoint?.method ?? 'GET'), weight: 8 }, { arbitrary: fc.constantFrom(...METHODS), weight: 2 }),
        body: bodyChoice(endpoint?.body ?? 'empty', world),
        auth: endpoint?.auth === 'merchant' ? authArb(world) : fc.option(authArb(world), { nil: undefined, freq: 4 }),
        headers: extraHeaders,
      })
      .map(({ method, body, auth, headers }) => {
        const all: Record<string, string> = { ...headers };
        if (auth !== undefined) all.authorization = auth;
        if (body.contentType !== undefined) all['content-type'] = body.contentType;
        if (body.contentEncoding !== undefined) all['content-encoding'] = body.contentEncoding;
        const request: RawRequest = { method, path, headers: all, ...(body.body !== undefined ? { body: body.body } : {}) };
        // The scheme name is case-insensitive and may be followed by several spaces (RFC 9110 §11.1).
        return { request, endpoint, validToken: /^bearer +(.*)$/i.exec(auth ?? '')?.[1] === world.token };
      }),
  );
}

export function requestArb(world: World, endpoints: Endpoint[]): fc.Arbitrary<Generated> {
  return fc.oneof({ arbitrary: tidyArb(world, endpoints), weight: 1 }, { arbitrary: wildArb(world, endpoints), weight: 2 });
}

// ---- Checks ------------------------------------------------------------------------------------
