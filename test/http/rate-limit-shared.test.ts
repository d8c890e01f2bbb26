// Rate limits per deployment, not per process: two `kassa start --api` processes against one
// database share one counter per store (RATE_LIMIT_PER_STORE) and one failed-authentication budget
// per client address (RATE_LIMIT_PER_CLIENT), kept in PostgreSQL (table rate_limits), each process
// counting in memory and reconciling with it every 200 ms (src/http/rateLimit.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createTestStore } from '../helpers/factories.ts';
import { startKassaProcess, type KassaProcess } from '../helpers/kassaProcess.ts';
import { freePort } from '../helpers/servers.ts';

describe('rate limits shared by two API processes', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let processes: KassaProcess[] = [];

  before(async () => {
    db = await createTestDatabase();
    const closed = await freePort();
    // Testnet with unreachable chain and rates APIs: the API answers without either.
    const env = {
      DATABASE_URL: db.url,
      TON_NETWORK: 'testnet',
      BASE_URL: 'https://pay.example.test',
      KASSA_MASTER_KEY: 'cd'.repeat(32),
      TON_API_URL: `http://127.0.0.1:${closed}`,
      TON_API_RPS: '0',
      RATES_API_URL: `http://127.0.0.1:${closed}`,
      RATE_LIMIT_PER_STORE: '3',
      RATE_LIMIT_PER_CLIENT: '2',
    };
    // One after the other: both migrate the same database.
    processes.push(await startKassaProcess({ env, args: ['start', '--api'] }));
    processes.push(await startKassaProcess({ env, args: ['start', '--api'] }));
  });
  after(async () => {
    await Promise.all(processes.map((kassa) => kassa.stop()));
    processes = [];
    await db?.drop();
  });

  it("one store's requests spread over both processes count against one window of 2 × RATE_LIMIT_PER_STORE, overshooting by at most half of it", async () => {
    const { token } = await createTestStore(db.pool, { name: 'Shared limit' });
    // One after the other (each process verifies the token once: its first request takes from the
    // failed-authentication budget and gives it back), alternating between the processes.
    const statuses: number[] = [];
    const limits: Array<string | null> = [];
    const ask = async (kassa: KassaProcess) => {
      const answer = await fetch(`${kassa.url}/v1/payment-methods`, { headers: { authorization: `Bearer ${token}` } });
      limits.push(answer.headers.get('ratelimit-limit'));
      await answer.arrayBuffer();
      return answer.status;
    };
    for (let i = 0; i < 20; i += 1) statuses.push(await ask(processes[i % 2]!));
    const allowed = statuses.filter((status) => status === 200).length;
    // Each process alone would allow 6 (12 in all). Shared: 6 in the window, and what the other
    // process admitted from memory before its next reconciliation — at most half the window (3) —
    // on top (docs/OPERATIONS.md, Rate limits).
    assert.ok(allowed >= 6 && allowed <= 9, String(statuses));
    assert.deepEqual(statuses.slice(0, 6), [200, 200, 200, 200, 200, 200], String(statuses));
    assert.ok(statuses.slice(allowed).every((status) => status === 429), String(statuses));
    // Once reconciled, both processes read the window's total: both refuse.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual([await ask(processes[0]!), await ask(processes[1]!)], [429, 429]);
    assert.deepEqual(new Set(limits), new Set(['6']));
  });

  it('failed authentications from one address spread over both processes share one budget of 2 × RATE_LIMIT_PER_CLIENT', async () => {
    const forged = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln';
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        fetch(`${processes[i % 2]!.url}/v1/payments/00000000-0000-4000-8000-000000000000`, { headers: { authorization: `Bearer ${forged}` } }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    await Promise.all(answers.map((answer) => answer.arrayBuffer()));
    // 4 verifications in the window, and at most half of it (2) more admitted by one process from
    // memory while the other's count was on its way (docs/OPERATIONS.md, Rate limits).
    const verified = statuses.filter((status) => status === 401).length;
    assert.ok(verified >= 4 && verified <= 6, String(statuses));
    assert.ok(
      statuses.slice(verified).every((status) => status === 429),
      String(statuses),
    );
  });
});
