// Drill 1 — idempotent retry storm: many concurrent creates over a set of idempotency keys give
// exactly one payment per key, and every response for a key is the same, byte for byte.
import { api, drill, drillDatabase, drillStore, LONG, startKassa } from './lib.ts';
import { sql, z } from '../src/db/pool.ts';

const REQUESTS = LONG ? 1000 : 200;
const KEYS = LONG ? 100 : 20;

await drill(`idempotent retry storm: ${REQUESTS} concurrent creates over ${KEYS} keys`, async (report) => {
  const db = await drillDatabase();
  const kassa = await startKassa({ databaseUrl: db.url, part: 'api' });
  const { token, storeId, pool } = await drillStore(db.url);
  try {
    const keys = Array.from({ length: KEYS }, () => crypto.randomUUID());
    const started = performance.now();
    const responses = await Promise.all(
      Array.from({ length: REQUESTS }, (_, i) => {
        const key = keys[i % KEYS]!;
        return api(kassa.url, 'POST', '/v1/payments', {
          token,
          headers: { 'x-idempotency-key': key },
          body: { amount: '10', currency: 'USD', order_id: `storm-${key}`, payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } },
        }).then((response) => ({ key, response }));
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const byKey = new Map<string, Set<string>>();
    for (const { key, response } of responses) {
      const texts = byKey.get(key) ?? new Set<string>();
      texts.add(`${response.status} ${response.text}`);
      byKey.set(key, texts);
    }
    const statuses = new Map<number, number>();
    for (const { response } of responses) statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    report.check('every request answered 201', statuses.get(201) === REQUESTS, JSON.stringify(Object.fromEntries(statuses)));
    const differing = [...byKey.values()].filter((texts) => texts.size !== 1).length;
    report.check('every response for a key is identical', differing === 0, `${differing} keys with differing responses`);
    const payments = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where store_id = ${storeId}`);
    report.check(`exactly ${KEYS} payments exist`, payments === KEYS, `${payments} payments`);
    const addresses = await pool.oneFirst(
      sql.type(
        z.object({ n: z.number() }),
      )`select count(distinct d.address)::int as n from deposit_addresses d join payments p on p.id = d.payment_id where p.store_id = ${storeId}`,
    );
    report.check('one deposit address per payment', addresses === KEYS, `${addresses} addresses`);
    report.figure('requests per second', (REQUESTS / seconds).toFixed(0));
  } finally {
    await pool.end();
    await kassa.stop();
    await db.destroy();
  }
});
