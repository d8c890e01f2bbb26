// Drill 3 — worker killed mid-watch: an API process (hosting the sandbox chain) and a worker
// process whose chain reader follows the sandbox's blocks; pending TON and USDT payments (with a
// webhook URL) receive a steady stream of transfers — some paid exactly in parts, some overpaid,
// some left underpaid. While transfers are arriving the worker is killed with SIGKILL right after
// it booked one (mid-step: its lease on the cursor, chain_reader, is left to lapse), and a new
// worker is started. The new worker's reader takes the cursor over once the lease has lapsed and
// goes on from chain_reader.last_block_seqno. Once it settles: every transfer sent is on the books
// exactly once, every payment paid in full is completed exactly once (one completing transfer, one
// `completed` webhook delivery), the underpaid ones are still pending, and nothing is
// double-counted (receivedAmount is the sum sent). The takeover and catch-up times are printed.
//
//   node drills/worker-killed-mid-watch.ts           short tier: 20 payments, ~50 transfers over 12 s
//   node drills/worker-killed-mid-watch.ts --long    long tier: 100 payments, ~240 transfers over 60 s
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, drill, drillDatabase, drillStore, keepLogs, LONG, readerRunning, sleep, startApart, startKassa, waitFor, type Kassa } from './lib.ts';
import { sql, z } from '../src/db/pool.ts';
import { LEASE_MS } from '../src/reader/cursor.ts';
import { fromBaseUnits, toBaseUnits } from '../src/money.ts';

const PAYMENTS = LONG ? 100 : 20;
const WINDOW_MS = LONG ? 60_000 : 12_000; // transfers are spread over this long
const KILL_AFTER = 0.35; // share of the transfers sent before the kill
const RECOVERY_LIMIT_MS = 60_000; // the books must have caught up this long after the kill
const SETTLE_LIMIT_MS = LONG ? 5 * 60_000 : 90_000;
const DECIMALS = { TON: 9, USDT: 6 } as const;

type Plan = 'exact' | 'over' | 'under';
interface Cursor {
  last: number;
  latest: number;
  reader: string | null;
  leaseMs: number;
}
interface Payment {
  id: string;
  coin: 'TON' | 'USDT';
  address: string;
  required: bigint;
  plan: Plan;
  parts: bigint[];
}
interface Sent {
  paymentId: string;
  amount: bigint;
  hash: string;
  sentAt: number;
}

/** Splits the payment's amount: exactly in three parts, over in two (the second crosses), under in two. */
function partsFor(required: bigint, plan: Plan): bigint[] {
  if (plan === 'exact') {
    const a = (required * 40n) / 100n;
    const b = (required * 30n) / 100n;
    return [a, b, required - a - b];
  }
  if (plan === 'over') {
    const a = required / 2n;
    return [a, required - a + required / 10n];
  }
  return [(required * 30n) / 100n, (required * 30n) / 100n];
}

/** The published block (and page) holding each of `hashes`, read from the sandbox's toncenter v3 endpoints. */
async function findBlocks(base: string, hashes: Set<string>): Promise<Map<string, { seqno: number; page: string }>> {
  const found = new Map<string, { seqno: number; page: string }>();
  const v3 = `${base}/sandbox/toncenter/api/v3`;
  const info = (await api(v3, 'GET', '/masterchainInfo')).json;
  const last = Number(info?.last?.seqno);
  for (let seqno = last; seqno > last - 2000 && found.size < hashes.size; seqno -= 1) {
    for (let offset = 0; ; offset += 256) {
      const reply = await api(v3, 'GET', `/transactionsByMasterchainBlock?seqno=${seqno}&limit=256&offset=${offset}&sort=asc`);
      if (reply.status === 404) return found; // before the first block
      const rows: Array<{ hash?: string; in_msg?: { hash?: string } }> = reply.json?.transactions ?? [];
      for (const row of rows) {
        for (const candidate of [row.hash, row.in_msg?.hash]) {
          if (!candidate) continue;
          const hex = /^[0-9a-f]{64}$/i.test(candidate) ? candidate.toLowerCase() : Buffer.from(candidate, 'base64').toString('hex');
          if (hashes.has(hex)) found.set(hex, { seqno, page: `offset ${offset}, ${rows.length} transactions` });
        }
      }
      if (rows.length < 256) break;
    }
  }
  return found;
}

