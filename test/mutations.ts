// The mutation list (issue 49 item 7): one-line breaks planted, one at a time, in the paths where a
// silent mistake costs money or trust — money out, permissions, events, payment links, Telegram — each
// run against the test file(s) that should catch it. Every break must fail its tests; one that passes
// is a hole in the tests, not in the code. Not part of `npm test` (each break costs a test run):
//
//   npm run mutations                    every break, in order; prints each result and the score
//   npm run mutations -- --only 3,7      breaks 3 and 7 (numbers as --list shows them)
//   npm run mutations -- --list          the list, and whether each search text is still found once
//
// (npm runs it on the project's Node 24, as `npm test`; `node_modules/.bin/node test/mutations.ts` too.)
//
// Each break is applied in place to its file and the file's own text is written back afterwards
// (also on Ctrl-C); a file with uncommitted changes is refused, so a run never mixes with work in
// progress. The tests run as `node test/run.ts <files>` with KASSA_EMBEDDED_PG_PORT from the
// environment (default 54479: beside a running suite's 54329). test/README.md says more.
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

interface Mutation {
  area: 'money out' | 'permissions' | 'events' | 'links' | 'Telegram';
  /** What the break does, in words. */
  what: string;
  file: string;
  /** Found exactly once in the file. */
  find: string;
  replace: string;
  /** The test files that must fail (paths, as `npm test --` takes them). */
  tests: string[];
  /** Only the tests of those files whose name matches this regular expression (KASSA_TEST_NAME): a long file's one case. */
  cases?: string;
}

