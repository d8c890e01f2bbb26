// Drill — worker killed mid-send (issue 25): the worker's signer is killed with SIGKILL while it
// sends a sweep, at the two points where a crash could send money twice, and a new worker is
// started. The worker reaches the sandbox chain through a proxy that sees its broadcast (`sendBoc`):
//   1. the proxy holds the broadcast back: the worker has signed and recorded the message (state
//      `sent`) and dies before the chain got it;
//   2. the proxy passes the broadcast to the chain and holds the answer back: the chain has the
//      message and the worker dies before it recorded anything more.
// Either way the sweep leaves once: the chain that had the message confirms that same message
// (signed once); the chain that never had it gets it from the new worker, or — once its valid_until
// has passed unseen — a message signed afresh (the first can never land). Each treasury gets
// exactly what the books say was sent, once; each deposit's wallet made exactly one outgoing transaction.
//
//   node drills/worker-killed-mid-send.ts     short tier (the only one: two sweeps)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql, z } from '../src/db/pool.ts';
import { SANDBOX_TONCENTER_PATH } from '../src/chain/sandbox/path.ts';
import { api, drill, drillDatabase, drillStore, startKassa, waitFor, type Kassa } from './lib.ts';

type Mode = 'pass' | 'hold_broadcast' | 'hold_answer';

await drill('worker killed mid-send', async (report) => {
  const db = await drillDatabase();
  // A signed message lives 10 s (OUTGOING_MESSAGE_TTL_SECONDS; 60 by default): the held broadcast's
  // message expires unseen and is signed afresh within the drill's short tier.
  const env = { WORKER_DEAD_AFTER_SECONDS: '5', OUTGOING_MESSAGE_TTL_SECONDS: '10' };
  const apiProcess = await startKassa({ databaseUrl: db.url, part: 'api', env });
  const upstream = new URL(apiProcess.url);

  // The worker's way to the chain: everything passes, except a broadcast while a mode holds it.
  let mode: Mode = 'pass';
  let held = 0;
  const proxy = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const broadcast = /"method"\s*:\s*"sendBoc/.test(body.toString('utf8'));
      if (broadcast && mode === 'hold_broadcast') {
        held += 1;
        return; // never forwarded, never answered
      }
      const forward = http.request(
        { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: request.headers },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('end', () => {
            if (broadcast && mode === 'hold_answer') {
              held += 1;
              return; // the chain has it; the worker never hears back
            }
            response.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(parts));
          });
        },
      );
      forward.on('error', () => response.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

  let worker: Kassa | null = await startKassa({ databaseUrl: db.url, part: 'worker', env, baseUrl: proxyUrl });
  const { token, pool, storeId } = await drillStore(db.url, 'TON/TON');
  const treasuryOf = async () => pool.oneFirst(sql.type(z.object({ treasury: z.string().nullable() }))`select treasury from stores where id = ${storeId}`);
  const accounts = async (address: string) => (await api(apiProcess.url, 'GET', `/sandbox/v1/accounts/${address}`)).json;
  const sweepOf = async (paymentId: string) =>
    pool.maybeOne(sql.type(
      z.object({ state: z.string(), messages_signed: z.number(), sent: z.string().nullable(), hash: z.string().nullable(), from_address: z.string() }),
    )`
      select state, messages_signed, sent_amount_base_units::text as sent, message_hash as hash, from_address
      from outgoing_transfers where payment_id = ${paymentId} and kind = 'sweep'
    `);
  try {
    // A treasury no one deployed (the store's; an address of the sandbox network).
    const treasury = `0:${'7e'.repeat(32)}`;
    await pool.query(sql.unsafe`update stores set treasury = ${treasury} where id = ${storeId}`);
    report.check('the store has a treasury', (await treasuryOf()) === treasury);

    let sentTotal = 0n;
    for (const [n, kill] of (['hold_broadcast', 'hold_answer'] as const).entries()) {
      const created = await api(apiProcess.url, 'POST', '/v1/payments', {
        token,
        body: { amount: '1', currency: 'TON', order_id: `drill-send-${n}`, payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
      });
      const payment = created.json;
      mode = kill;
      const heldBefore = held;
      await api(apiProcess.url, 'POST', '/sandbox/v1/transfers', { body: { to: payment.paymentDetails.address, coin: 'TON', amount: '1' } });
      await waitFor(`the sweep's broadcast (${kill})`, async () => held > heldBefore, 60_000);
      const recorded = await sweepOf(payment.id);
      report.check(`${kill}: the message was recorded before the broadcast`, recorded?.state === 'sent', JSON.stringify(recorded));
      await worker.stop('SIGKILL');
      worker = null;
      const killedAt = Date.now();
      mode = 'pass';

      worker = await startKassa({ databaseUrl: db.url, part: 'worker', env, baseUrl: proxyUrl });
      // The dead worker's locked job is unlocked after WORKER_DEAD_AFTER_SECONDS of silence (cron: every minute; here at once).
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      await pool.query(sql.unsafe`select graphile_worker.add_job('worker__unlock_dead')`);
      await waitFor(`the sweep confirmed (${kill})`, async () => (await sweepOf(payment.id))?.state === 'confirmed', 120_000, 200);
      const done = (await sweepOf(payment.id))!;
      // hold_answer: the chain had it, the same message is confirmed. hold_broadcast: the chain never
      // had it; the new worker broadcasts it again, or — once its valid_until has passed unseen — signs
      // the transfer afresh (the first can never land). Either way it leaves once.
      report.check(
        `${kill}: ${kill === 'hold_answer' ? 'the same message landed (signed once)' : 'it landed once (re-sent, or re-signed after the first expired unseen)'}`,
        kill === 'hold_answer' ? done.hash === recorded?.hash && done.messages_signed === 1 : done.messages_signed <= 2,
        `messages signed ${done.messages_signed}, ${done.hash === recorded?.hash ? 'the recorded message' : 'a fresh message'}`,
      );
      const deposit = await accounts(done.from_address);
      const external = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        select count(*)::int as n from outgoing_transfers where from_address = ${done.from_address} and transaction_hash is not null
      `);
      report.check(
        `${kill}: the deposit made one outgoing transaction and is empty`,
        external === 1 && deposit.balances.TON === '0',
        JSON.stringify(deposit.balances),
      );
      sentTotal += BigInt(done.sent!);
      report.figure(`${kill}: kill → confirmed`, `${((Date.now() - killedAt) / 1000).toFixed(1)} s`);
    }
    // What reached the treasury, read from the chain's own history of it (its balance is less by the storage fee an undeployed account pays).
    const history = await api(apiProcess.url, 'GET', `${SANDBOX_TONCENTER_PATH}/api/v3/transactions?account=${treasury}&limit=100&sort=asc`);
    const incoming = (history.json.transactions as Array<{ in_msg?: { value?: string | null } | null }>).map((tx) => BigInt(tx.in_msg?.value ?? '0'));
    const arrived = incoming.reduce((sum, value) => sum + value, 0n);
    report.check(
      'the treasury got exactly what the books say was sent, in two transfers (once each)',
      arrived === sentTotal && incoming.length === 2,
      `${arrived} in ${incoming.length} vs ${sentTotal}`,
    );
  } finally {
    await pool.end();
    await worker?.stop();
    await apiProcess.stop();
    proxy.closeAllConnections();
    proxy.close();
    await db.destroy();
  }
});
