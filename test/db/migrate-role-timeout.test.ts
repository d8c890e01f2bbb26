// Migrations under a role whose statement timeout is a role default (`ALTER ROLE … SET
// statement_timeout`, as docs/OPERATIONS.md advises behind a pooler that takes no connect_query): the
// migration's own sessions send `statement_timeout = 0` at connect (db/migrate.ts
// unboundedStatements), so no migration statement is cancelled by the role's bound.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import { migrate, pendingMigrations } from '../../src/db/migrate.ts';

const admin = new pg.Client({ connectionString: process.env.KASSA_TEST_ADMIN_URL });
const suffix = crypto.randomBytes(4).toString('hex');
const role = `kassa_role_timeout_${suffix}`;
const database = `kassa_role_timeout_${suffix}`;
let url: string;
let adminOfDatabase: string;

before(async () => {
  await admin.connect();
  await admin.query(`create role ${role} login password 'x'`);
  // 1 ms: every migration has statements that take longer.
  await admin.query(`alter role ${role} set statement_timeout = '1ms'`);
  await admin.query(`create database ${database} owner ${role}`);
  const target = new URL(process.env.KASSA_TEST_ADMIN_URL!);
  target.username = role;
  target.password = 'x';
  target.pathname = `/${database}`;
  url = target.toString();
  const asAdmin = new URL(process.env.KASSA_TEST_ADMIN_URL!);
  asAdmin.pathname = `/${database}`;
  adminOfDatabase = asAdmin.toString();
});
after(async () => {
  await admin.query(`drop database if exists ${database} with (force)`);
  await admin.query(`drop role if exists ${role}`);
  await admin.end();
});

describe('migrations under a role default statement timeout', () => {
  it('the role bounds an ordinary session, yet every migration is applied', async () => {
    const plain = new pg.Client({ connectionString: url });
    await plain.connect();
    const inForce = (await plain.query<{ t: string }>(`select current_setting('statement_timeout') as t`)).rows[0]!.t;
    await plain.end();
    assert.equal(inForce, '1ms', 'the role default is in force on a session that sets nothing');
    await migrate(url, pino({ level: 'silent' }));
    assert.deepEqual(await pendingMigrations(adminOfDatabase), [], 'no committed migration is left');
  });
});
