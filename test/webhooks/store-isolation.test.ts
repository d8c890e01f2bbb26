// One store's webhook never fulfils another store's order (issue 48.1). Every store of a Kassa is signed
// with the one key set, so a signature says only "sent by this Kassa": store B points its own payment's
// webhookURL — or its own webhook endpoint — at store A's receiver, with A's order_id, and pays 0.01 TON.
// Kassa names the store inside the signed body (`payload.storeID`), and A's receiver — the receiver kit
// over real HTTP, configured with A's store id as the README shows — refuses B's bodies (403) before its
// callback runs and before its seen store records them, while A's own webhook and events go through.
// On the sandbox chain, with the chain reader booking the transfers and Graphile Worker delivering.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { createMemorySeenStore, createWebhookVerifier, type SeenStore } from '../../src/webhooks/receiver.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { runDeliveries } from '../helpers/eventReceiver.ts';
import { close, listen } from '../helpers/servers.ts';

let app: ChainTestApp;
let storeA: Awaited<ReturnType<ChainTestApp['store']>>;
let storeB: Awaited<ReturnType<ChainTestApp['store']>>;

/** Store A's shop: what its receiver fulfilled, answered, and what its seen store was asked to record. */
interface Shop {
  url: string;
  fulfilled: Array<{ orderId: string | undefined; paymentID: string }>;
  events: Array<{ type: string; paymentID: unknown; storeID: unknown }>;
  answers: Array<{ status: number; reason?: string; storeID: unknown }>;
  recorded: string[];
  close(): Promise<void>;
}

/** A's receiver, written as packages/webhooks/README.md shows: `handle` with the raw body, A's storeID, its answer as the status. */
async function startShop(storeID: string): Promise<Shop> {
  const memory = createMemorySeenStore();
  const recorded: string[] = [];
  const seen: SeenStore = {
    has: (id) => memory.has(id),
    add: (id) => {
      recorded.push(id);
      return memory.add(id);
    },
  };
  const verifier = createWebhookVerifier({ keysUrl: `${app.url}/pay/v1/webhook/keys`, storeID, seen });
  const shop: Omit<Shop, 'url' | 'close'> = { fulfilled: [], events: [], answers: [], recorded };
  const { server, port } = await listen(
    http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks);
      const result = await verifier.handle(
        raw,
        req.headers,
        async (payload) => void shop.fulfilled.push({ orderId: payload.order_id, paymentID: payload.paymentID }),
        async (event) => void shop.events.push({ type: event.type, paymentID: event.payload.paymentID, storeID: event.payload.storeID }),
      );
      const body = JSON.parse(raw.toString('utf8')) as { payload: { storeID?: unknown } };
      shop.answers.push({ status: result.status, ...(result.reason !== undefined ? { reason: result.reason } : {}), storeID: body.payload.storeID });
      res.writeHead(result.status).end();
    }),
  );
  return { ...shop, url: `http://127.0.0.1:${port}/kassa/webhook`, close: () => close(server) };
}

/** A TON payment of `token`'s store, created with `fields`, paid with `amount` on the sandbox chain and booked. */
async function paidPayment(token: string, fields: Record<string, unknown>, amount = '0.01'): Promise<string> {
  const created = await app.request('POST', '/v1/payments', {
    token,
    body: { amount, currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] }, ...fields },
  });
  assert.equal(created.status, 201, created.text);
  await app.pay(created.json.paymentDetails.address, 'TON', amount);
  await app.settle();
  const status = await app.request('GET', `/v1/payments/${created.json.id}/status`, { token });
  assert.equal(status.json.status, 'completed', 'paid on chain');
  return created.json.id as string;
}

const attemptStatuses = (paymentId: string) =>
  app.pool.anyFirst(sql.type(z.object({ http_status: z.number().nullable() }))`
    select a.http_status from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.payment_id = ${paymentId} order by a.id
  `);

