// A fresh database per test file, cloned from the migrated template the test command prepared.
import crypto from 'node:crypto';
import pg from 'pg';
import { openPool, type DatabasePool } from '../../src/db/pool.ts';

export interface TestDatabase {
  url: string;
  name: string;
  pool: DatabasePool;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

function adminUrl(): string {
  const url = process.env.KASSA_TEST_ADMIN_URL;
  if (!url || !process.env.KASSA_TEST_TEMPLATE) {
    throw new Error('run tests with `npm test` (it prepares the template database)');
  }
  return url;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  const name = `kassa_test_${process.env.KASSA_TEST_RUN ?? process.pid}_${crypto.randomBytes(5).toString('hex')}`;
  try {
    // Cloning needs the template to have no other connections; retry briefly if one lingers.
    for (let attempt = 0; ; attempt += 1) {
      try {
        await admin.query(`create database ${pg.escapeIdentifier(name)} template ${pg.escapeIdentifier(process.env.KASSA_TEST_TEMPLATE!)}`);
        break;
      } catch (error) {
        if (attempt >= 20 || (error as { code?: string }).code !== '55006') throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  const pool = await openPool(url.toString(), { maxPoolSize: 10 });
  const drop = async () => {
    await pool.end();
    const cleanup = new pg.Client({ connectionString: adminUrl() });
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    await cleanup.end();
  };
  return { url: url.toString(), name, pool, drop };
}
