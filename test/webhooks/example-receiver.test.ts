// End to end: Kassa's signer and SSRF-safe sender deliver to examples/webhook-receiver.ts, run as
// its own process, which verifies with the receiver kit against a real key-set server.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { postWebhook } from '../../src/webhooks/send.ts';
import { buildWebhookBody, generateSigningKey, publicJwk, signBody, type SigningKey } from '../../src/webhooks/sign.ts';
import { startKeyServer, type KeyServer } from '../helpers/servers.ts';

const EXAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples/webhook-receiver.ts');

const STORE = '0b5e2c9a-1d2e-4f60-8a7b-9c0d1e2f3a4b';
const OTHER_STORE = '7c1f0e2d-3b4a-4c5d-8e6f-a0b1c2d3e4f5';

async function startExample(keysUrl: string): Promise<{ child: ChildProcess; url: string; lines: string[] }> {
  const child = spawn(process.execPath, [EXAMPLE], {
    env: { ...process.env, KASSA_KEYS_URL: keysUrl, KASSA_STORE_ID: STORE, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => lines.push(line));
  const stdout = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`example exited with ${code}: ${lines.join('\n')}`)));
    stdout.on('line', (line) => {
      lines.push(line);
      const message = JSON.parse(line) as { msg: string; port?: number };
      if (message.msg === 'webhook receiver listening' && message.port !== undefined) resolve(message.port);
    });
  });
  return { child, url: `http://127.0.0.1:${port}/kassa/webhook`, lines };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

function deliver(url: string, key: SigningKey, paymentId: string, tamper = false, storeId = STORE) {
  const body = buildWebhookBody({ paymentId, storeId, metadata: { cart: '7' }, orderId: 'o-1' }, new Date());
  const signature = signBody(body, key.secretKey);
  return postWebhook({
    url,
    body: tamper ? body.replace('"cart":"7"', '"cart":"8"') : body,
    headers: { 'Content-Type': 'application/json', 'X-Signature': signature, 'X-Signature-Kid': key.kid },
    allowInsecure: true,
    timeoutMs: 5000,
  });
}

describe('examples/webhook-receiver.ts', () => {
  let keys: KeyServer;
  let receiver: Awaited<ReturnType<typeof startExample>>;
  const key = generateSigningKey(new Date());

  before(async () => {
    keys = await startKeyServer([publicJwk(key.kid, key.publicKey)]);
    receiver = await startExample(keys.url);
  });
  after(async () => {
    await stop(receiver.child);
    await keys.close();
  });

  it('answers 200 to a genuine webhook, after processing it', async () => {
    const result = await deliver(receiver.url, key, 'e2e-1');
    assert.equal(result.ok, true, result.error);
    assert.equal(result.status, 200);
    assert.deepEqual(JSON.parse(result.responseSnippet ?? ''), { ok: true });
    assert.ok(receiver.lines.some((line) => line.includes('"paymentID":"e2e-1"') && line.includes('"orderId":"o-1"')));
  });

  it('answers 200 to a redelivery, flagged as a duplicate and not processed again', async () => {
    const result = await deliver(receiver.url, key, 'e2e-1');
    assert.equal(result.status, 200);
    assert.deepEqual(JSON.parse(result.responseSnippet ?? ''), { ok: true, duplicate: true });
    assert.equal(receiver.lines.filter((line) => line.includes('"paymentID":"e2e-1"')).length, 1);
  });

  it("answers 403 to another store's genuine webhook carrying this shop's order_id, and does not process it", async () => {
    const result = await deliver(receiver.url, key, 'e2e-other', false, OTHER_STORE);
    assert.equal(result.ok, false);
    assert.equal(result.status, 403);
    assert.match(JSON.parse(result.responseSnippet ?? '').error, /another store's/);
    assert.equal(receiver.lines.filter((line) => line.includes('"msg":"payment completed"') && line.includes('e2e-other')).length, 0);
  });

  it('answers 401 to a tampered body', async () => {
    const result = await deliver(receiver.url, key, 'e2e-2', true);
    assert.equal(result.ok, false);
    assert.equal(result.status, 401);
    assert.deepEqual(JSON.parse(result.responseSnippet ?? ''), { error: 'invalid signature' });
  });

  it('answers 500 when a new key cannot be fetched, then 200 once the key set is back', async () => {
    const rotated = generateSigningKey(new Date());
    keys.failWith = 503;
    const failed = await deliver(receiver.url, rotated, 'e2e-3');
    assert.equal(failed.status, 500);
    keys.failWith = null;
    keys.keys = [publicJwk(rotated.kid, rotated.publicKey), publicJwk(key.kid, key.publicKey)];
    // A failed refetch does not start the receiver's 10 s unknown-kid refetch interval: the retry refetches.
    const retried = await deliver(receiver.url, rotated, 'e2e-3');
    assert.equal(retried.status, 200, retried.responseSnippet);
  });
});
