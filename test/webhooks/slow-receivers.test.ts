// The whole service as `kassa start` runs it (API + worker in one process, sandbox chain), against a
// real database and real webhook receivers: payments complete through the chain reader while one
// store's receivers are slow, and that store's slow deliveries hold up nobody else's.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { STORE_DELIVERY_SLOTS } from '../../src/webhooks/deliver.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createTestStore } from '../helpers/factories.ts';
import { call, type RunningService, startTestService } from '../helpers/service.ts';
import { close, listen } from '../helpers/servers.ts';

let db: TestDatabase;
let service: RunningService;

before(async () => {
  db = await createTestDatabase();
  service = await startTestService({ DATABASE_URL: db.url, WEBHOOK_ALLOW_INSECURE: 'true' });
});
after(async () => {
  await service?.stop();
  await db?.drop();
});

const api = (method: string, path: string, token: string | null, body?: unknown) => call(service.url!, method, path, token, body);

async function shop(name: string) {
  return (await createTestStore(db.pool, { name, methods: 'TON/TON' })).token;
}

async function paidPayment(token: string, webhookURL: string): Promise<string> {
  const created = await api('POST', '/v1/payments', token, {
    amount: '0.1',
    currency: 'TON',
    ttl: 3600,
    webhookURL,
    payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
  });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const sent = await api('POST', '/sandbox/v1/transfers', null, { to: created.json.paymentDetails.address, coin: 'TON', amount: '0.1' });
  assert.equal(sent.status, 201, JSON.stringify(sent.json));
  return created.json.id;
}

