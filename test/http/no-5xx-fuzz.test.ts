// No input gives a 5xx: every operation of the served document (GET /openapi.json) and the
// sandbox's routes get their path parameters, query parameters and body fields replaced, one at a
// time, by hostile text (U+0000, lone surrogates, the wrong types, overlong and odd strings) and by
// strings fast-check draws from the whole UTF-16 range (a fixed seed, so a failure replays). Any 5xx
// fails the test; so does an error that is not the envelope. U+0000 and lone surrogates in particular
// must be refused with a 400 in the envelope, wherever they are sent (docs/API.md, Errors).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import fc from 'fast-check';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  parameters: Array<{ name: string; in: string; schema?: Schema; required?: boolean }>;
  body: Schema | null;
}

/** What each string is replaced by, whatever it is. */
const HOSTILE: unknown[] = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00y',
  '\udbff\udbff',
  '\u0000\ud800',
  '',
  ' ',
  '%00',
  '\\u0000',
  '💳',
  '\u202e',
  'x'.repeat(5000),
  '1e999',
  '-1',
  "'; select pg_sleep(10); --",
  0,
  -1,
  1.5,
  1e308,
  true,
  null,
  [],
  {},
  ['\u0000'],
  { '\u0000': '\ud800' },
];
const HOSTILE_TEXT = ['\u0000', 'a\u0000b', '\ud800', 'x\udc00y', '\udfff', '', '%', '%zz', 'x'.repeat(3000), '..', '💳'];
/** Strings over every UTF-16 code unit, lone surrogates and U+0000 included (fast-check's "binary" units). */
const DRAWN = fc.sample(fc.string({ unit: 'binary', maxLength: 12 }), { seed: 20_261_125, numRuns: 25 });