export const MUTATIONS: Mutation[] = [
  // ---- Money out.
  {
    area: 'money out',
    what: 'a transient failure is retried once more than allowed',
    file: 'src/treasury/transitions.ts',
    find: 'if (retries >= MAX_TRANSIENT_RETRIES) return null;',
    replace: 'if (retries > MAX_TRANSIENT_RETRIES) return null;',
    tests: ['test/treasury/transitions.test.ts'],
  },
  {
    area: 'money out',
    what: 'a transfer is signed again after the last allowed message',
    file: 'src/treasury/transitions.ts',
    find: 'if (subject.messagesSigned >= MAX_MESSAGES_SIGNED)',
    replace: 'if (subject.messagesSigned > MAX_MESSAGES_SIGNED)',
    tests: ['test/treasury/transitions.test.ts'],
  },
  {
    area: 'money out',
    what: 'gas top-ups never give up',
    file: 'src/treasury/whatToSend.ts',
    find: 'if (failedTopUps.count >= MAX_TOP_UP_FAILURES) return',
    replace: 'if (failedTopUps.count > MAX_TOP_UP_FAILURES) return',
    tests: ['test/treasury/transitions.test.ts'],
  },
  {
    area: 'money out',
    what: 'the next message reuses a seqno already booked',
    file: 'src/treasury/whatToSend.ts',
    find: 'return Math.max(chainSeqno, bookedNext);',
    replace: 'return chainSeqno;',
    tests: ['test/treasury/transitions.test.ts'],
  },
  {
    area: 'money out',
    what: 'a TON refund is sent without room for its fee',
    file: 'src/treasury/whatToSend.ts',
    find: 'if (amount + TON_FEE_RESERVE_BASE_UNITS > balance)',
    replace: 'if (amount > balance)',
    tests: ['test/treasury/transitions.test.ts'],
  },
  {
    area: 'money out',
    what: 'a sweep leaves dust behind instead of carrying the whole balance',
    file: 'src/treasury/whatToSend.ts',
    find: 'if (balance - amount < TON_FEE_RESERVE_BASE_UNITS) return',
    replace: 'if (balance - amount < 0n) return',
    tests: ['test/treasury/transitions.test.ts'],
  },
  {
    area: 'money out',
    what: 'a refund is accepted without reserving its fee from what is refundable',
    file: 'src/treasury/refunds.ts',
    find: 'if (args.amount + reserve <= args.refundable) return { ok: true, feeReserved: reserve };',
    replace: 'if (args.amount <= args.refundable) return { ok: true, feeReserved: reserve };',
    tests: ['test/treasury/transitions.test.ts', 'test/treasury/refunds.test.ts'],
  },
  {
    area: 'money out',
    what: 'a refund below the smallest amount is planned',
    file: 'src/treasury/refunds.ts',
    find: 'if (amount < BigInt(coin.minimum)) throw refundBelowMinimum(',
    replace: 'if (amount < 0n) throw refundBelowMinimum(',
    tests: ['test/treasury/refunds.test.ts'],
  },
  {
    area: 'money out',
    what: 'the closing message is planned before the payment is settled',
    file: 'src/treasury/closing.ts',
    find: 'if (!facts.paymentSettled || facts.otherMoney) return null;',
    replace: 'if (facts.otherMoney) return null;',
    tests: ['test/treasury/transitions.test.ts'],
  },
  {
    area: 'money out',
    what: 'the state table forgets that a re-plan of money that left late is failed (superseded)',
    file: 'src/treasury/transitions.ts',
    find: "exits: ['signed', 'confirmed', 'superseded', 'failed_on_chain', 'not_sendable'],",
    replace: "exits: ['signed', 'confirmed', 'failed_on_chain', 'not_sendable'],",
    tests: ['test/treasury/transitions.test.ts'],
  },
  {
    area: 'money out',
    what: 'a failed transfer confirmed late leaves its re-plan to pay the money again (supersedeReplans skipped)',
    file: 'src/treasury/confirmations.ts',
    find: "if (row.state === 'failed') told.superseded.push(...(await supersedeReplans(db, row.id, now)));",
    replace: "if (row.state === 'failed') told.superseded.push();",
    tests: ['test/treasury/outgoing.test.ts'],
  },
  {
    area: 'money out',
    what: "the carried-more check never reports money a closing message's carry-all took since the books were read",
    file: 'src/treasury/closing.ts',
    find: 'return kind && late > 0n ? {',
    replace: 'return kind && late < 0n ? {',
    tests: ['test/treasury/money-out.test.ts'],
  },
  // ---- Permissions.
  {
    area: 'permissions',
    what: "the dashboard's policy step lets every role through",
    file: 'src/http/routes/dashboardSteps.ts',
    find: 'if (!can(role, action)) {',
    replace: "if (!can(role, action) && action.startsWith('store.')) {",
    tests: ['test/structure/dashboard-permissions.test.ts'],
  },
  {
    area: 'permissions',
    what: 'a viewer may make payment links (the check of POST /links removed)',
    file: 'src/http/routes/dashboardLinks.ts',
    find: '      ...manage,\n      form: linkForm,',
    replace: '      form: linkForm,',
    tests: ['test/structure/dashboard-permissions.test.ts'],
  },
  {
    area: 'permissions',
    what: 'a viewer may add a webhook endpoint (the check removed)',
    file: 'src/http/routes/dashboardEndpoints.ts',
    find: '{ ...manage, form: endpointForm, refused:',
    replace: '{ form: endpointForm, refused:',
    tests: ['test/structure/dashboard-permissions.test.ts'],
  },
  {
    area: 'permissions',
    what: 'viewers may manage payment links (the policy table loosened)',
    file: 'src/dashboard/policy.ts',
    find: "'links.manage': OWNERS,",
    replace: "'links.manage': EVERY_MEMBER,",
    tests: ['test/structure/dashboard-permissions.test.ts'],
  },
  {
    area: 'permissions',
    what: "a token's scope is never checked",
    file: 'src/auth/scopes.ts',
    find: 'if (scopeAllows(scope, need)) return;',
    replace: 'return;',
    tests: ['test/http/token-scopes.test.ts'],
  },
  {
    area: 'permissions',
    what: 'a read-only token may change things (the scope table loosened)',
    file: 'src/auth/scopes.ts',
    find: "read_only: ['read'],",
    replace: "read_only: ['read', 'change'],",
    tests: ['test/http/token-scopes.test.ts'],
  },
  {
    area: 'permissions',
    what: 'creating a payment link needs only reading',
    file: 'src/http/routes/paymentLinks.ts',
    find: "router.post(L, guards.merchant, needs('change'),",
    replace: "router.post(L, guards.merchant, needs('read'),",
    tests: ['test/http/token-scopes.test.ts'],
  },
  {
    area: 'permissions',
    what: "reading a payment link needs a full token (a read_only token's reads refused)",
    file: 'src/http/routes/paymentLinks.ts',
    find: "needs('read'), guards.storeLimit, validate({ params: paymentLinkParams }), retrieve",
    replace: "needs('change'), guards.storeLimit, validate({ params: paymentLinkParams }), retrieve",
    tests: ['test/http/payment-links.test.ts'],
    cases: 'a fixed amount',
  },
  // ---- Events.
  {
    area: 'events',
    what: "an endpoint gets other stores' events",
    file: 'src/webhooks/events.ts',
    find: 'from event join webhook_endpoints e on e.store_id = event.store_id and event.type = any(e.events)',
    replace: 'from event join webhook_endpoints e on event.type = any(e.events)',
    tests: ['test/webhooks/endpoints.test.ts'],
  },
  {
    area: 'events',
    what: 'an endpoint gets event types it did not ask for',
    file: 'src/webhooks/events.ts',
    find: 'on e.store_id = event.store_id and event.type = any(e.events)',
    replace: 'on e.store_id = event.store_id',
    tests: ['test/webhooks/endpoints.test.ts'],
  },
  {
    area: 'events',
    what: 'members are notified on channels they did not choose',
    file: 'src/webhooks/events.ts',
    find: 'where ch.chosen and',
    replace: 'where',
    tests: ['test/webhooks/notifications.test.ts'],
  },
  {
    area: 'events',
    what: 'any signature verifies',
    file: 'src/webhooks/sign.ts',
    find: 'return nacl.sign.detached.verify(new Uint8Array(bytes), new Uint8Array(sig), publicKey);',
    replace: 'return true;',
    tests: ['test/webhooks/sign.test.ts'],
  },
  {
    area: 'events',
    what: 'a delivery is retried past its 12 hours',
    file: 'src/webhooks/deliver.ts',
    find: 'startedAt.getTime() - delivery.first_attempt_at.getTime() > DELIVERY_WINDOW_MS',
    replace: 'startedAt.getTime() - delivery.first_attempt_at.getTime() > 1000 * DELIVERY_WINDOW_MS',
    tests: ['test/webhooks/endpoints.test.ts'],
  },
  {
    area: 'events',
    what: "a payment's own webhook (webhookURL) is sent for a payment not completed",
    file: 'src/webhooks/deliver.ts',
    find: "if (delivery.endpoint_id === null && delivery.payment_status !== 'completed') return failNow",
    replace: 'if (delivery.endpoint_id === null && delivery.payment_status === null) return failNow',
    tests: ['test/webhooks/delivery.test.ts'],
    cases: 'tells of completion only',
  },
  {
    area: 'events',
    what: "Kassa's gas going home (gas_return) is told to the store as its sweep",
    file: 'src/treasury/events.ts',
    find: "and o.reason <> 'gas_return' ",
    replace: '',
    tests: ['test/treasury/money-out.test.ts'],
    cases: "Kassa's gas goes back to the gas wallet in the same message",
  },
  {
    area: 'events',
    what: "the dashboard's live list tells of every poll, not only of a change",
    file: 'src/http/routes/dashboardPayments.ts',
    find: 'if (last !== null && fingerprint !== last) stream.write',
    replace: 'if (last !== null) stream.write',
    tests: ['test/http/dashboard.test.ts'],
    cases: 'events stream of the list',
  },
  // ---- Payment links.
  {
    area: 'links',
    what: 'a link takes one payment more than its limit',
    file: 'src/paymentLinks/links.ts',
    find: "if (link.max_payments !== null && link.payments >= link.max_payments) return 'used_up';",
    replace: "if (link.max_payments !== null && link.payments > link.max_payments) return 'used_up';",
    tests: ['test/paymentLinks/links.test.ts', 'test/paymentLinks/link-end.test.ts'],
  },
  {
    area: 'links',
    what: 'an expired link stays open',
    file: 'src/paymentLinks/links.ts',
    find: "if (link.expires_at !== null && link.expires_at.getTime() <= now.getTime()) return 'expired';",
    replace: "if (false) return 'expired';",
    tests: ['test/paymentLinks/links.test.ts', 'test/paymentLinks/link-end.test.ts'],
  },
  {
    area: 'links',
    what: "a link's open payments do not count toward its limit",
    file: 'src/paymentLinks/links.ts',
    find: 'link.payments + openPayments >= link.max_payments',
    replace: 'link.payments >= link.max_payments',
    tests: ['test/paymentLinks/links.test.ts', 'test/paymentLinks/link-end.test.ts'],
  },
  {
    area: 'links',
    what: 'a link may be made already expired',
    file: 'src/paymentLinks/links.ts',
    find: "if (input.expiresAt !== undefined && input.expiresAt.getTime() <= now.getTime()) return new KassaError('invalid_expires_at'",
    replace: "if (false) return new KassaError('invalid_expires_at'",
    tests: ['test/paymentLinks/links.test.ts', 'test/http/payment-links.test.ts'],
  },
  // ---- Telegram.
  {
    area: 'Telegram',
    what: "the Mini App's launch data is taken without its signature",
    file: 'src/telegram/initData.ts',
    find: 'if (!crypto.verify(null,',
    replace: 'if (false && !crypto.verify(null,',
    tests: ['test/telegram/mini-app.test.ts'],
  },
  {
    area: 'Telegram',
    what: 'old launch data is taken (no age limit)',
    file: 'src/telegram/initData.ts',
    find: 'if (age > maxAgeSeconds || age < -FUTURE_SKEW_SECONDS)',
    replace: 'if (age < -FUTURE_SKEW_SECONDS)',
    tests: ['test/telegram/mini-app.test.ts'],
  },
  {
    area: 'Telegram',
    what: 'launch data with a field given twice is read',
    file: 'src/telegram/initData.ts',
    find: 'if (fields.has(key)) return null;',
    replace: '',
    tests: ['test/telegram/mini-app.test.ts'],
  },
];

