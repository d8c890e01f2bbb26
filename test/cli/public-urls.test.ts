// Off sandbox, BASE_URL and CHECKOUT_BASE_URL must be public https addresses (README,
// Configuration): `kassa start` on mainnet refuses 0.0.0.0, loopback, private ranges, localhost
// and plain http in one line, before it opens anything; on testnet the same is a warning.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import type { Logger } from '../../src/log.ts';
import { checkPublicUrls } from '../../src/server.ts';
import { assertFails, kassa } from '../helpers/cli.ts';

const KEY = 'ab'.repeat(32);
/** A database nobody answers at: the refusal comes before Kassa opens one. */
const NO_DATABASE = 'postgres://kassa@127.0.0.1:9/none';

function capture(): { log: Logger; lines: () => any[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: pino({ level: 'warn' }, stream) as Logger, lines: () => lines.map((line) => JSON.parse(line)) };
}

describe('public URLs off sandbox', () => {
  it('kassa start on mainnet refuses a BASE_URL or CHECKOUT_BASE_URL that is not https on a public host, in one line', async () => {
    for (const [env, pattern] of [
      [{ BASE_URL: 'http://0.0.0.0:3000' }, /BASE_URL=http:\/\/0\.0\.0\.0:3000 is not a public https:\/\/ address \(not HTTPS; 0\.0\.0\.0 is a bind address/],
      [{ BASE_URL: 'https://127.0.0.1:3000' }, /BASE_URL=https:\/\/127\.0\.0\.1:3000 is not a public https:\/\/ address \(127\.0\.0\.1 is .*loopback/],
      [{ BASE_URL: 'https://localhost' }, /BASE_URL=https:\/\/localhost is not a public .*local host/],
      [
        { BASE_URL: 'https://pay.example.com', CHECKOUT_BASE_URL: 'https://192.168.1.20/pay' },
        /CHECKOUT_BASE_URL=https:\/\/192\.168\.1\.20\/pay is not a public .*private/,
      ],
      [{ BASE_URL: 'http://pay.example.com' }, /BASE_URL=http:\/\/pay\.example\.com is not a public https:\/\/ address \(not HTTPS\)/],
    ] as const) {
      assertFails(await kassa(['start'], { TON_NETWORK: 'mainnet', KASSA_MASTER_KEY: KEY, DATABASE_URL: NO_DATABASE, ...env }), pattern);
    }
  });

  it('passes public https addresses, warns on testnet, and leaves the sandbox alone', () => {
    const mainnet = loadConfig({
      TON_NETWORK: 'mainnet',
      KASSA_MASTER_KEY: KEY,
      BASE_URL: 'https://pay.example.com',
      CHECKOUT_BASE_URL: 'https://checkout.example.com',
    });
    const quiet = capture();
    assert.deepEqual(checkPublicUrls(mainnet, quiet.log), []);
    assert.deepEqual(quiet.lines(), []);
    assert.match(checkPublicUrls({ ...mainnet, baseUrl: 'http://10.0.0.5:3000' }, quiet.log).join(), /^BASE_URL=http:\/\/10\.0\.0\.5:3000 is not a public/);
    // A CHECKOUT_BASE_URL derived from the refused BASE_URL is not named a second time.
    assert.equal(checkPublicUrls({ ...mainnet, baseUrl: 'http://10.0.0.5:3000', checkoutBaseUrl: 'http://10.0.0.5:3000/pay' }, quiet.log).length, 1);

    const testnet = capture();
    assert.deepEqual(checkPublicUrls(loadConfig({ TON_NETWORK: 'testnet', KASSA_MASTER_KEY: KEY, BASE_URL: 'http://0.0.0.0:3000' }), testnet.log), []);
    const warnings = testnet.lines();
    assert.deepEqual(
      warnings.map((line) => [line.level, line.msg.split(' is not')[0]]),
      [
        [40, 'BASE_URL=http://0.0.0.0:3000'],
        [40, 'CHECKOUT_BASE_URL=http://0.0.0.0:3000/pay'],
      ],
    );
    assert.match(warnings[0].msg, /refused on mainnet/);

    const sandbox = capture();
    checkPublicUrls(loadConfig({ BASE_URL: 'http://0.0.0.0:3000' }), sandbox.log);
    assert.deepEqual(sandbox.lines(), []);
  });
});
