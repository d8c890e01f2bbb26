// Every CLI command, run as a real process against a real database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authenticate } from '../../src/auth/tokens.ts';
import { sql, z } from '../../src/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { assertFails, kassa } from '../helpers/cli.ts';

describe('kassa CLI', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  before(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url };
  });
  after(() => db.drop());

  it('migrate prints {"migrated": true}', async () => {
    const result = await kassa(['migrate'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.json, { migrated: true });
    assert.equal(result.stdout.trim().split('\n').length, 1);
  });

  let storeId: string;
  it('store create makes a store with the default methods', async () => {
    const result = await kassa(['store', 'create', '--name', 'Coffee'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.json.name, 'Coffee');
    assert.match(result.json.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      result.json.methods.map((m: any) => `${m.coin}/${m.chain}`),
      ['TON/TON', 'USDT/TON'],
    );
    for (const method of result.json.methods) assert.match(method.id, /^[0-9a-f-]{36}$/);
    storeId = result.json.id;
  });

  it('store create takes --methods', async () => {
    const result = await kassa(['store', 'create', '--name', 'Jettons', '--methods', 'NOT/TON,DOGS/TON'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      result.json.methods.map((m: any) => m.coin),
      ['NOT', 'DOGS'],
    );
  });

  it("store update sets the shop's face (display name, HTTPS logo, accent colour) and prints the store", async () => {
    const result = await kassa(
      ['store', 'update', storeId, '--display-name', ' Coffee & Co ', '--logo-url', 'https://cdn.example.com/logo.png', '--accent-color', '#1A73E8'],
      env,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      { ...result.json, methods: result.json.methods.map((m: any) => `${m.coin}/${m.chain}`) },
      {
        id: storeId,
        name: 'Coffee',
        treasury: null,
        settlement: 'deposit',
        displayName: 'Coffee & Co',
        logoUrl: 'https://cdn.example.com/logo.png',
        accentColor: '#1a73e8',
        refundWindowDays: 7,
        telegramBot: null,
        telegramApp: null,
        telegramBotID: null,
        embedOrigins: [],
        unmatchedDust: '0.01',
        methods: ['TON/TON', 'USDT/TON'],
      },
    );
    // The store's Telegram Mini App (CONTRACT §11): the bot's username, the short name, the bot's id (never its token).
    const telegram = await kassa(['store', 'update', storeId, '--telegram-bot', '@CoffeeBot', '--telegram-app', 'pay', '--telegram-bot-id', '7123456789'], env);
    assert.equal(telegram.code, 0, telegram.stderr);
    assert.deepEqual([telegram.json.telegramBot, telegram.json.telegramApp, telegram.json.telegramBotID], ['CoffeeBot', 'pay', 7123456789]);
    const token = await kassa(['store', 'update', storeId, '--telegram-bot-id', '7123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw'], env);
    assert.equal(token.code, 1);
    assert.match(token.stderr, /--telegram-bot-id must be the bot's numeric id/);
    // The origins whose pages may embed <kassa-pay> (CONTRACT §11): origins only, normalised; refused with the option named.
    const embed = await kassa(['store', 'update', storeId, '--embed-origins', 'https://Shop.Example, https://www.shop.example:8443'], env);
    assert.equal(embed.code, 0, embed.stderr);
    assert.deepEqual(embed.json.embedOrigins, ['https://shop.example', 'https://www.shop.example:8443']);
    const plain = await kassa(['store', 'update', storeId, '--embed-origins', 'http://shop.example'], env);
    assert.notEqual(plain.code, 0);
    assert.match(plain.stderr, /--embed-origins: "http:\/\/shop.example" must be https:\/\//);
    const none = await kassa(['store', 'update', storeId, '--embed-origins', ''], env);
    assert.deepEqual(none.json.embedOrigins, []);
    // The refund window (CONTRACT §11): 0 to 90 days; anything else refused with the option named.
    const window = await kassa(['store', 'update', storeId, '--refund-window-days', '30'], env);
    assert.equal(window.code, 0, window.stderr);
    assert.equal(window.json.refundWindowDays, 30);
    const tooLong = await kassa(['store', 'update', storeId, '--refund-window-days', '91'], env);
    assert.notEqual(tooLong.code, 0);
    assert.match(tooLong.stderr, /--refund-window-days must be a whole number of days from 0 to 90/);
    // One option at a time; the others stay; '' clears one.
    const cleared = await kassa(['store', 'update', storeId, '--logo-url', ''], env);
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.equal(cleared.json.logoUrl, null);
    assert.equal(cleared.json.displayName, 'Coffee & Co');
    assert.equal(cleared.json.accentColor, '#1a73e8');
  });

  it('store update renames a store and replaces its methods, each change in the audit log as the dashboard writes it', async () => {
    const made = await kassa(['store', 'create', '--name', 'Before'], env);
    const id = made.json.id as string;
    const changed = await kassa(['store', 'update', id, '--name', ' After ', '--methods', 'USDT/TON,NOT/TON'], env);
    assert.equal(changed.code, 0, changed.stderr);
    assert.equal(changed.json.name, 'After');
    assert.deepEqual(changed.json.methods.map((m: any) => m.coin).sort(), ['NOT', 'USDT']);
    assertFails(await kassa(['store', 'update', id, '--methods', 'FOO/TON'], env), /unknown payment method FOO\/TON/);
    assertFails(await kassa(['store', 'update', id, '--name', ''], env), /the store name must be 1 to 200 characters/);
    const rows = await db.pool.any(sql.type(z.object({ actor: z.string(), action: z.string(), detail: z.record(z.string(), z.unknown()) }))`
      select actor, action, detail from audit_log where store_id = ${id} order by id
    `);
    assert.deepEqual(
      rows.map((row) => [row.actor, row.action, row.detail]),
      [['cli', 'store.update', { name: 'After', methods: 'NOT/TON,USDT/TON' }]],
    );
  });

  it('store update refuses bad input, one line on stderr', async () => {
    assertFails(await kassa(['store', 'update', storeId, '--logo-url', 'http://cdn.example.com/logo.png'], env), /--logo-url must be an https:\/\/ URL/);
    assertFails(await kassa(['store', 'update', storeId, '--logo-url', 'not a url'], env), /--logo-url must be an absolute https:\/\/ URL/);
    // The logo's origin goes into the checkout's Content-Security-Policy: its host must be a host name.
    for (const injected of [
      'https://cdn.example.com;script-src/logo.png',
      'https://a,b.example.com/logo.png',
      "https://cdn.example.com'/logo.png",
      'https://cdn"x.example.com/logo.png',
    ]) {
      assertFails(await kassa(['store', 'update', storeId, '--logo-url', injected], env), /--logo-url must name a host/);
    }
    assertFails(await kassa(['store', 'update', storeId, '--accent-color', '#fff'], env), /--accent-color must be a 6-digit hex colour/);
    assertFails(await kassa(['store', 'update', storeId, '--accent-color', 'blue'], env), /--accent-color must be a 6-digit hex colour/);
    assertFails(
      await kassa(['store', 'update', storeId], env),
      /nothing to change: give at least one of --name, --treasury, --display-name, --logo-url, --accent-color, --refund-window-days, --telegram-bot, --telegram-app, --telegram-bot-id, --embed-origins, --settlement, --unmatched-dust, --methods/,
    );
    // Treasury settlement needs a treasury (issue 43).
    assertFails(await kassa(['store', 'update', storeId, '--settlement', 'treasury'], env), /--settlement treasury needs a treasury/);
    assertFails(await kassa(['store', 'update', storeId, '--settlement', 'sideways'], env), /--settlement must be deposit or treasury/);
    assertFails(await kassa(['store', 'update', storeId, '--unmatched-dust', '-0.5'], env), /--unmatched-dust must be an amount from 0 to 1000000/);
    assertFails(await kassa(['store', 'update', '00000000-0000-4000-8000-000000000000', '--accent-color', '#000000'], env), /no store with id/);
    assertFails(await kassa(['store', 'update', '--accent-color', '#000000'], env), /expected 1 argument/);
    assertFails(await kassa(['store', 'update', storeId, '--colour', '#000000'], env), /Unknown option '--colour'/);
  });

  it('store create refuses bad input', async () => {
    assertFails(await kassa(['store', 'create'], env), /--name is required/);
    assertFails(await kassa(['store', 'create', '--name', 'X', '--methods', 'FOO/TON'], env), /unknown payment method FOO\/TON/);
    assertFails(await kassa(['store', 'create', '--name', 'X', '--methods', 'usdt/TON'], env), /unknown payment method usdt\/TON/);
    assertFails(await kassa(['store', 'create', '--name', 'X', '--bogus'], env), /Unknown option '--bogus'/);
  });

  it("a treasury is basechain and none of Kassa's own wallets, checked when it is set (a value may begin with -)", async () => {
    const masterchain = `-1:${'ab'.repeat(32)}`;
    assertFails(
      await kassa(['store', 'create', '--name', 'X', '--treasury', masterchain], env),
      /invalid treasury .*workchain -1 address: Kassa sends only to basechain/,
    );
    assertFails(await kassa(['store', 'update', storeId, '--treasury', masterchain], env), /invalid treasury .*workchain -1 address/);
    const basechainAddress = `0:${'cd'.repeat(32)}`;
    const gas = `0:${'ef'.repeat(32)}`;
    await db.pool.query(
      sql.unsafe`insert into gas_wallets (network, address) values ('sandbox', ${gas}) on conflict (network) do update set address = excluded.address`,
    );
    assertFails(await kassa(['store', 'update', storeId, '--treasury', gas], env), /invalid treasury .*Kassa's own gas wallet/);
    const basechain = await kassa(['store', 'update', storeId, '--treasury', basechainAddress], env);
    assert.equal(basechain.code, 0, basechain.stderr);
    assert.equal(basechain.json.treasury, basechainAddress);
    const cleared = await kassa(['store', 'update', storeId, '--treasury', ''], env);
    assert.equal(cleared.json.treasury, null);
  });

  it('token issue prints a working token, with and without expiry', async () => {
    const forever = await kassa(['token', 'issue', '--store', storeId], env);
    assert.equal(forever.code, 0, forever.stderr);
    assert.equal(forever.json.expiresAt, null);
    assert.equal((await authenticate(db.pool, forever.json.token, new Date())).storeId, storeId);

    const month = await kassa(['token', 'issue', '--store', storeId, '--expires-in', '30d'], env);
    assert.equal(month.code, 0, month.stderr);
    const expires = new Date(month.json.expiresAt).getTime();
    assert.ok(Math.abs(expires - (Date.now() + 30 * 86_400_000)) < 60_000);
    const row = await db.pool.one(
      sql.type(z.object({ store_id: z.string(), expires_at: z.date().nullable() }))`select store_id, expires_at from api_tokens where jti = ${month.json.jti}`,
    );
    assert.equal(row.store_id, storeId);
    assert.equal(row.expires_at?.getTime(), expires);
  });

  it('token issue refuses an unknown store and a bad duration', async () => {
    assertFails(await kassa(['token', 'issue', '--store', '00000000-0000-4000-8000-000000000000'], env), /unknown store/);
    assertFails(await kassa(['token', 'issue', '--store', 'nope'], env), /unknown store/);
    assertFails(await kassa(['token', 'issue', '--store', storeId, '--expires-in', 'soon'], env), /--expires-in: invalid duration/);
  });

  it("gas paid records what a store paid for its jetton refunds' gas and prints its account; a negative amount corrects", async () => {
    const paid = await kassa(['gas', 'paid', '--store', storeId, '--amount', '0.5', '--note', 'tx abc'], env);
    assert.equal(paid.code, 0, paid.stderr);
    assert.deepEqual(paid.json, { storeId, paid: '0.5', spent: '0', available: '0.5' });
    const corrected = await kassa(['gas', 'paid', '--store', storeId, '--amount', '-0.125'], env);
    assert.equal(corrected.code, 0, corrected.stderr);
    assert.deepEqual(corrected.json, { storeId, paid: '0.375', spent: '0', available: '0.375' });
    const notes = await db.pool.anyFirst(sql.type(z.object({ note: z.string().nullable() }))`
      select note from store_gas_payments where store_id = ${storeId} order by recorded_at, id
    `);
    assert.equal(notes.length, 2);
    assert.ok(notes.includes('tx abc'));
    assertFails(await kassa(['gas', 'paid', '--store', '00000000-0000-4000-8000-000000000000', '--amount', '1'], env), /unknown store/);
    assertFails(await kassa(['gas', 'paid', '--store', storeId, '--amount', 'lots'], env), /--amount must be an amount of TON/);
    assertFails(await kassa(['gas', 'paid', '--store', storeId], env), /--amount is required/);
  });

  it('token revoke revokes at once', async () => {
    const issued = await kassa(['token', 'issue', '--store', storeId], env);
    const revoked = await kassa(['token', 'revoke', issued.json.jti], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.deepEqual(revoked.json, { revoked: issued.json.jti });
    await assert.rejects(authenticate(db.pool, issued.json.token, new Date()), /access token/);
    // An unknown jti is no usage error (exit 2 is for those): exit 1.
    const unknown = await kassa(['token', 'revoke', '00000000-0000-4000-8000-000000000000'], env);
    assertFails(unknown, /no token with jti/);
    assert.equal(unknown.code, 1);
    const missing = await kassa(['token', 'revoke'], env);
    assertFails(missing, /expected 1 argument/);
    assert.equal(missing.code, 2);
  });

  it('token issue --scope narrows a token (the API enforces it), token list shows it; issue and revoke are audited as the CLI', async () => {
    const readOnly = await kassa(['token', 'issue', '--store', storeId, '--scope', 'read_only', '--name', '  reports job '], env);
    assert.equal(readOnly.code, 0, readOnly.stderr);
    assert.equal(readOnly.json.scope, 'read_only');
    assert.equal(readOnly.json.name, 'reports job');
    assert.equal((await authenticate(db.pool, readOnly.json.token, new Date())).scope, 'read_only');
    const full = await kassa(['token', 'issue', '--store', storeId], env);
    assert.equal(full.json.scope, 'full');
    const listed = await kassa(['token', 'list', '--store', storeId], env);
    const scopes = Object.fromEntries(listed.json.data.map((token: { jti: string; scope: string }) => [token.jti, token.scope]));
    assert.equal(scopes[readOnly.json.jti], 'read_only');
    assert.equal(scopes[full.json.jti], 'full');
    // Token names: shown in the list (null when none was given); a name too long is a usage error.
    const names = Object.fromEntries(listed.json.data.map((token: { jti: string; name: string | null }) => [token.jti, token.name]));
    assert.equal(names[readOnly.json.jti], 'reports job');
    assert.equal(names[full.json.jti], null);
    const long = await kassa(['token', 'issue', '--store', storeId, '--name', 'x'.repeat(101)], env);
    assertFails(long, /^kassa: --name: a token's name is at most 100 characters/);
    assert.equal(long.code, 2);
    const bad = await kassa(['token', 'issue', '--store', storeId, '--scope', 'admin'], env);
    assertFails(bad, /--scope must be one of full, read_only, create_payments/);
    assert.equal(bad.code, 2);

    assert.equal((await kassa(['token', 'revoke', readOnly.json.jti], env)).code, 0);
    const rows = await db.pool.any(
      sql.type(z.object({ action: z.string(), actor: z.string(), actor_user_id: z.string().nullable(), store_id: z.string().nullable(), detail: z.any() }))`
        select action, actor, actor_user_id, store_id, detail from audit_log where subject = ${readOnly.json.jti} order by id
      `,
    );
    assert.deepEqual(
      rows.map((row) => [row.action, row.actor, row.actor_user_id, row.store_id]),
      [
        ['token.issue', 'cli', null, storeId],
        ['token.revoke', 'cli', null, storeId],
      ],
    );
    assert.equal(rows[0]!.detail.scope, 'read_only');
    assert.equal(rows[0]!.detail.name, 'reports job');
  });

  it('--help, -h and help describe every command and its options; COMMAND --help describes one', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      // Help needs no configuration: a bad environment does not stop it.
      const result = await kassa(args, { PORT: 'x' });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, '');
      for (const usage of [
        'kassa start [--api | --worker]',
        'kassa migrate',
        'kassa store create --name NAME',
        'kassa token issue --store ID',
        'kassa token revoke JTI',
        'kassa keys rotate',
      ]) {
        assert.ok(result.stdout.includes(usage), `${args.join(' ')} lists ${usage}`);
      }
      for (const option of ['--api ', '--worker ', '--name NAME ', '--methods LIST ', '--store ID ', '--expires-in TIME ']) {
        assert.ok(result.stdout.includes(option), `${args.join(' ')} describes ${option.trim()}`);
      }
    }
    const one = await kassa(['token', 'issue', '--help'], {});
    assert.equal(one.code, 0, one.stderr);
    assert.match(
      one.stdout,
      /^usage: kassa token issue --store ID \[--name NAME\] \[--expires-in 30d\] \[--scope full\|read_only\|create_payments\]\n\nIssues an API token/,
    );
    assert.match(one.stdout, /--expires-in TIME +lifetime/);
    assert.doesNotMatch(one.stdout, /store create/);
    for (const args of [
      ['store', 'create', '-h'],
      ['help', 'store', 'create'],
      ['start', '--help'],
    ]) {
      const result = await kassa(args, {});
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`^usage: kassa ${args.filter((arg) => !arg.startsWith('-') && arg !== 'help').join(' ')}`));
    }
    const none = await kassa([], {});
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^usage:\n {2}kassa start/);
  });

  it("keys rotate makes a new active key and keeps the old one published; the command's 10-minute rule holds for the CLI too", async () => {
    const first = await kassa(['keys', 'rotate'], env);
    assert.equal(first.code, 0, first.stderr);
    // Again at once: refused by the command (as the dashboard's owner is), nothing changes.
    assertFails(await kassa(['keys', 'rotate'], env), /less than 10 minutes ago\. Try again in 10 minutes/);
    const kids = sql.type(z.object({ kid: z.string() }))`select kid from webhook_signing_keys where retired_at is null`;
    assert.deepEqual(await db.pool.anyFirst(kids), [first.json.kid]);
    await db.pool.query(sql.typeAlias('void')`update webhook_signing_keys set created_at = created_at - interval '11 minutes'`);
    const second = await kassa(['keys', 'rotate'], env);
    assert.equal(second.code, 0, second.stderr);
    assert.notEqual(first.json.kid, second.json.kid);
    const keys = await db.pool.any(sql.type(z.object({ kid: z.string(), retired_at: z.date().nullable() }))`select kid, retired_at from webhook_signing_keys`);
    assert.equal(keys.find((k) => k.kid === second.json.kid)?.retired_at, null);
    assert.notEqual(keys.find((k) => k.kid === first.json.kid)?.retired_at, null);
  });

  it('fails with one line for an unknown command, bad config and a database that is down', async () => {
    assertFails(await kassa(['frobnicate'], env), /unknown command "frobnicate"/);
    assertFails(await kassa(['migrate'], { ...env, PORT: 'x' }), /PORT must be an integer/);
    assertFails(
      await kassa(['migrate'], { ...env, TON_NETWORK: 'mainnet', KASSA_MASTER_KEY: 'ab'.repeat(32), WEBHOOK_ALLOW_INSECURE: 'true' }),
      /WEBHOOK_ALLOW_INSECURE=true is refused/,
    );
    assertFails(await kassa(['store', 'create', '--name', 'X'], { DATABASE_URL: 'postgres://kassa:kassa@127.0.0.1:1/kassa' }), /database unavailable/);
  });

  it('start on mainnet or testnet refuses the embedded development database in one line naming DATABASE_URL (and so does any command that would open it)', async () => {
    const mainnet = { TON_NETWORK: 'mainnet', KASSA_MASTER_KEY: 'ab'.repeat(32), BASE_URL: 'https://pay.example.com', TON_API_KEY: 'k' };
    assertFails(
      await kassa(['start'], mainnet),
      /^kassa: invalid configuration: DATABASE_URL is required when TON_NETWORK=mainnet: .*embedded development database .*ALLOW_EMBEDDED_DATABASE=true/,
    );
    assertFails(
      await kassa(['store', 'list'], { ...mainnet, TON_NETWORK: 'testnet' }),
      /^kassa: invalid configuration: DATABASE_URL is required when TON_NETWORK=testnet/,
    );
  });

  it('start names every configuration problem in one message: a missing master key, a bind-address BASE_URL and a missing API key', async () => {
    const result = await kassa(['start'], { ...env, TON_NETWORK: 'mainnet', BASE_URL: 'http://0.0.0.0:3000', LOG_LEVEL: 'loud' });
    assertFails(result, /^kassa: invalid configuration: /);
    const problems = result.stderr
      .trim()
      .replace(/^kassa: invalid configuration: /, '')
      .split('; ')
      .map((problem) => problem.split(/[ =]/)[0] ?? '');
    assert.deepEqual(
      problems.filter((name) => /^[A-Z_]+$/.test(name)),
      ['KASSA_MASTER_KEY', 'LOG_LEVEL', 'BASE_URL', 'TON_API_RPS'],
      result.stderr,
    );
    assert.match(result.stderr, /BASE_URL=http:\/\/0\.0\.0\.0:3000 is not a public https:\/\/ address/);
    assert.match(result.stderr, /Set TON_API_KEY/);
  });

  it('start refuses a chain budget that cannot keep up with the network, in one line naming TON_API_RPS and a key', async () => {
    const mainnet = { ...env, TON_NETWORK: 'mainnet', KASSA_MASTER_KEY: 'ab'.repeat(32), BASE_URL: 'https://pay.example.com' };
    assertFails(
      await kassa(['start'], mainnet),
      /^kassa: invalid configuration: TON_API_RPS=1 cannot keep up with mainnet: it makes about 2\.5 masterchain blocks\/s .*Set TON_API_KEY .*TON_API_RPS/,
    );
    assertFails(
      await kassa(['start', '--worker'], { ...mainnet, TON_NETWORK: 'testnet', TON_API_KEY: 'k', TON_API_RPS: '2' }),
      /TON_API_RPS=2 cannot keep up with testnet: it makes about 2\.2 masterchain blocks\/s/,
    );
  });
});