/** Percent-encodes every UTF-16 code unit as WTF-8 (a lone surrogate as its three bytes, as a sloppy client sends it). */
function percent(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    const pair = unit >= 0xd800 && unit < 0xdc00 && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    const point = pair ? 0x10000 + ((unit - 0xd800) << 10) + (text.charCodeAt(i + 1) - 0xdc00) : unit;
    if (pair) i += 1;
    const bytes =
      point < 0x80
        ? [point]
        : point < 0x800
          ? [0xc0 | (point >> 6), 0x80 | (point & 63)]
          : point < 0x10000
            ? [0xe0 | (point >> 12), 0x80 | ((point >> 6) & 63), 0x80 | (point & 63)]
            : [0xf0 | (point >> 18), 0x80 | ((point >> 12) & 63), 0x80 | ((point >> 6) & 63), 0x80 | (point & 63)];
    out += bytes
      .map((byte) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).padStart(2, '0').toUpperCase()}`))
      .join('');
  }
  return out;
}

function resolve(document: Schema, schema: Schema | undefined): Schema {
  if (schema?.$ref) return resolve(document, document.components.schemas[String(schema.$ref).split('/').pop()!]);
  return schema ?? {};
}

/** A value the schema accepts, as far as a schema tells (every property, optional ones included). */
function sample(document: Schema, raw: Schema | undefined, paymentId: string): unknown {
  const schema = resolve(document, raw);
  if (schema.examples?.length) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.oneOf || schema.anyOf) return sample(document, (schema.oneOf ?? schema.anyOf)[0], paymentId);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'object' || schema.properties) {
    const value: Record<string, unknown> = {};
    for (const [name, property] of Object.entries<Schema>(schema.properties ?? {})) value[name] = sample(document, property, paymentId);
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object' && !schema.properties)
      value.color = sample(document, schema.additionalProperties, paymentId);
    return value;
  }
  if (type === 'array') return [sample(document, schema.items, paymentId)];
  if (type === 'integer' || type === 'number') return schema.default ?? schema.minimum ?? 1;
  if (type === 'boolean') return true;
  if (schema.format === 'uuid') return paymentId;
  if (schema.format === 'uri') return 'https://shop.example.com/kassa';
  if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
  if (schema.pattern) return '10.50';
  return 'TON';
}

/** Every place in `value` a hostile value can go: its own slot, each property's and item's, and a hostile key in each object. */
function* mutations(value: unknown): Generator<unknown> {
  for (const hostile of [...HOSTILE, ...DRAWN]) yield hostile;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) for (const changed of mutations(item)) yield value.map((old, at) => (at === index ? changed : old));
  } else if (value && typeof value === 'object') {
    for (const key of ['\u0000', '\ud800', 'k\udc00', ...DRAWN.slice(0, 5)]) yield { ...value, [key]: 'x' };
    for (const [name, item] of Object.entries(value)) for (const changed of mutations(item)) yield { ...value, [name]: changed };
  }
}

function operationsOf(document: Schema): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries<Schema>(document.paths)) {
    for (const [method, operation] of Object.entries<Schema>(methods)) {
      const body = operation.requestBody?.content?.['application/json']?.schema ?? null;
      operations.push({ method: method.toUpperCase(), path, parameters: operation.parameters ?? [], body: body ? resolve(document, body) : null });
    }
  }
  return operations;
}

describe('no input gives a 5xx', () => {
  let app: ChainTestApp;
  let token: string;
  let paymentId: string;
  let document: Schema;
  before(async () => {
    app = await startChainApp();
    const store = await app.store();
    token = store.token;
    const created = await app.request('POST', '/v1/payments', { token, body: { amount: '1', currency: 'TON', order_id: 'fuzz-1' } });
    assert.equal(created.status, 201, created.text);
    paymentId = created.json.id;
    document = (await app.request('GET', '/openapi.json')).json;
  });
  after(() => app.close());

  let failures: string[] = [];
  let sent = 0;
  beforeEach(() => {
    failures = [];
  });
  /** The failures, at most 20 of them, for the assertion's message. */
  const report = () => `${failures.length} requests failed:\n${failures.slice(0, 20).join('\n')}`;
  /** One request; a 5xx (or an error answer that is not the envelope) is recorded with what was sent. */
  async function send(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
    sent += 1;
    const stop = new AbortController();
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(`${app.url}${path}`, { method, headers, body: payload ?? null, signal: stop.signal });
    // An event stream stays open: its status is all this test needs.
    const streaming = response.headers.get('content-type')?.startsWith('text/event-stream');
    const text = streaming ? '' : await response.text();
    if (streaming) stop.abort();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {}
    const what = `${method} ${path.length > 200 ? `${path.slice(0, 200)}…` : path} ${payload && payload.length > 300 ? `${payload.slice(0, 300)}…` : (payload ?? '')}`;
    if (response.status >= 500) failures.push(`${response.status} ${text.slice(0, 200)} ← ${what}`);
    else if (
      response.status >= 400 &&
      !streaming &&
      !json?.error?.code &&
      !path.startsWith('/sandbox/toncenter/') &&
      !/^\/pay\/[^/]*$/.test(path.split('?')[0]!)
    )
      failures.push(`${response.status} not the envelope: ${text.slice(0, 200)} ← ${what}`);
    return { status: response.status, json };
  }

  const fill = (template: string, values: Record<string, string>): string => template.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? paymentId);

  it('answers every operation of the served document with no 5xx, whatever its parameters and body hold', async () => {
    const operations = operationsOf(document);
    assert.ok(operations.length >= 15, `the document lists ${operations.length} operations`);
    for (const operation of operations) {
      const pathParams = operation.parameters.filter((parameter) => parameter.in === 'path');
      const queryParams = operation.parameters.filter((parameter) => parameter.in === 'query');
      const baseQuery = Object.fromEntries(queryParams.filter((p) => p.required).map((p) => [p.name, String(sample(document, p.schema, paymentId))]));
      const query = (values: Record<string, string>) => {
        const entries = Object.entries(values);
        return entries.length === 0 ? '' : `?${entries.map(([name, value]) => `${percent(name)}=${percent(value)}`).join('&')}`;
      };
      const baseBody = operation.body ? sample(document, operation.body, paymentId) : undefined;
      const base = fill(operation.path, {});
      for (const parameter of pathParams)
        for (const text of [...HOSTILE_TEXT, ...DRAWN])
          await send(operation.method, fill(operation.path, { [parameter.name]: percent(text) }) + query(baseQuery), baseBody);
      for (const parameter of queryParams)
        for (const text of [...HOSTILE_TEXT, ...DRAWN]) await send(operation.method, base + query({ ...baseQuery, [parameter.name]: text }), baseBody);
      for (const name of ['\u0000', '\ud800', 'x\u0000']) await send(operation.method, base + query({ ...baseQuery, [name]: '1' }), baseBody);
      if (baseBody !== undefined) for (const body of mutations(baseBody)) await send(operation.method, base + query(baseQuery), body);
    }
    assert.ok(sent > 1000, `${sent} requests`);
    assert.equal(failures.length, 0, report());
  });

  it('answers the sandbox routes with no 5xx either', async () => {
    const before = sent;
    const account = app.sandbox.chain.customerAddress.toString();
    for (const body of mutations({ to: account, coin: 'TON', amount: '0.1' })) await send('POST', '/sandbox/v1/transfers', body);
    for (const body of mutations({ id: 1, jsonrpc: '2.0', method: 'getAddressBalance', params: { address: account } }))
      await send('POST', '/sandbox/toncenter/api/v2/jsonRPC', body);
    for (const text of [...HOSTILE_TEXT, ...DRAWN]) {
      await send('GET', `/sandbox/v1/accounts/${percent(text)}`);
      await send('POST', `/sandbox/v1/payments/${percent(text)}/expire`);
      await send('GET', `/sandbox/toncenter/api/v3/${percent(text)}`);
      await send('GET', `/sandbox/toncenter/api/v3/transactions?account=${percent(text)}`);
      await send('GET', `/pay/${percent(text)}`);
    }
    assert.ok(sent - before > 300, `${sent - before} requests`);
    assert.equal(failures.length, 0, report());
  });

  it('refuses U+0000 and lone surrogates in the envelope, naming the field', async () => {
    const create = (body: object) => send('POST', '/v1/payments', { amount: '1', currency: 'TON', ...body });
    for (const [body, code, param] of [
      [{ order_id: 'a\u0000' }, 'invalid_order_id', 'order_id'],
      [{ description: 'x\ud800' }, 'invalid_description', 'description'],
      [{ metadata: { color: '\udc00' } }, 'invalid_metadata', 'metadata.color'],
      [{ metadata: { 'c\u0000': 'red' } }, 'invalid_metadata', 'metadata'],
      [{ payment_options: { methods: [{ coin: 'TON\u0000', chain: 'TON' }] } }, 'invalid_payment_options', 'payment_options.methods[0].coin'],
      [{ currency: '\u0000' }, 'invalid_request', 'currency'],
      // Field names that are also Object.prototype's.
      [{ __defineGetter__: '\ud886' }, 'invalid_request', '__defineGetter__'],
      [{ constructor: 'x\u0000' }, 'invalid_request', 'constructor'],
      [{ toString: { a: '\udc00' } }, 'invalid_request', 'toString.a'],
    ] as const) {
      const answer = await create(body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.deepEqual({ code: answer.json.error.code, param: answer.json.error.param }, { code, param }, JSON.stringify(body));
    }
    // Deep bodies are walked without recursion: validation refuses them, nothing overflows.
    for (const metadata of [`${'{"a":'.repeat(10_000)}"\\u0000"${'}'.repeat(10_000)}`, `{"a":${'['.repeat(20_000)}"\\ud800"${']'.repeat(20_000)}}`]) {
      const deep = await fetch(`${app.url}/v1/payments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: `{"amount":"1","currency":"TON","metadata":${metadata}}`,
      });
      assert.equal(deep.status, 400, await deep.text());
    }
    const refund = await send('POST', `/v1/payments/${paymentId}/refunds`, { coin: '\u0000', amount: '1', address: 'x' });
    assert.deepEqual([refund.status, refund.json.error.code, refund.json.error.param], [400, 'invalid_coin', 'coin']);
    const listed = await send('GET', '/v1/payments?status=%00');
    assert.deepEqual([listed.status, listed.json.error.code, listed.json.error.param], [400, 'invalid_request', 'status']);
    const sandbox = await send('POST', '/sandbox/v1/transfers', { to: '\ud800', coin: 'TON', amount: '1' });
    assert.deepEqual([sandbox.status, sandbox.json.error.param], [400, 'to']);
    // The same name, another route's schema: the sandbox's coin has no code of its own.
    const sandboxCoin = await send('POST', '/sandbox/v1/transfers', { to: app.sandbox.chain.customerAddress.toString(), coin: 'TON\u0000', amount: '1' });
    assert.deepEqual([sandboxCoin.status, sandboxCoin.json.error.code, sandboxCoin.json.error.param], [400, 'invalid_request', 'coin']);
    const path = await send('GET', `/v1/payments/${percent('\ud800')}`);
    assert.equal(path.status, 400);
    assert.equal(path.json.error.type, 'invalid_request_error');
    assert.equal(failures.length, 0, report());
  });
});
