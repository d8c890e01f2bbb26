// A shop developer's TypeScript client, generated from the served OpenAPI document: the document
// passes `redocly lint` (recommended rules) with no error, openapi-typescript makes its types, and a
// small program written with openapi-fetch against them compiles under strict tsc and runs against
// the real API: it creates a payment, reads it, and handles each error by its typed code. A change
// to the document that breaks generated clients (a status shape, a code, a required field) fails here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { exec } from '../helpers/exec.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'node_modules/.bin');

/** Tools run with Node 24 first on PATH and without their telemetry. */
const run = (command: string, args: string[], options: { cwd: string; env?: Record<string, string> }) =>
  exec(command, args, {
    cwd: options.cwd,
    env: {
      PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      ...options.env,
    },
  });

/** The shop's program: only the generated types and openapi-fetch. */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.ts';

type Payment = components['schemas']['Payment'];
type CreatePaymentRequest = components['schemas']['CreatePaymentRequest'];
type Failure = { error: { type: 'invalid_request_error' | 'authentication_error' | 'not_found_error' | 'rate_limit_error' | 'api_error'; code: string; message: string; param?: string } };

/** Every error type handled; a type the document adds breaks the build here. */
function describeFailure(failure: Failure): string {
  const { type, code } = failure.error;
  switch (type) {
    case 'invalid_request_error':
    case 'authentication_error':
    case 'not_found_error':
    case 'rate_limit_error':
    case 'api_error':
      return type + '/' + code;
    default: {
      const unhandled: never = type;
      return unhandled;
    }
  }
}

/** What the shop shows for a payment: the deposit address exists from pending on, by type. */
function describePayment(payment: Payment): string {
  switch (payment.status) {
    case 'created':
      return 'created: choose a method at ' + payment.checkoutURL;
    case 'pending':
      return 'pending: send ' + payment.paymentDetails.coinAmount + ' ' + payment.paymentDetails.coin.symbol + ' to ' + payment.paymentDetails.address;
    case 'completed':
      return 'completed at ' + payment.timer.paidAt + ' by ' + payment.paymentDetails.transactionSignatures.join(',');
    case 'expired':
    case 'cancelled':
      return payment.status + (payment.paymentDetails ? ' after pending at ' + payment.paymentDetails.address : ' before pending');
    default: {
      const unhandled: never = payment;
      return unhandled;
    }
  }
}

const client = createClient<paths>({ baseUrl: process.env.BASE_URL!, headers: { authorization: 'Bearer ' + process.env.TOKEN } });
const out: Record<string, string> = {};

// ttl, order_id and the rest are optional in the request type.
const request: CreatePaymentRequest = { amount: '10.50', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } };
const created = await client.POST('/v1/payments', { body: request, params: { header: { 'X-Idempotency-Key': crypto.randomUUID() } } });
if (created.error) throw new Error(describeFailure(created.error));
out.created = describePayment(created.data);

const read = await client.GET('/v1/payments/{paymentID}', { params: { path: { paymentID: created.data.id } } });
if (read.error) throw new Error(describeFailure(read.error));
out.read = read.data.id === created.data.id ? describePayment(read.data) : 'another payment';

const zero = await client.POST('/v1/payments', { body: { amount: '0', currency: 'TON' } });
if (zero.error) {
  // A code the operation does not list would not compile.
  out.zero = zero.error.error.code === 'invalid_amount' ? 'invalid_amount on ' + zero.error.error.param : describeFailure(zero.error);
}

const missing = await client.GET('/v1/payments/{paymentID}', { params: { path: { paymentID: '00000000-0000-4000-8000-000000000000' } } });
if (missing.error) out.missing = missing.error.error.code === 'payment_not_found' ? 'payment_not_found' : describeFailure(missing.error);

const malformed = await client.GET('/v1/payments/{paymentID}', { params: { path: { paymentID: 'not-a-uuid' } } });
if (malformed.error) out.malformed = malformed.error.error.code === 'invalid_payment_id' ? 'invalid_payment_id' : describeFailure(malformed.error);

const listed = await client.GET('/v1/payments', { params: { query: { created_after: '2026-02-30T00:00:00Z' } } });
if (listed.error) out.listed = listed.error.error.code === 'invalid_created_after' ? 'invalid_created_after' : describeFailure(listed.error);