before(async () => {
  app = await startChainApp({ WEBHOOK_ALLOW_INSECURE: 'true' });
  storeA = await app.store({ name: 'Store A', methods: 'TON/TON' });
  storeB = await app.store({ name: 'Store B', methods: 'TON/TON' });
});
after(() => app.close());

describe("one store's webhook never fulfils another store's order", () => {
  it("store B's payment with its webhookURL at A's receiver and A's order_id, paid on chain: refused (403), A's callback never runs, its seen store records nothing", async () => {
    const shop = await startShop(storeA.id);
    try {
      const theirs = await paidPayment(storeB.token, { order_id: 'A-1001', webhookURL: shop.url });
      await runDeliveries(app);
      assert.deepEqual(shop.fulfilled, [], "A's order is not fulfilled by B's payment");
      assert.equal(shop.answers.length, 1, JSON.stringify(shop.answers));
      assert.deepEqual(shop.answers[0], {
        status: 403,
        reason: `payload.storeID "${storeB.id}" is another store's: this receiver takes only its own store's`,
        storeID: storeB.id,
      });
      assert.deepEqual(shop.recorded, [], 'the seen store never hears of it');
      // B's own delivery log shows the refusal; Kassa retries it like any non-2xx, within its 12 h.
      assert.deepEqual(await attemptStatuses(theirs), [403]);
    } finally {
      await shop.close();
    }
  });

  it("store B's webhook endpoint at A's receiver: B's payment events (A's order_id, paid on chain) are refused (403), A's event callback never runs", async () => {
    const shop = await startShop(storeA.id);
    try {
      const endpoint = await app.request('POST', '/v1/webhook-endpoints', {
        token: storeB.token,
        body: { url: shop.url, events: ['payment.pending', 'payment.completed', 'payment.money_received'] },
      });
      assert.equal(endpoint.status, 201, endpoint.text);
      const ping = await app.request('POST', `/v1/webhook-endpoints/${endpoint.json.id}/test`, { token: storeB.token });
      assert.equal(ping.status, 202, ping.text);
      await paidPayment(storeB.token, { order_id: 'A-1001' });
      await runDeliveries(app);
      assert.deepEqual(shop.events, [], 'no event of B reaches A’s callback');
      assert.deepEqual(shop.fulfilled, []);
      assert.deepEqual(
        shop.answers.map((a) => [a.status, a.storeID]),
        Array.from({ length: 4 }, () => [403, storeB.id]),
        'ping, pending, money received, completed: each names B and is refused',
      );
      assert.deepEqual(shop.recorded, []);
      await app.request('DELETE', `/v1/webhook-endpoints/${endpoint.json.id}`, { token: storeB.token });
    } finally {
      await shop.close();
    }
  });

  it("A's own payment webhook and endpoint events, paid on chain, are accepted: the order is fulfilled once, each event handled", async () => {
    const shop = await startShop(storeA.id);
    try {
      const endpoint = await app.request('POST', '/v1/webhook-endpoints', {
        token: storeA.token,
        body: { url: shop.url, events: ['payment.completed'] },
      });
      assert.equal(endpoint.status, 201, endpoint.text);
      const ours = await paidPayment(storeA.token, { order_id: 'A-1001', webhookURL: shop.url });
      await runDeliveries(app);
      assert.deepEqual(shop.fulfilled, [{ orderId: 'A-1001', paymentID: ours }]);
      assert.deepEqual(shop.events, [{ type: 'payment.completed', paymentID: ours, storeID: storeA.id }]);
      assert.deepEqual(
        shop.answers.map((a) => [a.status, a.storeID]),
        [
          [200, storeA.id],
          [200, storeA.id],
        ],
      );
      assert.equal(shop.recorded.length, 2, 'the payment and the event, once each');
      assert.deepEqual(await attemptStatuses(ours), [200, 200]);
    } finally {
      await shop.close();
    }
  });
});
