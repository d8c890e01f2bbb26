import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, databasePooled, databaseProblem, loadConfig, readConfig } from '../../src/config.ts';

describe('configuration', () => {
  it('has zero-configuration defaults', () => {
    const config = loadConfig({}, '/srv/kassa');
    assert.equal(config.databaseUrl, null);
    assert.equal(config.embeddedPgDir, '/srv/kassa/.kassa/pg');
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.baseUrl, 'http://127.0.0.1:3000');
    assert.equal(config.checkoutBaseUrl, 'http://127.0.0.1:3000/pay');
    assert.equal(config.tonNetwork, 'sandbox');
    assert.equal(config.webhookAllowInsecure, false);
    assert.equal(config.rateLimitPerStore, 100);
    assert.equal(config.rateLimitPerClient, 10);
    assert.equal(config.logLevel, 'info');
  });

  it('derives BASE_URL and CHECKOUT_BASE_URL from each other', () => {
    assert.equal(loadConfig({ PORT: '8080', HOST: '0.0.0.0' }).baseUrl, 'http://0.0.0.0:8080');
    const config = loadConfig({ BASE_URL: 'https://pay.example.com/' });
    assert.equal(config.baseUrl, 'https://pay.example.com');
    assert.equal(config.checkoutBaseUrl, 'https://pay.example.com/pay');
    assert.equal(loadConfig({ CHECKOUT_BASE_URL: 'https://checkout.example.com' }).checkoutBaseUrl, 'https://checkout.example.com');
  });

  const refuses = (env: Record<string, string>, pattern: RegExp) => {
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => error instanceof ConfigError && pattern.test(error.message),
    );
  };

  it('refuses each bad value with a clear message', () => {
    refuses({ PORT: 'eighty' }, /PORT must be an integer from 0 to 65535, got "eighty"/);
    refuses({ PORT: '70000' }, /PORT must be an integer/);
    refuses({ TON_NETWORK: 'moon' }, /TON_NETWORK must be mainnet, testnet or sandbox/);
    refuses({ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres:\/\/ connection URL/);
    refuses({ BASE_URL: 'ftp://x' }, /BASE_URL must be an absolute http\(s\) URL/);
    refuses({ WEBHOOK_ALLOW_INSECURE: 'yes' }, /WEBHOOK_ALLOW_INSECURE must be "true" or "false"/);
    refuses({ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/);
    refuses({ RATE_LIMIT_PER_STORE: '-1' }, /RATE_LIMIT_PER_STORE must be an integer/);
    refuses({ KASSA_MASTER_KEY: 'abc' }, /KASSA_MASTER_KEY must be 64 hex characters/);
    refuses({ TON_NETWORK: 'testnet' }, /KASSA_MASTER_KEY \(or, for an API-only process, KASSA_DEPOSIT_PUBLIC_KEY\) is required when TON_NETWORK=testnet/);
  });

  it('refuses to start off the sandbox without an explicit BASE_URL (the bind address is not public)', () => {
    for (const network of ['mainnet', 'testnet']) {
      refuses(
        { TON_NETWORK: network, KASSA_MASTER_KEY: 'ab'.repeat(32), HOST: '0.0.0.0' },
        new RegExp(`^invalid configuration: BASE_URL is required when TON_NETWORK=${network}: the public https address`),
      );
      assert.equal(
        loadConfig({ TON_NETWORK: network, KASSA_MASTER_KEY: 'ab'.repeat(32), HOST: '0.0.0.0', BASE_URL: 'https://pay.example.com' }).checkoutBaseUrl,
        'https://pay.example.com/pay',
      );
    }
    assert.equal(loadConfig({ HOST: '0.0.0.0' }).baseUrl, 'http://0.0.0.0:3000', 'the sandbox still runs with zero configuration');
  });

  it('refuses WEBHOOK_ALLOW_INSECURE on mainnet', () => {
    refuses(
      { TON_NETWORK: 'mainnet', KASSA_MASTER_KEY: 'ab'.repeat(32), WEBHOOK_ALLOW_INSECURE: 'true' },
      /WEBHOOK_ALLOW_INSECURE=true is refused when TON_NETWORK=mainnet/,
    );
    assert.equal(
      loadConfig({ TON_NETWORK: 'testnet', KASSA_MASTER_KEY: 'ab'.repeat(32), BASE_URL: 'https://pay.example.com', WEBHOOK_ALLOW_INSECURE: 'true' })
        .webhookAllowInsecure,
      true,
    );
  });

  it('reports every bad value at once', () => {
    refuses({ PORT: 'x', LOG_LEVEL: 'loud' }, /PORT must be.*; LOG_LEVEL must be/);
    // readConfig lists them (for kassa start and kassa doctor) with defaults in their place.
    const { config, problems } = readConfig({ PORT: 'x', LOG_LEVEL: 'loud', TON_NETWORK: 'mainnet' });
    assert.deepEqual(
      problems.map((problem) => problem.split(/[ =]/)[0]),
      ['PORT', 'BASE_URL', 'KASSA_MASTER_KEY', 'LOG_LEVEL'],
    );
    assert.equal(config.port, 3000);
    assert.equal(config.logLevel, 'info');
  });

  it('off the sandbox the embedded development database needs ALLOW_EMBEDDED_DATABASE=true', () => {
    const env = { KASSA_MASTER_KEY: 'ab'.repeat(32), BASE_URL: 'https://pay.example.com' };
    assert.equal(databaseProblem(loadConfig({})), null, 'the sandbox runs on it with zero configuration');
    for (const network of ['mainnet', 'testnet']) {
      assert.match(databaseProblem(loadConfig({ ...env, TON_NETWORK: network }))!, new RegExp(`^DATABASE_URL is required when TON_NETWORK=${network}`));
      assert.equal(databaseProblem(loadConfig({ ...env, TON_NETWORK: network, DATABASE_URL: 'postgres://db.example/kassa' })), null);
      assert.equal(databaseProblem(loadConfig({ ...env, TON_NETWORK: network, ALLOW_EMBEDDED_DATABASE: 'true' })), null);
    }
    refuses({ ALLOW_EMBEDDED_DATABASE: 'maybe' }, /ALLOW_EMBEDDED_DATABASE must be "true" or "false"/);
  });

  it("TON_API_URL is the API root (v2/v3 suffixes trimmed); TON_API_RPS follows toncenter's plans", () => {
    const key = { KASSA_MASTER_KEY: 'ab'.repeat(32), TON_NETWORK: 'mainnet', BASE_URL: 'https://pay.example.com' };
    assert.equal(loadConfig({ ...key, TON_API_URL: 'https://toncenter.com/api/v2/jsonRPC' }).tonApiUrl, 'https://toncenter.com');
    assert.equal(loadConfig({ ...key, TON_API_URL: 'https://toncenter.com/api/v3/' }).tonApiUrl, 'https://toncenter.com');
    assert.equal(loadConfig(key).tonApiRps, 1);
    assert.equal(loadConfig({ ...key, TON_API_KEY: 'k' }).tonApiRps, 10);
    assert.equal(loadConfig({ ...key, TON_API_KEY: 'k', TON_API_RPS: '25' }).tonApiRps, 25);
    assert.equal(loadConfig({}).tonApiRps, 0, 'no cap on the local sandbox');
    assert.throws(() => loadConfig({ TON_API_RPS: 'fast' }), /TON_API_RPS/);
  });

  it('READY_MAX_BLOCKS_BEHIND: how far behind the chain reader may be for /readyz (default 50)', () => {
    assert.equal(loadConfig({}).readyMaxBlocksBehind, 50);
    assert.equal(loadConfig({ READY_MAX_BLOCKS_BEHIND: '200' }).readyMaxBlocksBehind, 200);
    assert.throws(() => loadConfig({ READY_MAX_BLOCKS_BEHIND: '0' }), /READY_MAX_BLOCKS_BEHIND must be an integer from 1/);
  });

  it('uses toncenter by default on mainnet and testnet', () => {
    assert.equal(
      loadConfig({ TON_NETWORK: 'mainnet', KASSA_MASTER_KEY: 'ab'.repeat(32), BASE_URL: 'https://pay.example.com' }).tonApiUrl,
      'https://toncenter.com',
    );
    assert.equal(
      loadConfig({ TON_NETWORK: 'testnet', KASSA_MASTER_KEY: 'ab'.repeat(32), BASE_URL: 'https://pay.example.com' }).tonApiUrl,
      'https://testnet.toncenter.com',
    );
  });

  it('REFUND_HOLD_DAYS: 30 by default, 0 to 3650 days', () => {
    assert.equal(loadConfig({}).refundHoldDays, 30);
    assert.equal(loadConfig({ REFUND_HOLD_DAYS: '0' }).refundHoldDays, 0);
    assert.equal(loadConfig({ REFUND_HOLD_DAYS: '90' }).refundHoldDays, 90);
    assert.throws(() => loadConfig({ REFUND_HOLD_DAYS: '3651' }), /REFUND_HOLD_DAYS must be an integer from 0 to 3650/);
    assert.throws(() => loadConfig({ REFUND_HOLD_DAYS: '-1' }), /REFUND_HOLD_DAYS must be an integer/);
  });

  it('DATABASE_STATEMENT_TIMEOUT_MS: 5 s by default, 100 ms to 10 min', () => {
    assert.equal(loadConfig({}).databaseStatementTimeoutMs, 5_000);
    assert.equal(loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '30000' }).databaseStatementTimeoutMs, 30_000);
    assert.throws(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '50' }), /DATABASE_STATEMENT_TIMEOUT_MS must be an integer from 100 to 600000/);
  });

  it("SMTP_URL (smtp:// or smtps://, never repeated in a message) needs SMTP_FROM; TELEGRAM_API_URL is Telegram's unless set", () => {
    const none = loadConfig({});
    assert.deepEqual([none.smtpUrl, none.smtpFrom, none.telegramApiUrl], [null, null, 'https://api.telegram.org']);
    const set = loadConfig({
      SMTP_URL: 'smtps://kassa:s3cret-pw@mail.example:465',
      SMTP_FROM: 'Kassa <kassa@shop.example>',
      TELEGRAM_API_URL: 'http://127.0.0.1:8081/',
    });
    assert.deepEqual(
      [set.smtpUrl, set.smtpFrom, set.telegramApiUrl],
      ['smtps://kassa:s3cret-pw@mail.example:465', 'Kassa <kassa@shop.example>', 'http://127.0.0.1:8081'],
    );
    assert.throws(() => loadConfig({ SMTP_URL: 'smtp://mail.example:587' }), /SMTP_FROM is required with SMTP_URL/);
    assert.throws(
      () => loadConfig({ SMTP_URL: 'http://kassa:s3cret-pw@mail.example', SMTP_FROM: 'kassa@shop.example' }),
      (error: Error) => /SMTP_URL must be smtp:\/\//.test(error.message) && !error.message.includes('s3cret-pw'),
    );
    assert.throws(() => loadConfig({ TELEGRAM_API_URL: 'ftp://x' }), /TELEGRAM_API_URL must be an absolute http\(s\) URL/);
  });

  it('DATABASE_SESSION_URL: DATABASE_URL by default; apart from it, DATABASE_URL is pooled and prepared statements are off unless DATABASE_PREPARED_STATEMENTS=true', () => {
    const direct = 'postgres://kassa@db.internal:5432/kassa';
    const pooled = 'postgres://kassa@pooler.internal:6432/kassa';
    const one = loadConfig({ DATABASE_URL: direct });
    assert.equal(one.databaseSessionUrl, direct);
    assert.equal(one.databasePreparedStatements, true);
    assert.equal(databasePooled(one), false);
    const embedded = loadConfig({});
    assert.equal(embedded.databaseSessionUrl, null);
    assert.equal(embedded.databasePreparedStatements, true);
    const two = loadConfig({ DATABASE_URL: pooled, DATABASE_SESSION_URL: direct });
    assert.equal(two.databaseSessionUrl, direct);
    assert.equal(two.databasePreparedStatements, false);
    assert.equal(databasePooled(two), true);
    assert.equal(loadConfig({ DATABASE_URL: pooled, DATABASE_SESSION_URL: direct, DATABASE_PREPARED_STATEMENTS: 'true' }).databasePreparedStatements, true);
    assert.equal(loadConfig({ DATABASE_URL: direct, DATABASE_PREPARED_STATEMENTS: 'false' }).databasePreparedStatements, false);
    assert.throws(() => loadConfig({ DATABASE_SESSION_URL: direct }), /DATABASE_SESSION_URL is set without DATABASE_URL/);
    assert.throws(() => loadConfig({ DATABASE_URL: pooled, DATABASE_SESSION_URL: 'mysql://x' }), /DATABASE_SESSION_URL must be a postgres:\/\/ connection URL/);
    assert.throws(() => loadConfig({ DATABASE_URL: pooled, DATABASE_PREPARED_STATEMENTS: 'yes' }), /DATABASE_PREPARED_STATEMENTS must be "true" or "false"/);
  });

  it('DATABASE_REPORTING_URL: unset, reports read DATABASE_URL; set, a postgres URL beside DATABASE_URL', () => {
    const primary = 'postgres://kassa@db.internal:5432/kassa';
    const replica = 'postgres://kassa@replica.internal:5432/kassa';
    assert.equal(loadConfig({ DATABASE_URL: primary }).databaseReportingUrl, null);
    assert.equal(loadConfig({}).databaseReportingUrl, null);
    const set = loadConfig({ DATABASE_URL: primary, DATABASE_REPORTING_URL: replica });
    assert.equal(set.databaseReportingUrl, replica);
    assert.equal(set.databaseSessionUrl, primary, 'the replica is no session URL');
    assert.equal(databasePooled(set), false);
    assert.throws(() => loadConfig({ DATABASE_REPORTING_URL: replica }), /DATABASE_REPORTING_URL is set without DATABASE_URL/);
    assert.throws(
      () => loadConfig({ DATABASE_URL: primary, DATABASE_REPORTING_URL: 'https://replica' }),
      /DATABASE_REPORTING_URL must be a postgres:\/\/ connection URL/,
    );
  });
});
