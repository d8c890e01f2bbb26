// `kassa dashboard invite`, run as a real process against a real database: it prints the one-time
// link, stores only its hash, and writes the audit log; bad input is a usage error.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { createTestStore } from '../helpers/factories.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { assertFails, kassa } from '../helpers/cli.ts';

describe('kassa dashboard invite', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  before(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, BASE_URL: 'https://pay.example.com' };
  });
  after(() => db.drop());

  it('prints {"url", "storeId", "email", "role", "expiresAt"}: a link of BASE_URL valid 24 h, whose token is stored hashed', async () => {
    const store = await createTestStore(db.pool, { name: 'Coffee' });
    const before = Date.now();
    const result = await kassa(['dashboard', 'invite', '--store', store.id.toUpperCase(), '--email', ' Owner@Example.COM', '--role', 'viewer'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(Object.keys(result.json), ['url', 'storeId', 'email', 'role', 'expiresAt']);
    const match = /^https:\/\/pay\.example\.com\/dashboard\/invite\/([A-Za-z0-9_-]{43})$/.exec(result.json.url);
    assert.ok(match, result.json.url);
    assert.equal(result.json.storeId, store.id);
    assert.equal(result.json.email, 'owner@example.com');
    assert.equal(result.json.role, 'viewer');
    const lifetime = Date.parse(result.json.expiresAt) - before;
    assert.ok(lifetime > 23.9 * 3600_000 && lifetime <= 24 * 3600_000 + 60_000, String(lifetime));
    const stored = await db.pool.one(sql.type(z.object({ token_hash: z.instanceof(Buffer), role: z.string() }))`
      select token_hash, role from dashboard_invitations where store_id = ${store.id}
    `);
    assert.deepEqual(stored.token_hash, crypto.createHash('sha256').update(match[1]!).digest());
    assert.equal(stored.role, 'viewer');
    const audit = await db.pool.one(sql.type(z.object({ actor: z.string(), action: z.string(), subject: z.string(), client_address: z.string().nullable() }))`
      select actor, action, subject, client_address from audit_log where store_id = ${store.id}
    `);
    assert.deepEqual(audit, { actor: 'cli', action: 'invitation.create', subject: 'owner@example.com', client_address: null });
    // The role defaults to owner.
    assert.equal((await kassa(['dashboard', 'invite', '--store', store.id, '--email', 'two@example.com'], env)).json.role, 'owner');
  });

  it('refuses a missing or unknown store, a bad email and an unknown role', async () => {
    const store = await createTestStore(db.pool);
    assertFails(await kassa(['dashboard', 'invite', '--email', 'a@example.com'], env), /--store is required/);
    assertFails(await kassa(['dashboard', 'invite', '--store', crypto.randomUUID(), '--email', 'a@example.com'], env), /no store with id/);
    assertFails(await kassa(['dashboard', 'invite', '--store', 'nope', '--email', 'a@example.com'], env), /no store with id/);
    assertFails(await kassa(['dashboard', 'invite', '--store', store.id, '--email', 'not-an-email'], env), /not an email address/);
    assertFails(await kassa(['dashboard', 'invite', '--store', store.id, '--email', 'a@example.com', '--role', 'admin'], env), /--role is owner or viewer/);
  });

  it('--reset-password: a reset link for a member of the store, keeping their role; refused for anyone else', async () => {
    const store = await createTestStore(db.pool);
    assertFails(
      await kassa(['dashboard', 'invite', '--store', store.id, '--email', 'stranger@example.com', '--reset-password'], env),
      /is not a member of this store/,
    );
    const userId = await db.pool.oneFirst(sql.type(z.object({ id: z.string() }))`
      insert into dashboard_users (email, password_hash) values ('member@example.com', null) returning id
    `);
    await db.pool.query(sql.unsafe`insert into store_members (store_id, user_id, role) values (${store.id}, ${userId}, 'viewer')`);
    const reset = await kassa(['dashboard', 'invite', '--store', store.id, '--email', 'member@example.com', '--reset-password'], env);
    assert.equal(reset.code, 0, reset.stderr);
    assert.equal(reset.json.role, 'viewer');
    assert.equal(
      await db.pool.oneFirst(sql.type(z.object({ resets_password: z.boolean() }))`
        select resets_password from dashboard_invitations where store_id = ${store.id} and email = 'member@example.com'
      `),
      true,
    );
  });
});