describe('kassa start: chain reading and webhooks', () => {
  it("one store's slow receivers hold at most 3 delivery slots and delay no other store", async () => {
    // Store A's receiver holds every request until store B's delivery has arrived (or 25 s, below
    // the 30 s delivery timeout): however long the machine takes to read the chain and complete B's
    // payment, A's receivers are busy all that time. Store B's answers at once.
    let slowOpen = 0;
    let slowMaxOpen = 0;
    let slowAnswered = 0;
    let releaseSlow!: () => void;
    const slowReleased = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    const slow = await listen(
      http.createServer((req, res) => {
        slowOpen += 1;
        slowMaxOpen = Math.max(slowMaxOpen, slowOpen);
        req.resume();
        const answer = () => {
          slowOpen -= 1;
          slowAnswered += 1;
          res.writeHead(200).end('ok');
        };
        const cap = setTimeout(answer, 25_000);
        void slowReleased.then(() => {
          clearTimeout(cap);
          if (!res.headersSent) answer();
        });
      }),
    );
    let fastDeliveredWhileSlowOpen: boolean | null = null;
    const fast = await listen(
      http.createServer((req, res) => {
        req.resume();
        fastDeliveredWhileSlowOpen ??= slowAnswered === 0 && slowOpen > 0;
        res.writeHead(200).end('ok');
        releaseSlow();
      }),
    );
    /** Waits for `done`, up to 60 s (the machine may be loaded; the test's own limit is 120 s). */
    const waitFor = async (done: () => boolean) => {
      const deadline = Date.now() + 60_000;
      while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    try {
      const a = await shop('Slow receivers');
      const b = await shop('Fast receiver');
      const slowIds = [];
      for (let i = 0; i < 8; i += 1) slowIds.push(await paidPayment(a, `http://127.0.0.1:${slow.port}/hook`));
      // Let A's deliveries start and occupy what they may.
      await waitFor(() => slowOpen > 0);
      assert.ok(slowOpen > 0, "store A's deliveries started");
      const fastId = await paidPayment(b, `http://127.0.0.1:${fast.port}/hook`);
      await waitFor(() => fastDeliveredWhileSlowOpen !== null);
      assert.equal(fastDeliveredWhileSlowOpen, true, "store B was paid and told while store A's receivers were still busy with their first deliveries");
      assert.equal((await api('GET', `/v1/payments/${fastId}`, b)).json.status, 'completed');
      assert.ok(slowMaxOpen <= 3, `store A held ${slowMaxOpen} delivery slots at once`);
      for (const id of slowIds) assert.equal((await api('GET', `/v1/payments/${id}`, a)).json.status, 'completed');
      const reader = await db.pool.one(
        sql.type(z.object({ reader: z.string().nullable(), last: z.string() }))`select reader, last_block_seqno::text as last from chain_reader`,
      );
      assert.ok(reader.reader, "the service's reader holds the cursor");
    } finally {
      releaseSlow();
      await close(slow.server);
      await close(fast.server);
    }
  });
  it("two stores' hanging endpoints hold at most their share of the delivery slots: a third store's event goes out at once (issue 48.9)", async () => {
    // Stores A and B each have 10 endpoints on a receiver that holds every request until store C's
    // event has arrived (or 25 s, below the 30 s timeout): 20 deliveries, as many as the worker's
    // delivery slots. Each store may hold STORE_DELIVERY_SLOTS of them; the rest wait their turn.
    const open = new Map<string, number>();
    const maxOpen = new Map<string, number>();
    let answered = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const hanging = await listen(
      http.createServer((req, res) => {
        const store = req.url!.split('/')[1]!;
        open.set(store, (open.get(store) ?? 0) + 1);
        maxOpen.set(store, Math.max(maxOpen.get(store) ?? 0, open.get(store)!));
        req.resume();
        const answer = () => {
          open.set(store, open.get(store)! - 1);
          answered += 1;
          res.writeHead(200).end('ok');
        };
        const cap = setTimeout(answer, 25_000);
        void released.then(() => {
          clearTimeout(cap);
          if (!res.headersSent) answer();
        });
      }),
    );
    let arrivedWhileHanging: boolean | null = null;
    const fast = await listen(
      http.createServer((req, res) => {
        req.resume();
        arrivedWhileHanging ??= answered === 0;
        res.writeHead(200).end('ok');
        release();
      }),
    );
    const holding = () => [...open.values()].reduce((sum, n) => sum + n, 0);
    const waitFor = async (done: () => boolean, ms = 60_000) => {
      const deadline = Date.now() + ms;
      while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    const pending = async (token: string) => {
      const created = await api('POST', '/v1/payments', token, {
        amount: '0.1',
        currency: 'TON',
        payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
      });
      assert.equal(created.status, 201, JSON.stringify(created.json));
    };
    const endpoint = async (token: string, url: string) => {
      const added = await api('POST', '/v1/webhook-endpoints', token, { url, events: ['payment.pending'] });
      assert.equal(added.status, 201, JSON.stringify(added.json));
    };
    try {
      const [a, b, c] = [await shop('Hanging A'), await shop('Hanging B'), await shop('Third store')];
      for (const [name, token] of [
        ['a', a],
        ['b', b],
      ] as const) {
        for (let i = 0; i < 10; i += 1) await endpoint(token, `http://127.0.0.1:${hanging.port}/${name}/${i}`);
      }
      await endpoint(c, `http://127.0.0.1:${fast.port}/c`);
      await pending(a);
      await pending(b);
      // Let A's and B's deliveries take every slot they can.
      await waitFor(() => holding() >= 2 * STORE_DELIVERY_SLOTS);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.ok(holding() >= 2 * STORE_DELIVERY_SLOTS, `the hanging endpoints hold ${holding()} requests`);
      await pending(c);
      await waitFor(() => arrivedWhileHanging !== null);
      assert.equal(arrivedWhileHanging, true, "store C's event went out while A's and B's endpoints still held their requests");
      assert.ok((maxOpen.get('a') ?? 0) <= STORE_DELIVERY_SLOTS, `store A held ${maxOpen.get('a')} delivery slots at once`);
      assert.ok((maxOpen.get('b') ?? 0) <= STORE_DELIVERY_SLOTS, `store B held ${maxOpen.get('b')} delivery slots at once`);
      // The deliveries that waited their turn are not lost: once the receivers answer, all 20 arrive.
      await waitFor(() => answered === 20);
      assert.equal(answered, 20, 'every delivery of A and B arrived');
    } finally {
      release();
      await close(hanging.server);
      await close(fast.server);
    }
  });
});