const occurrences = (text: string, find: string) => text.split(find).length - 1;

function list(): boolean {
  let ok = true;
  MUTATIONS.forEach((m, i) => {
    const text = fs.readFileSync(path.join(ROOT, m.file), 'utf8');
    const found = occurrences(text, m.find);
    if (found !== 1) ok = false;
    const state = found === 1 ? 'ok' : found === 0 ? 'NOT FOUND' : `FOUND ${found} TIMES`;
    console.log(`${String(i + 1).padStart(2)}. [${m.area}] ${m.what} — ${m.file} (${state}) → ${m.tests.join(' ')}${m.cases ? ` (cases: /${m.cases}/)` : ''}`);
  });
  return ok;
}

function runTests(tests: string[], cases: string | undefined): Promise<number> {
  return new Promise((resolve) => {
    const env = { ...process.env, KASSA_EMBEDDED_PG_PORT: process.env.KASSA_EMBEDDED_PG_PORT ?? '54479', ...(cases ? { KASSA_TEST_NAME: cases } : {}) };
    const child = spawn(process.execPath, ['test/run.ts', ...tests], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('exit', (code, signal) => {
      if (process.env.MUTATIONS_VERBOSE) process.stdout.write(tail);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/** Applies one break, runs its tests, writes the file's own text back. Caught: the tests failed. */
async function tryOne(m: Mutation): Promise<'caught' | 'survived' | 'stale'> {
  const file = path.join(ROOT, m.file);
  const original = fs.readFileSync(file, 'utf8');
  if (occurrences(original, m.find) !== 1) return 'stale';
  const restore = () => fs.writeFileSync(file, original);
  const onSignal = () => {
    restore();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    fs.writeFileSync(
      file,
      original.replace(m.find, () => m.replace),
    );
    return (await runTests(m.tests, m.cases)) === 0 ? 'survived' : 'caught';
  } finally {
    restore();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--list')) {
    process.exitCode = list() ? 0 : 1;
    return;
  }
  const onlyAt = args.indexOf('--only');
  const chosen =
    onlyAt === -1
      ? MUTATIONS.map((_, i) => i + 1)
      : (args[onlyAt + 1] ?? '')
          .split(',')
          .map(Number)
          .filter((n) => Number.isInteger(n) && n >= 1 && n <= MUTATIONS.length);
  if (chosen.length === 0) throw new Error(`--only takes numbers 1–${MUTATIONS.length}, e.g. --only 3,7`);
  const files = [...new Set(chosen.map((n) => MUTATIONS[n - 1]!.file))];
  const dirty = execFileSync('git', ['status', '--porcelain', '--', ...files], { cwd: ROOT, encoding: 'utf8' }).trim();
  if (dirty !== '') throw new Error(`commit or stash these first (a break is written into them):\n${dirty}`);
  const results: Array<{ n: number; result: string }> = [];
  for (const n of chosen) {
    const m = MUTATIONS[n - 1]!;
    const started = performance.now();
    const result = await tryOne(m);
    results.push({ n, result });
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    console.log(
      `${String(n).padStart(2)}. ${result === 'caught' ? 'caught  ' : result.toUpperCase().padEnd(8)} [${m.area}] ${m.what} (${m.file}, ${seconds} s)`,
    );
  }
  const caught = results.filter((r) => r.result === 'caught').length;
  console.log(`score: ${caught}/${results.length} breaks caught`);
  if (caught !== results.length) process.exitCode = 1;
}

await main();
