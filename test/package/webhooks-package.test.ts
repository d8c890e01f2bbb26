// The webhook kit as its own package (packages/webhooks, `kassa-webhooks`): packed with `npm pack`,
// installed offline from the tarball into a fresh project (no dependencies to fetch), where a
// receiver written against it verifies a real delivery: a `kassa start` process completes a sandbox
// payment and its worker delivers the signed webhook to that receiver — and another store's payment,
// pointed at that receiver with the shop's order_id, is refused (403) and fulfils nothing.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { exec } from '../helpers/exec.ts';
import { createTestStore } from '../helpers/factories.ts';
import { startKassaProcess, type KassaProcess } from '../helpers/kassaProcess.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The shop's receiver: plain JavaScript against the installed package, one JSON line per event on stdout. */
const RECEIVER = `
import http from 'node:http';
import { createWebhookVerifier } from 'kassa-webhooks';

const verifier = createWebhookVerifier({ keysUrl: process.env.KEYS_URL, storeID: process.env.STORE_ID });
const server = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const result = await verifier.handle(Buffer.concat(chunks), req.headers, async (payload) => {
    console.log(JSON.stringify({ paid: payload.paymentID, status: payload.status, order: payload.order_id }));
  });
  if (result.status !== 200) console.log(JSON.stringify({ refused: result.status }));
  res.writeHead(result.status).end();
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
`;

describe('the kassa-webhooks package', { timeout: 240_000 }, () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-webhooks-package-'));
  const shop = path.join(scratch, 'shop');
  let tarball: string;
  let files: string[];

  before(async () => {
    const packed = await exec('npm', ['pack', './packages/webhooks', '--json', '--pack-destination', scratch], { cwd: ROOT });
    assert.equal(packed.code, 0, packed.stderr);
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = path.join(scratch, info!.filename);
    files = info!.files.map((file) => file.path).sort();
    fs.mkdirSync(shop);
    fs.writeFileSync(path.join(shop, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0', private: true, type: 'module' }));
    const installed = await exec('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: shop });
    assert.equal(installed.code, 0, installed.stderr);
  });
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('holds one ES module with its types, a README and the licence, and has no dependencies', () => {
    assert.deepEqual(files, ['LICENSE', 'README.md', 'dist/receiver.d.ts', 'dist/receiver.js', 'package.json']);
    const manifest = JSON.parse(fs.readFileSync(path.join(shop, 'node_modules/kassa-webhooks/package.json'), 'utf8'));
    assert.equal(manifest.type, 'module');
    assert.equal(manifest.dependencies, undefined);
    assert.equal(manifest.exports['.'].types, './dist/receiver.d.ts');
    // The shop's node_modules holds this package alone.
    assert.deepEqual(
      fs.readdirSync(path.join(shop, 'node_modules')).filter((name) => !name.startsWith('.')),
      ['kassa-webhooks'],
    );
  });

  describe('a real delivery', () => {
    let db: TestDatabase;
    let kassa: KassaProcess;
    let receiver: ChildProcess;
    let lines: Array<Record<string, unknown>> = [];
    let shopStore: Awaited<ReturnType<typeof createTestStore>>;
    const waitFor = async (match: (line: Record<string, unknown>) => boolean, what: string) => {
      for (let i = 0; i < 300; i += 1) {
        const found = lines.find(match);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`the receiver printed no ${what}: ${JSON.stringify(lines)}\n${kassa?.output().slice(-3000)}`);
    };

    before(async () => {
      db = await createTestDatabase();
      kassa = await startKassaProcess({ env: { DATABASE_URL: db.url, WEBHOOK_ALLOW_INSECURE: 'true' } });
      shopStore = await createTestStore(db.pool, { name: 'Webhook package' });
      fs.writeFileSync(path.join(shop, 'receiver.js'), RECEIVER);
      lines = [];
      receiver = spawn(process.execPath, ['receiver.js'], {
        cwd: shop,
        env: { PATH: process.env.PATH ?? '', KEYS_URL: `${kassa.url}/pay/v1/webhook/keys`, STORE_ID: shopStore.id },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let buffered = '';
      receiver.stdout!.on('data', (chunk) => {
        buffered += chunk;
        const complete = buffered.split('\n');
        buffered = complete.pop()!;
        for (const line of complete) if (line.trim()) lines.push(JSON.parse(line));
      });
    });
    after(async () => {
      receiver?.kill();
      await kassa?.stop();
      await db?.drop();
    });

    /** A payment of the store of `token` with its webhookURL at the shop's receiver, paid on the sandbox chain. */
    const paidPayment = async (token: string, port: number, amount: string) => {
      const created = await fetch(`${kassa.url}/v1/payments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          amount,
          currency: 'TON',
          order_id: 'order-77',
          webhookURL: `http://127.0.0.1:${port}/kassa`,
          payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
        }),
      });
      assert.equal(created.status, 201, await created.clone().text());
      const payment = (await created.json()) as { id: string; paymentDetails: { address: string; coinAmount: string } };
      const sent = await fetch(`${kassa.url}/sandbox/v1/transfers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ to: payment.paymentDetails.address, coin: 'TON', amount: payment.paymentDetails.coinAmount }),
      });
      assert.equal(sent.status, 201);
      return payment;
    };

    it("another store's paid payment, pointed at the shop's receiver with the shop's order_id, is refused (403) and fulfils nothing", async () => {
      const { port } = (await waitFor((line) => typeof line.port === 'number', 'port')) as { port: number };
      const other = await createTestStore(db.pool, { name: 'Another store of the same Kassa' });
      await paidPayment(other.token, port, '0.01');
      await waitFor((line) => line.refused !== undefined, 'refusal');
      assert.deepEqual(
        lines.filter((line) => line.refused !== undefined || line.paid !== undefined),
        [{ refused: 403 }],
      );
    });

    it('the receiver verifies the signed webhook of a completed payment', async () => {
      const { port } = (await waitFor((line) => typeof line.port === 'number', 'port')) as { port: number };
      const payment = await paidPayment(shopStore.token, port, '1.5');
      const paid = await waitFor((line) => line.paid !== undefined, 'verified payment');
      assert.deepEqual(paid, { paid: payment.id, status: 'completed', order: 'order-77' });
      assert.deepEqual(
        lines.filter((line) => line.refused !== undefined && line.refused !== 403),
        [],
        "no delivery was refused but the other store's (retried: 403 again)",
      );
    });
  });
});
