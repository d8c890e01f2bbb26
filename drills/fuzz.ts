// Drill 6 — fuzzing: fast-check generates requests against every endpoint (the merchant API with a
// valid token and with broken ones, the public checkout endpoints, the sandbox routes, /healthz,
// /openapi.json, /metrics, unknown paths): mutated valid bodies and arbitrary JSON, raw non-JSON
// bodies, odd content types and headers, odd paths. Checks: no 5xx but the documented 503s; every
// 4xx is the envelope with a code of the table in docs/API.md and that code's type and status; no
// payment exists that a 2xx did not announce; the service is healthy afterwards.
//
//   node drills/fuzz.ts [--long] [--seed N]
//
// A failure prints the request (method, path, headers, body) and the seed, so it can be replayed.
import http from 'node:http';
import fc from 'fast-check';
import { sql, z } from '../src/db/pool.ts';
import { garbageArb, MALFORMED } from './fuzz/malformed.ts';
import { ENDPOINTS, requestArb, type World } from './fuzz/requests.ts';
import { api, documentedErrors, drill, drillDatabase, drillStore, LONG, rawRequest, rawSocket, startKassa, type RawRequest, type RawResponse } from './lib.ts';

const REQUESTS = LONG ? 12_000 : 2_400;
const CONCURRENCY = 16;
const seedArg = process.argv.indexOf('--seed');
const SEED = seedArg >= 0 ? Number(process.argv[seedArg + 1]) : 20_261_122;
if (!Number.isSafeInteger(SEED)) throw new Error('--seed takes an integer');

const DOCUMENTED = documentedErrors();
const ENVELOPE_TYPES = new Set(['invalid_request_error', 'authentication_error', 'not_found_error', 'rate_limit_error', 'api_error']);
const JSON_RPC_PATH = '/sandbox/toncenter/api/v2/jsonRPC';

