// A fresh database per test file (and per drill under the test command), cloned from the migrated
// template the test command prepared.
import crypto from 'node:crypto';
import pg from 'pg';
import { openPool, type DatabasePool } from '../../src/db/pool.ts';

export interface ClonedDatabase {
  url: string;
  name: string;
  /** Drops the database, ending any connection still open to it. */
  drop(): Promise<void>;
}

export interface TestDatabase extends ClonedDatabase {
  pool: DatabasePool;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** Whether this process runs under the test command, which names its server and template in the environment (test/run.ts). */
export function hasTestTemplate(): boolean {
  return Boolean(process.env.KASSA_TEST_ADMIN_URL && process.env.KASSA_TEST_TEMPLATE);
}

function adminUrl(): string {
  if (!hasTestTemplate()) {
    throw new Error('run tests with `npm test` (it prepares the template database)');
  }
  return process.env.KASSA_TEST_ADMIN_URL!;
}

/** A new database on the test command's server, a copy of its migrated template; no connection kept. */
export async function cloneTemplate(): Promise<ClonedDatabase> {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  // Named after the run, so the test command drops it when a killed run left it behind.
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
  const drop = async () => {
    const cleanup = new pg.Client({ connectionString: adminUrl() });
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    await cleanup.end();
  };
  return { url: url.toString(), name, drop };
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const database = await cloneTemplate();
  const pool = await openPool(database.url, { maxPoolSize: 10 });
  const drop = async () => {
    await pool.end();
    await database.drop();
  };
  return { url: database.url, name: database.name, pool, drop };
}