const stranger = createClient<paths>({ baseUrl: process.env.BASE_URL!, headers: { authorization: 'Bearer not.a.token' } });
const refused = await stranger.GET('/v1/payments/{paymentID}/status', { params: { path: { paymentID: created.data.id } } });
if (refused.error) out.refused = refused.error.error.code === 'auth_invalid' ? 'auth_invalid' : describeFailure(refused.error);

// Customer Choice: created, no method yet; cancelled before it reached pending.
const open = await client.POST('/v1/payments', { body: { amount: '5', currency: 'USD', order_id: 'shop-42' } });
if (open.error) throw new Error(describeFailure(open.error));
out.open = describePayment(open.data);
const cancelled = await client.POST('/v1/payments/{paymentID}/cancel', { params: { path: { paymentID: open.data.id } } });
if (cancelled.error) throw new Error(describeFailure(cancelled.error));
out.cancelled = describePayment(cancelled.data);

console.log(JSON.stringify(out));
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    allowImportingTsExtensions: true,
    lib: ['es2022', 'dom'],
    types: ['node'],
    skipLibCheck: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
  },
  files: ['client.ts'],
};

describe('a generated TypeScript client', { timeout: 180_000 }, () => {
  let app: TestApp;
  // Inside the checkout (git-ignored), so that the program resolves openapi-fetch from its node_modules.
  const work = path.join(ROOT, 'test-artifacts', `openapi-client-${process.pid}`);

  before(async () => {
    app = await startTestApp();
    fs.mkdirSync(work, { recursive: true });
    fs.writeFileSync(path.join(work, 'openapi.json'), await (await fetch(`${app.url}/openapi.json`)).text());
  });
  after(async () => {
    await app?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('the served document passes redocly lint with the recommended rules: no error, no warning', async () => {
    const result = await run(path.join(BIN, 'redocly'), ['lint', 'openapi.json', '--extends', 'recommended', '--format', 'json'], { cwd: work });
    const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 0 }, JSON.stringify(report.problems, null, 2).slice(0, 4000));
    assert.equal(result.code, 0, result.stderr);
  });

  it('openapi-typescript types it, and a program with openapi-fetch compiles under strict tsc and runs against the API', async () => {
    const generated = await run(path.join(BIN, 'openapi-typescript'), ['openapi.json', '-o', 'schema.ts'], { cwd: work });
    assert.equal(generated.code, 0, generated.stderr);
    fs.writeFileSync(path.join(work, 'client.ts'), CLIENT);
    fs.writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    const compiled = await run(path.join(BIN, 'tsc'), ['-p', '.'], { cwd: work });
    assert.equal(compiled.code, 0, compiled.stdout + compiled.stderr);

    const { token } = await app.store({ name: 'Generated client' });
    const ran = await run(process.execPath, ['client.ts'], { cwd: work, env: { BASE_URL: app.url, TOKEN: token } });
    assert.equal(ran.code, 0, ran.stderr);
    const out = JSON.parse(ran.stdout) as Record<string, string>;
    assert.match(out.created!, /^pending: send 10\.5\d* TON to \S+$/);
    assert.equal(out.read, out.created);
    assert.equal(out.zero, 'invalid_amount on amount');
    assert.equal(out.missing, 'payment_not_found');
    assert.equal(out.malformed, 'invalid_payment_id');
    assert.equal(out.listed, 'invalid_created_after');
    assert.equal(out.refused, 'auth_invalid');
    assert.match(out.open!, /^created: choose a method at http:\/\/127\.0\.0\.1:\d+\/pay\/[0-9a-f-]{36}$/);
    assert.equal(out.cancelled, 'cancelled before pending');
  });

  it('the generated types: ttl optional in requests, address required from pending on, error codes and effects as unions', () => {
    const types = fs.readFileSync(path.join(work, 'schema.ts'), 'utf8');
    const block = (name: string) => {
      const start = types.indexOf(`        ${name}: {`);
      assert.ok(start >= 0, `${name} is generated`);
      return types.slice(start, types.indexOf('\n        };', start));
    };
    assert.match(block('CreatePaymentRequest'), /\bttl\?: number;/);
    assert.match(block('CreateInvoiceRequest'), /\bttl\?: number;/);
    assert.match(block('PaymentPending'), /paymentDetails: \{[^}]*?address: string;/s);
    assert.match(block('PaymentCreated'), /status: "created";/);
    assert.doesNotMatch(block('PaymentCreated'), /paymentDetails/);
    assert.match(block('PaymentCompleted'), /paidAt: string;/);
    assert.match(block('Transfer'), /effect: "partial" \| "completed" \| "overpaid" \| "wrong_coin"/);
  });
});