await drill(
  `worker killed mid-watch: ${PAYMENTS} payments, transfers over ${WINDOW_MS / 1000} s, SIGKILL after ${Math.round(KILL_AFTER * 100)} %`,
  async (report) => {
    const db = await drillDatabase();
    const started = await startApart(db.url).catch(async (error: unknown) => {
      await db.destroy();
      throw error;
    });
    const { api: apiProcess, worker: firstWorker } = started;
    let secondWorker: Kassa | undefined;
    const { token, pool } = await drillStore(db.url);
    // The merchant's webhook receiver: records every delivery per payment.
    const hooks = new Map<string, number>();
    const receiver = http.createServer((req, res) => {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        try {
          const id = String(JSON.parse(text).payload.paymentID);
          hooks.set(id, (hooks.get(id) ?? 0) + 1);
        } catch {
          hooks.set('unreadable', (hooks.get('unreadable') ?? 0) + 1);
        }
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const webhookURL = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      await readerRunning(pool);
      // 1. Pending payments through the API: TON and USDT, each with its webhook URL.
      const payments: Payment[] = [];
      const plans: Plan[] = ['exact', 'over', 'under', 'exact', 'over'];
      for (let i = 0; i < PAYMENTS; i += 1) {
        const coin = i % 2 === 0 ? 'TON' : 'USDT';
        const body = { amount: '1', currency: 'USD', order_id: `watch-${i}`, webhookURL, payment_options: { methods: [{ coin, chain: 'TON' }] } };
        const created = await api(apiProcess.url, 'POST', '/v1/payments', { token, body });
        if (created.status !== 201) throw new Error(`create answered ${created.status}: ${created.text.slice(0, 200)}`);
        const required = toBaseUnits(created.json.paymentDetails.coinAmount, DECIMALS[coin]);
        const plan = plans[i % plans.length]!;
        payments.push({ id: created.json.id, coin, address: created.json.paymentDetails.address, required, plan, parts: partsFor(required, plan) });
      }

      // 2. The stream: every payment's first parts (shuffled), then the second parts, then the third,
      //    so each payment's parts arrive in order, spread evenly over the window.
      const queue: Array<{ payment: Payment; amount: bigint }> = [];
      for (let part = 0; part < 3; part += 1) {
        const round = payments.filter((p) => p.parts.length > part).map((payment) => ({ payment, amount: payment.parts[part]! }));
        queue.push(...round.sort(() => Math.random() - 0.5));
      }
      const sent: Sent[] = [];
      const failedSends: string[] = [];
      const every = WINDOW_MS / queue.length;
      const killAt = Math.floor(queue.length * KILL_AFTER);
      let killedAt = 0;
      let secondStartedAt = 0;
      let backlogAtKill = 0;
      let atKill = null as Cursor | null;
      let killer: Promise<void> | null = null;
      let killedRightAfterBooking = false;
      const booked = () =>
        pool.oneFirst(
          sql.type(
            z.object({ n: z.number() }),
          )`select count(*)::int as n from transfers where effect in ('partial', 'completed', 'overpaid', 'after_completion')`,
        );
      const cursor = async (): Promise<Cursor | null> => {
        const row = await pool.maybeOne(sql.type(
          z.object({ last: z.number(), latest: z.number(), reader: z.string().nullable(), lease_ms: z.number().nullable() }),
        )`
        select last_block_seqno::float8 as last, latest_block_seqno::float8 as latest, reader,
               (extract(epoch from lease_expires_at - now()) * 1000)::float8 as lease_ms
        from chain_reader where network = 'sandbox'
      `);
        return row ? { last: row.last, latest: row.latest, reader: row.reader, leaseMs: Math.round(row.lease_ms ?? 0) } : null;
      };
      let takenOverAt = null as number | null;
      const streamStarted = Date.now();
      for (let i = 0; i < queue.length; i += 1) {
        if (i === killAt) {
          // Mid-round, while the stream goes on: the moment the worker has just booked a transfer.
          killer = (async () => {
            const before = await booked();
            killedRightAfterBooking = await waitFor('the worker to book a transfer', async () => (await booked()) > before, 10_000, 10).then(
              () => true,
              () => false,
            );
            await firstWorker.stop('SIGKILL');
            killedAt = Date.now();
            backlogAtKill = sent.length - (await booked());
            // Where the dead reader left the cursor, and its lease on it (left to lapse).
            atKill = await cursor();
            // A new worker, started while the transfers go on.
            const kassa = await startKassa({ databaseUrl: db.url, part: 'worker', baseUrl: apiProcess.url });
            secondWorker = kassa;
            secondStartedAt = Date.now();
            // The moment its reader holds the cursor (the dead one's lease lapsed).
            await waitFor(
              'the new reader to take the cursor',
              async () => {
                const now = await cursor();
                return now !== null && now.reader !== null && now.reader !== atKill?.reader;
              },
              30_000,
              50,
            ).catch(() => {});
            if ((await cursor())?.reader !== atKill?.reader) takenOverAt = Date.now();
          })();
          killer.catch(() => {}); // awaited after the stream
        }
        const { payment, amount } = queue[i]!;
        const response = await api(apiProcess.url, 'POST', '/sandbox/v1/transfers', {
          body: { to: payment.address, coin: payment.coin, amount: fromBaseUnits(amount, DECIMALS[payment.coin]) },
        });
        if (response.status === 201) sent.push({ paymentId: payment.id, amount, hash: response.json.hash, sentAt: Date.now() });
        else failedSends.push(`${response.status} ${response.text.slice(0, 120)}`);
        await sleep(Math.max(0, streamStarted + (i + 1) * every - Date.now()));
      }
      await killer;
      report.check(
        'every transfer was accepted by the sandbox chain',
        failedSends.length === 0 && sent.length === queue.length,
        `${sent.length}/${queue.length} sent${failedSends.length ? `; e.g. ${failedSends[0]}` : ''}`,
      );
      report.check(
        'the first worker was killed with SIGKILL mid-stream',
        firstWorker.child.signalCode === 'SIGKILL' && killedRightAfterBooking,
        `right after it booked a transfer, ${Math.round((killedAt - streamStarted) / 1000)} s into the stream; ${backlogAtKill} sent but not booked yet`,
      );

      // 3. Settle: every hash on the books and every payment paid in full completed.
      const hashes = sent.map((s) => s.hash);
      const onBooks = () =>
        pool.oneFirst(
          sql.type(z.object({ n: z.number() }))`select count(distinct hash)::int as n from transfers where hash = any(${sql.array(hashes, 'text')})`,
        );
      const fullyPaid = payments.filter((p) => p.plan !== 'under');
      const completedCount = () =>
        pool.oneFirst(
          sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where id = any(${sql.array(
            fullyPaid.map((p) => p.id),
            'uuid',
          )}) and status = 'completed'`,
        );
      await waitFor(
        'the books to catch up',
        async () => (await onBooks()) === hashes.length && (await completedCount()) === fullyPaid.length,
        SETTLE_LIMIT_MS,
        250,
      ).catch(() => {});
      const settledAt = Date.now();

      // Exactly once, by hash and by payment.
      const rows = await pool.any(sql.type(
        z.object({ hash: z.string(), payment_id: z.string(), effect: z.string(), amount_base_units: z.string(), recorded_at: z.date() }),
      )`
      select hash, payment_id, effect, amount_base_units::text as amount_base_units, recorded_at from transfers
      where payment_id = any(${sql.array(
        payments.map((p) => p.id),
        'uuid',
      )})
    `);
      const perHash = new Map<string, typeof rows>();
      for (const row of rows) perHash.set(row.hash, [...(perHash.get(row.hash) ?? []), row]);
      const missing = sent.filter((s) => !perHash.has(s.hash)).length;
      const twice = sent.filter((s) => (perHash.get(s.hash)?.length ?? 0) > 1).length;
      const misbooked = sent.filter((s) =>
        perHash.get(s.hash)?.some((row) => row.payment_id !== s.paymentId || BigInt(row.amount_base_units) !== s.amount),
      ).length;
      report.check(
        'every transfer sent is on the books exactly once',
        missing === 0 && twice === 0 && misbooked === 0,
        `${sent.length - missing}/${sent.length} booked; ${twice} twice; ${misbooked} with another payment or amount`,
      );
      if (missing > 0) {
        // Where the sandbox put the missing ones: the blocks, as the API serves them (toncenter v3).
        const unbooked = sent.filter((s) => !perHash.has(s.hash));
        const blockOf = await findBlocks(apiProcess.url, new Set(unbooked.map((s) => s.hash)));
        for (const s of unbooked) {
          const at = blockOf.get(s.hash);
          report.figure(
            `not booked: ${s.hash.slice(0, 12)}…`,
            `payment ${s.paymentId.slice(0, 8)}, sent ${s.sentAt - killedAt} ms from the kill; ${at ? `in block ${at.seqno} (${at.page})` : 'in no published block'}; cursor at the kill ${atKill?.last ?? '?'}`,
          );
        }
      }
      const sentHashes = new Set(hashes);
      const strays = rows.filter((row) => ['partial', 'completed', 'overpaid', 'after_completion'].includes(row.effect) && !sentHashes.has(row.hash)).length;
      report.check(
        'no counted transfer that was not sent',
        strays === 0,
        `${strays} strays (the USDT deposits' jetton notifications are booked as not_counted)`,
      );

      const views = await Promise.all(payments.map((p) => api(apiProcess.url, 'GET', `/v1/payments/${p.id}`, { token })));
      const effects = await pool.any(sql.type(z.object({ payment_id: z.string(), completing: z.number(), deliveries: z.number() }))`
      select p.id as payment_id,
             (select count(*)::int from transfers t where t.payment_id = p.id and t.effect in ('completed', 'overpaid')) as completing,
             (select count(*)::int from webhook_deliveries d where d.payment_id = p.id and d.reason = 'completed') as deliveries
      from payments p where p.id = any(${sql.array(
        payments.map((p) => p.id),
        'uuid',
      )})
    `);
      const effectOf = new Map(effects.map((row) => [row.payment_id, row]));
      const wrongStatus: string[] = [];
      const wrongOnce: string[] = [];
      const wrongSum: string[] = [];
      payments.forEach((p, i) => {
        const view = views[i]!.json;
        const expected = p.plan === 'under' ? 'pending' : 'completed';
        if (view?.status !== expected) wrongStatus.push(`${p.plan} ${p.coin}: ${view?.status}`);
        const effect = effectOf.get(p.id);
        const once = p.plan === 'under' ? 0 : 1;
        if (effect?.completing !== once || effect?.deliveries !== once || (once === 1 && !view?.timer?.paidAt))
          wrongOnce.push(`${p.id}: ${effect?.completing} completing, ${effect?.deliveries} deliveries`);
        const sum = sent.filter((s) => s.paymentId === p.id).reduce((total, s) => total + s.amount, 0n);
        const received = view?.paymentDetails?.receivedAmount === undefined ? null : toBaseUnits(view.paymentDetails.receivedAmount, DECIMALS[p.coin]);
        if (received !== sum) wrongSum.push(`${p.plan} ${p.coin}: received ${received} ≠ sent ${sum}`);
      });
      report.check(
        'every payment paid in full is completed, the underpaid ones pending',
        wrongStatus.length === 0,
        wrongStatus.length
          ? wrongStatus.slice(0, 3).join('; ')
          : `${fullyPaid.length} completed (exact and overpaid), ${payments.length - fullyPaid.length} pending`,
      );
      report.check(
        'none completed twice: one completing transfer and one `completed` webhook delivery each',
        wrongOnce.length === 0,
        wrongOnce.length ? wrongOnce.slice(0, 3).join('; ') : 'completed ones 1 + 1, pending ones 0 + 0',
      );
      report.check(
        'nothing double-counted: receivedAmount is the sum sent to each payment',
        wrongSum.length === 0,
        wrongSum.length ? wrongSum.slice(0, 3).join('; ') : `${payments.length} payments`,
      );

      // Recovery after the kill.
      const recordedAfterKill = rows
        .filter((row) => row.recorded_at.getTime() > killedAt)
        .map((row) => row.recorded_at.getTime())
        .sort((a, b) => a - b);
      const firstAfter = recordedAfterKill.length > 0 ? recordedAfterKill[0]! - killedAt : null;
      // The backlog: sent before the kill, booked after it (by the new worker).
      const sentBeforeKill = new Set(sent.filter((s) => s.sentAt <= killedAt).map((s) => s.hash));
      const backlogBooked = rows
        .filter((row) => sentBeforeKill.has(row.hash) && row.recorded_at.getTime() > killedAt)
        .map((row) => row.recorded_at.getTime() - killedAt);
      const backlogCaughtUp = backlogBooked.length > 0 ? Math.max(...backlogBooked) : 0;
      const caughtUp = settledAt - killedAt;
      const lag = (from: number, to: number) => {
        const delays = sent
          .filter((s) => s.sentAt > from && s.sentAt <= to)
          .map((s) => (perHash.get(s.hash)?.[0]?.recorded_at.getTime() ?? Infinity) - s.sentAt);
        return delays.length ? `${Math.max(...delays)} ms max over ${delays.length}` : 'none';
      };
      report.figure('new worker started after the kill', `${secondStartedAt - killedAt} ms`);
      const after = await cursor();
      report.figure(
        'cursor at the kill (chain_reader)',
        atKill
          ? `block ${atKill.last}, ${atKill.latest - atKill.last} behind the newest; lease held by ${atKill.reader ?? 'nobody'} for ${atKill.leaseMs} ms more`
          : 'none',
      );
      report.figure('cursor taken over by the new worker', takenOverAt ? `${takenOverAt - killedAt} ms after the kill (lease ${LEASE_MS} ms)` : 'never');
      report.figure(
        'cursor at the end',
        after
          ? `block ${after.last} (${atKill ? after.last - atKill.last : '?'} blocks after the kill), ${after.latest - after.last} behind the newest`
          : 'none',
      );
      report.check(
        'the new worker took the cursor over from the dead one and went on from it',
        atKill !== null && after !== null && atKill.reader !== null && after.reader !== atKill.reader && after.last > atKill.last && takenOverAt !== null,
        `reader ${atKill?.reader ?? '?'} → ${after?.reader ?? '?'}`,
      );
      report.figure('first transfer booked after the kill', firstAfter === null ? 'none' : `${firstAfter} ms`);
      report.figure(
        'backlog at the kill (sent, not yet booked)',
        backlogBooked.length === 0 ? 'none' : `${backlogBooked.length} transfers, all booked ${backlogCaughtUp} ms after the kill`,
      );
      report.figure('booking delay (sent → on the books) before the kill', lag(0, killedAt));
      report.figure('booking delay after the kill', lag(killedAt, Infinity));
      report.figure('transfers sent / booked rows (incl. jetton notifications)', `${sent.length} / ${rows.length}`);
      const delivered = fullyPaid.filter((p) => (hooks.get(p.id) ?? 0) > 0).length;
      report.figure(
        'webhooks received by the merchant so far',
        `${delivered}/${fullyPaid.length} completed payments (${[...hooks.values()].reduce((a, b) => a + b, 0)} requests)`,
      );
      const worstDelay = Math.max(...sent.map((s) => (perHash.get(s.hash)?.[0]?.recorded_at.getTime() ?? Infinity) - s.sentAt));
      report.check(
        `every transfer booked within ${RECOVERY_LIMIT_MS / 1000} s of being sent, across the kill`,
        missing === 0 && backlogCaughtUp <= RECOVERY_LIMIT_MS && worstDelay <= RECOVERY_LIMIT_MS,
        `worst ${worstDelay} ms; everything booked ${caughtUp} ms after the kill (the stream went on ${Math.max(0, (sent.at(-1)?.sentAt ?? killedAt) - killedAt)} ms after it)`,
      );
      report.check(
        'the API and the new worker ran through',
        apiProcess.child.exitCode === null && secondWorker !== undefined && secondWorker.child.exitCode === null,
      );
    } finally {
      keepLogs({ api: apiProcess, 'first-worker': firstWorker, 'second-worker': secondWorker });
      receiver.close();
      receiver.closeAllConnections();
      await pool.end().catch(() => {});
      await secondWorker?.stop();
      await firstWorker.stop();
      await apiProcess.stop();
      await db.destroy();
    }
  },
);
