// The second terminal: `kassa start` (embedded PostgreSQL on a port of its own) runs in one
// process; the other commands run in another, from the same directory, with none of its
// environment, and find the database and the API through ./.kassa/run.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertFails, kassa } from '../helpers/cli.ts';
import { startKassaProcess, type KassaProcess } from '../helpers/kassaProcess.ts';
import { freePort } from '../helpers/servers.ts';

describe('the CLI from a second terminal', () => {
  // Reachable by the embedded server's own user when the tests run as root.
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-second-terminal-'));
  fs.chmodSync(work, 0o755);
  let pgPort: number;
  let server: KassaProcess;
  const cli = (args: string[], env: Record<string, string> = {}) => kassa(args, env, { cwd: work });

  before(async () => {
    pgPort = await freePort();
    server = await startKassaProcess({ cwd: work, env: { KASSA_EMBEDDED_PG_PORT: String(pgPort) }, timeoutMs: 180_000 });
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('kassa start records its embedded PostgreSQL port and its API URL in ./.kassa/run', () => {
    const record = JSON.parse(fs.readFileSync(path.join(work, '.kassa', 'run', `${server.child.pid}.json`), 'utf8'));
    assert.equal(record.pid, server.child.pid);
    assert.equal(record.embeddedPgPort, pgPort);
    assert.equal(record.url, server.url);
    assert.equal(record.baseUrl, server.url);
    assert.equal(record.checkoutBaseUrl, `${server.url}/pay`);
  });

  let storeId: string;
  let token: string;
  let jti: string;
  it('store create, store list, token issue and token list need no environment', async () => {
    const created = await cli(['store', 'create', '--name', 'Second terminal']);
    assert.equal(created.code, 0, created.stderr);
    storeId = created.json.id;
    const listed = await cli(['store', 'list']);
    assert.equal(listed.code, 0, listed.stderr);
    const mine = listed.json.data.find((store: { id: string }) => store.id === storeId);
    assert.equal(mine.name, 'Second terminal');
    assert.deepEqual(
      mine.methods.map((method: { coin: string }) => method.coin),
      ['TON', 'USDT'],
    );
    assert.match(mine.createdAt, /^\d{4}-\d\d-\d\dT/);

    const issued = await cli(['token', 'issue', '--store', storeId, '--expires-in', '30d']);
    assert.equal(issued.code, 0, issued.stderr);
    ({ token, jti } = issued.json);
    const tokens = await cli(['token', 'list', '--store', storeId]);
    assert.equal(tokens.code, 0, tokens.stderr);
    assert.deepEqual(Object.keys(tokens.json.data[0]).sort(), ['expiresAt', 'issuedAt', 'jti', 'lastUsedAt', 'name', 'revokedAt', 'scope', 'state']);
    assert.equal(tokens.json.data[0].jti, jti);
    assert.equal(tokens.json.data[0].expiresAt, issued.json.expiresAt);
    assert.equal(tokens.json.data[0].lastUsedAt, null, 'not used yet');
    assert.equal(tokens.json.data[0].state, 'active');
    assert.ok(!tokens.stdout.includes(token.split('.')[2]!), 'no secret in the listing');
  });

  it('token list shows when a token was last used, and a revoked one as revoked', async () => {
    const before = Date.now();
    const answer = await fetch(`${server.url}/v1/payment-methods`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(answer.status, 200);
    const used = await cli(['token', 'list', '--store', storeId]);
    assert.equal(used.code, 0, used.stderr);
    const lastUsed = Date.parse(used.json.data[0].lastUsedAt);
    assert.ok(lastUsed >= before - 1000, `last used ${used.json.data[0].lastUsedAt}`);
    assert.equal((await cli(['token', 'revoke', jti])).code, 0);
    const revoked = await cli(['token', 'list', '--store', storeId]);
    assert.equal(revoked.json.data[0].state, 'revoked');
    assertFails(await cli(['token', 'list', '--store', '00000000-0000-4000-8000-000000000000']), /unknown store/);
    assertFails(await cli(['token', 'list']), /--store is required/);
  });

  it('kassa gas asks the running API (its sandbox chain), not :3000', async () => {
    const gas = await cli(['gas']);
    assert.equal(gas.code, 0, gas.stderr);
    assert.equal(gas.json.network, 'sandbox');
    assert.notEqual(gas.json.balance, null, gas.json.balanceError);
    assert.ok(Number(gas.json.balance) > 0);
  });

  it("kassa doctor checks the gas wallet's balance against what waits for gas", async () => {
    const doctor = await cli(['doctor']);
    // BASE_URL is plain http on loopback: the doctor fails that check, and still reports the others.
    assert.equal(doctor.code, 1);
    const report = JSON.parse(doctor.stdout);
    const gas = report.checks.find((check: { check: string }) => check.check === 'gas wallet');
    assert.equal(gas.status, 'ok', gas.detail);
    assert.match(gas.detail, /holds [\d.]+ TON; 0 top-up\(s\) planned \(0 TON\), 0 jetton sweep\(s\) and 0 jetton refund\(s\) waiting for gas/);
  });

  it('an embedded PostgreSQL port given wrong: the error names the port it runs on', async () => {
    const other = await freePort();
    assertFails(
      await cli(['store', 'list'], { KASSA_EMBEDDED_PG_PORT: String(other) }),
      new RegExp(`already runs on port ${pgPort}, not ${other}: set KASSA_EMBEDDED_PG_PORT=${pgPort}`),
    );
  });

  it('keys generate makes a master key and its deposit public key, with a word on keeping it', async () => {
    const generated = await kassa(['keys', 'generate'], {});
    assert.equal(generated.code, 0, generated.stderr);
    assert.match(generated.json.masterKey, /^[0-9a-f]{64}$/);
    assert.match(generated.json.depositPublicKey, /^[0-9a-f]{64}$/);
    assert.match(generated.json.keep, /secret store/);
    const again = await kassa(['keys', 'generate'], {});
    assert.notEqual(again.json.masterKey, generated.json.masterKey);
    // The public key is the one kassa derives from that master key.
    const derived = await kassa(['keys', 'deposit-public'], {
      KASSA_MASTER_KEY: generated.json.masterKey,
      TON_NETWORK: 'testnet',
      BASE_URL: 'https://pay.example.com',
    });
    assert.equal(derived.code, 0, derived.stderr);
    assert.equal(derived.json.publicKey, generated.json.depositPublicKey);
  });

  it('a clean shutdown removes the record', async () => {
    const file = path.join(work, '.kassa', 'run', `${server.child.pid}.json`);
    assert.equal(await server.stop(), 0, server.output());
    assert.equal(fs.existsSync(file), false);
  });
});
