// Rate limits per deployment, not per process: two `kassa start --api` processes against one
// database share one counter per store (RATE_LIMIT_PER_STORE) and one failed-authentication budget
// per client address (RATE_LIMIT_PER_CLIENT), kept in PostgreSQL (table rate_limits).
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

  it("one store's requests spread over both processes count against one bucket of 2 × RATE_LIMIT_PER_STORE", async () => {
    const { token } = await createTestStore(db.pool, { name: 'Shared limit' });
    // One after the other (each process verifies the token once: its first request takes from the
    // failed-authentication budget and gives it back), alternating between the processes.
    const statuses: number[] = [];
    const limits: Array<string | null> = [];
    for (let i = 0; i < 10; i += 1) {
      const answer = await fetch(`${processes[i % 2]!.url}/v1/payment-methods`, { headers: { authorization: `Bearer ${token}` } });
      statuses.push(answer.status);
      limits.push(answer.headers.get('ratelimit-limit'));
      await answer.arrayBuffer();
    }
    // 6 allowed in the window whichever process answered (each process alone would have allowed 6: 10 in all).
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429, 429, 429, 429]);
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
    assert.deepEqual(statuses.slice(0, 4), [401, 401, 401, 401], String(statuses));
    assert.ok(
      statuses.slice(4).every((status) => status === 429),
      String(statuses),
    );
  });
});