/** What is wrong with an error answer (null: nothing). */
function envelopeProblem(request: RawRequest, response: RawResponse): string | null {
  const type = String(response.headers['content-type'] ?? '');
  const pathOnly = request.path.split(/[?#]/)[0]!.replace(/(.)\/$/, '$1');
  // The hosted page answers unknown ids (and its own errors) with an HTML page (docs/API.md).
  if (
    type.startsWith('text/html') &&
    /^\/pay\/[^/]*\/?$/i.test(pathOnly) &&
    ['GET', 'HEAD'].includes(request.method) &&
    [404, 429, 503].includes(response.status)
  )
    return null;
  if (request.method === 'HEAD') return null;
  const json = response.json;
  // The emulated toncenter answers in toncenter's own shape, with its code as the HTTP status.
  if (pathOnly.toLowerCase() === JSON_RPC_PATH.toLowerCase() && json && json.ok === false && json.code === response.status && typeof json.error === 'string')
    return null;
  if (!type.startsWith('application/json')) return `content-type ${type || '(none)'}`;
  const error = json?.error;
  if (!json || typeof json !== 'object' || Object.keys(json).join() !== 'error' || !error || typeof error !== 'object') return 'not the envelope';
  const keys = Object.keys(error).sort().join();
  if (keys !== 'code,message,type' && keys !== 'code,message,param,type') return `envelope keys ${keys}`;
  if (typeof error.message !== 'string' || typeof error.code !== 'string' || (error.param !== undefined && typeof error.param !== 'string'))
    return 'envelope field types';
  if (!ENVELOPE_TYPES.has(error.type)) return `type ${error.type}`;
  const documented = DOCUMENTED.get(error.code);
  if (!documented) return `undocumented code ${error.code}`;
  if (documented.type !== error.type) return `${error.code} has type ${error.type}, documented ${documented.type}`;
  if (documented.status !== response.status) return `${error.code} answered ${response.status}, documented ${documented.status}`;
  if (response.status === 405 && !response.headers.allow) return '405 without Allow';
  if (response.status === 401 && response.headers['www-authenticate'] !== 'Bearer') return '401 without WWW-Authenticate: Bearer';
  if (response.status === 429 && !response.headers['retry-after']) return '429 without Retry-After';
  return null;
}

function reproduce(request: RawRequest): string {
  const body =
    request.body === undefined
      ? undefined
      : Buffer.isBuffer(request.body)
        ? `<${request.body.length} bytes: ${request.body.subarray(0, 80).toString('hex')}…>`
        : request.body.length > 400
          ? `${request.body.slice(0, 400)}… (${request.body.length} chars)`
          : request.body;
  const headers = Object.fromEntries(
    Object.entries(request.headers ?? {}).map(([k, v]) => [k, v.length > 200 ? `${v.slice(0, 200)}… (${v.length} chars)` : v]),
  );
  return JSON.stringify({
    method: request.method,
    path: request.path.length > 300 ? `${request.path.slice(0, 300)}… (${request.path.length} chars)` : request.path,
    headers,
    body,
  });
}

// ---- The drill ---------------------------------------------------------------------------------

await drill(`fuzzing: ${REQUESTS.toLocaleString('en')} generated requests against every endpoint (seed ${SEED})`, async (report) => {
  const db = await drillDatabase();
  // API and worker in one process (the default `kassa start`): the chain reader runs, so cancels
  // of pending payments and the sandbox's expire control are decided, not left waiting.
  const kassa = await startKassa({ databaseUrl: db.url });
  const a = await drillStore(db.url);
  const b = await drillStore(db.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    // ---- The world the requests refer to: real payments of store A (one per status) and of B.
    const create = async (token: string, body: unknown) => {
      const response = await api(kassa.url, 'POST', '/v1/payments', { token, body });
      if (response.status !== 201) throw new Error(`setup: create answered ${response.status} ${response.text}`);
      return response.json as { id: string; paymentDetails?: { address: string } };
    };
    const created = await create(a.token, { amount: '10', currency: 'USD', order_id: 'fuzz-created', metadata: { k: 'v' } });
    const pending = await create(a.token, { amount: '2', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } });
    const cancelled = await create(a.token, { amount: '1', currency: 'USD' });
    await api(kassa.url, 'POST', `/v1/payments/${cancelled.id}/cancel`, { token: a.token });
    const other = await create(b.token, { amount: '3', currency: 'EUR' });
    const otherPending = await create(b.token, { amount: '3', currency: 'USDT', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } });
    const methods = await api(kassa.url, 'GET', '/v1/payment-methods', { token: a.token });
    const [, payload] = a.token.split('.');
    const world: World = {
      ownIds: [created.id, pending.id, cancelled.id],
      otherIds: [other.id, otherPending.id],
      address: pending.paymentDetails!.address,
      methodIds: (methods.json.data as Array<{ id: string }>).map((method) => method.id),
      token: a.token,
      otherToken: b.token,
      brokenTokens: [
        `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`,
        `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${payload}.c2lnbmF0dXJl`,
        a.token.slice(0, -4) + (a.token.endsWith('AAAA') ? 'BBBB' : 'AAAA'),
        `${a.token.split('.').slice(0, 2).join('.')}.`,
        `${a.token.split('.')[0]}.${Buffer.from(JSON.stringify({ sub: b.storeId, jti: crypto.randomUUID(), iat: 1 })).toString('base64url')}.${a.token.split('.')[2]}`,
        'a.b.c',
        '..',
      ],
    };
    const setupIds = new Set([...world.ownIds, ...world.otherIds]);

    // ---- Every route of the OpenAPI document is fuzzed too (routes added later are not missed).
    const endpoints = [...ENDPOINTS];
    const spec = await api(kassa.url, 'GET', '/openapi.json');
    let added = 0;
    for (const [specPath, operations] of Object.entries(spec.json.paths as Record<string, Record<string, { security?: unknown[] }>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const routePath = specPath.replace(/\{[^}]+\}/g, ':id');
        if (endpoints.some((e) => e.method === method.toUpperCase() && e.path === routePath)) continue;
        const isPublic = Array.isArray(operation.security) && operation.security.length === 0;
        endpoints.push({ method: method.toUpperCase(), path: routePath, auth: isPublic ? 'public' : 'merchant', body: method === 'post' ? 'empty' : 'none' });
        added += 1;
      }
    }

    // ---- Generate, send, check.
    const generated = fc.sample(requestArb(world, endpoints), { seed: SEED, numRuns: REQUESTS });
    const statuses = new Map<number, number>();
    const byRoute = new Map<string, Map<number, number>>();
    const codes = new Map<string, number>();
    const problems: Array<{ index: number; what: string; request: RawRequest; status: number; text: string }> = [];
    const announced = new Set<string>();
    let serverErrors = 0;
    let acceptedBroken = 0;
    let badHeaders = 0;
    let transportErrors = 0;
    let next = 0;
    const started = performance.now();
    const worker = async () => {
      while (next < generated.length) {
        const index = next++;
        const { request, endpoint, validToken } = generated[index]!;
        let response: RawResponse;
        try {
          response = await rawRequest(kassa.url, request, { agent, timeoutMs: 30_000 });
        } catch (error) {
          transportErrors += 1;
          problems.push({ index, what: `no HTTP answer: ${(error as Error).message}`, request, status: 0, text: '' });
          continue;
        }
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const route = endpoint ? `${endpoint.method} ${endpoint.path}` : 'unknown paths';
        const perRoute = byRoute.get(route) ?? new Map<number, number>();
        perRoute.set(response.status, (perRoute.get(response.status) ?? 0) + 1);
        byRoute.set(route, perRoute);
        // Every answer carries a sane request id (junk sent is replaced, never echoed) and nosniff.
        const requestId = String(response.headers['x-request-id'] ?? '');
        const sentId = request.headers?.['x-request-id'];
        // (An answer of the HTTP parser — 431, malformed — comes before any header was read: nothing to echo.)
        const parserAnswer = ['headers_too_large', 'malformed_request'].includes(response.json?.error?.code) && response.headers.connection === 'close';
        if (
          !/^[\w.:@/+=-]{1,128}$/.test(requestId) ||
          (!parserAnswer && sentId !== undefined && requestId !== sentId && /^[\w.:@/+=-]{1,128}$/.test(sentId)) ||
          response.headers['x-content-type-options'] !== 'nosniff'
        ) {
          badHeaders += 1;
          problems.push({
            index,
            what: `response headers: X-Request-Id ${JSON.stringify(requestId.slice(0, 40))}, X-Content-Type-Options ${response.headers['x-content-type-options']}`,
            request,
            status: response.status,
            text: response.text,
          });
        }
        const code = response.json?.error?.code;
        if (typeof code === 'string') codes.set(code, (codes.get(code) ?? 0) + 1);
        if (response.status >= 200 && response.status < 300 && response.json && typeof response.json === 'object') {
          for (const id of [response.json.id, response.json.paymentID]) if (typeof id === 'string') announced.add(id);
        }
        if (response.status >= 500) {
          const allowed =
            response.status === 503 &&
            ['rate_unavailable', 'service_unavailable', 'chain_behind', 'too_many_streams'].includes(code) &&
            envelopeProblem(request, response) === null;
          if (!allowed) {
            serverErrors += 1;
            problems.push({ index, what: `${response.status}`, request, status: response.status, text: response.text });
          }
        } else if (response.status >= 400) {
          const problem = envelopeProblem(request, response);
          if (problem) problems.push({ index, what: problem, request, status: response.status, text: response.text });
        } else if (
          response.status < 300 &&
          endpoint?.auth === 'merchant' &&
          !validToken &&
          request.headers?.authorization !== `Bearer ${world.otherToken}` &&
          request.method !== 'OPTIONS'
        ) {
          acceptedBroken += 1;
          problems.push({ index, what: 'a merchant endpoint answered 2xx without a valid token', request, status: response.status, text: response.text });
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (performance.now() - started) / 1000;

    // One example of each kind of problem, with the request that reproduces it.
    const kinds = new Map<string, typeof problems>();
    for (const problem of problems) {
      const kind = problem.what.replace(/\d{3}, documented/, 'NNN, documented');
      kinds.set(kind, [...(kinds.get(kind) ?? []), problem]);
    }
    for (const [kind, list] of [...kinds.entries()].slice(0, 25)) {
      const problem = list[0]!;
      process.stdout.write(
        `problem (${list.length}×) ${kind} — e.g. request #${problem.index} of seed ${SEED}\n  request:  ${reproduce(problem.request)}\n  response: ${problem.status} ${problem.text.slice(0, 300)}\n`,
      );
    }

    const byStatus = [...statuses.entries()]
      .sort(([x], [y]) => x - y)
      .map(([status, n]) => `${status}×${n}`)
      .join(' ');
    report.check(`${generated.length} requests sent, all answered`, transportErrors === 0, `${transportErrors} without an HTTP answer`);
    report.check('endpoints covered', endpoints.length >= ENDPOINTS.length, `${endpoints.length} routes (${added} more from /openapi.json) + unknown paths`);
    report.check('no 5xx but the documented 503s', serverErrors === 0, `${serverErrors} server errors; statuses ${byStatus}`);
    const envelopeProblems = problems.filter(
      (p) => p.status >= 400 && p.status < 500 && !p.what.startsWith('response headers') && !p.what.startsWith('a merchant endpoint'),
    ).length;
    report.check(
      'every 4xx is the envelope with a documented code, type and status',
      envelopeProblems === 0,
      `${envelopeProblems} bad; ${codes.size} codes seen of ${DOCUMENTED.size} documented`,
    );
    report.check('every answer has a sane X-Request-Id (junk replaced) and nosniff', badHeaders === 0, `${badHeaders} without`);
    report.check('no merchant endpoint answered 2xx to a broken token', acceptedBroken === 0, `${acceptedBroken} accepted`);

    // ---- Requests that never reach Koa: fixed malformed ones and generated garbage.
    const garbage = fc.sample(garbageArb, { seed: SEED, numRuns: Math.ceil(REQUESTS / 100) });
    const socketProblems: string[] = [];
    const socketStatuses = new Map<number, number>();
    for (const bytes of [...MALFORMED, ...garbage]) {
      const answer = await rawSocket(kassa.url, bytes);
      socketStatuses.set(answer.status, (socketStatuses.get(answer.status) ?? 0) + 1);
      const shown = JSON.stringify(bytes.length > 120 ? `${bytes.slice(0, 120)}… (${bytes.length} bytes)` : bytes);
      if (answer.status === 0) socketProblems.push(`${shown}: no HTTP answer`);
      else if (!/^[\w.:@/+=-]{1,128}$/.test(answer.headers['x-request-id'] ?? '') || answer.headers['x-content-type-options'] !== 'nosniff')
        socketProblems.push(`${shown}: ${answer.status} without X-Request-Id or nosniff`);
      else if (answer.status >= 500) socketProblems.push(`${shown}: ${answer.status}`);
      else if (answer.status >= 400) {
        let json: unknown;
        try {
          json = JSON.parse(answer.text);
        } catch {
          json = undefined;
        }
        const isHead = bytes.startsWith('HEAD ');
        const problem =
          isHead && answer.text !== ''
            ? 'a body in the answer to HEAD'
            : envelopeProblem({ method: isHead ? 'HEAD' : 'POST', path: '/' }, { status: answer.status, headers: answer.headers, text: answer.text, json });
        if (problem) socketProblems.push(`${shown}: ${answer.status} ${problem}`);
      }
    }
    for (const problem of socketProblems.slice(0, 10)) process.stdout.write(`malformed request problem: ${problem}\n`);
    const byStatusRaw = [...socketStatuses.entries()]
      .sort(([x], [y]) => x - y)
      .map(([status, n]) => `${status}×${n}`)
      .join(' ');
    report.check(
      'malformed HTTP (bare socket): answered, in the envelope',
      socketProblems.length === 0,
      `${MALFORMED.length + garbage.length} requests: ${byStatusRaw}; ${socketProblems.length} bad`,
    );

    // ---- Nothing was created but what a 2xx announced.
    const ids = await a.pool.anyFirst(sql.type(z.object({ id: z.string() }))`select id from payments`);
    const unannounced = ids.filter((id) => !setupIds.has(id) && !announced.has(id));
    report.check(
      'no payment exists that a 2xx did not announce',
      unannounced.length === 0,
      `${ids.length - setupIds.size} payments created by the fuzz, ${unannounced.length} unannounced`,
    );
    const orphans = await a.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from deposit_addresses d join payments p on p.id = d.payment_id where p.payment_method_id is null
    `);
    report.check('no deposit address without a chosen method', orphans === 0, `${orphans}`);

    // ---- Still healthy, and nothing unexpected in the logs.
    const health = await api(kassa.url, 'GET', '/healthz');
    const after = await api(kassa.url, 'POST', '/v1/payments', { token: a.token, body: { amount: '5', currency: 'USD' } });
    const proto = await api(kassa.url, 'GET', `/v1/payments/${after.json?.id}`, { token: a.token });
    report.check(
      'healthy afterwards: /healthz 200, a create 201, a read 200',
      health.status === 200 && after.status === 201 && proto.status === 200 && kassa.child.exitCode === null,
      `${health.status} / ${after.status} / ${proto.status}`,
    );
    report.check(
      'no prototype pollution visible',
      proto.json?.metadata !== undefined && Object.keys(proto.json.metadata).length === 0 && ({} as Record<string, unknown>).admin === undefined,
      JSON.stringify(proto.json?.metadata),
    );
    const errorLines = kassa
      .output()
      .split('\n')
      .filter((line) => /"level":(50|60)/.test(line));
    report.check('no error logged by the service', errorLines.length === 0, errorLines.length ? errorLines[0]!.slice(0, 200) : '0 lines at level error');

    report.figure('requests', generated.length);
    report.figure('requests per second', (generated.length / seconds).toFixed(0));
    report.figure('statuses', byStatus);
    report.figure(
      'error codes seen',
      [...codes.entries()]
        .sort(([, x], [, y]) => y - x)
        .map(([code, n]) => `${code}×${n}`)
        .join(' '),
    );
    // Statuses per route, printed before the table (so that the table stays at the end of the output).
    process.stdout.write('statuses per route:\n');
    for (const [route, perRoute] of [...byRoute.entries()].sort(([x], [y]) => x.localeCompare(y))) {
      const total = [...perRoute.values()].reduce((sum, n) => sum + n, 0);
      process.stdout.write(
        `  ${route.padEnd(45)} ${String(total).padStart(5)}: ${[...perRoute.entries()]
          .sort(([x], [y]) => x - y)
          .map(([status, n]) => `${status}×${n}`)
          .join(' ')}\n`,
      );
    }
    process.stdout.write('\n');
    report.figure('seed', `${SEED} (replay: node drills/fuzz.ts${LONG ? ' --long' : ''} --seed ${SEED})`);
  } finally {
    agent.destroy();
    await a.pool.end();
    await b.pool.end();
    await kassa.stop();
    await db.destroy();
  }
});
