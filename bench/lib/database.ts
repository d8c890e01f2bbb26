// The benchmarks' database lifecycle, shared by bench/api.ts and bench/chain.ts: the server of
// DATABASE_URL when set (its role must be allowed to create databases), otherwise the embedded
// PostgreSQL; a bench database of its own on it, dropped and created afresh; and the teardown.
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { openDatabaseServer, type DatabaseServer } from '../../src/db/embedded.ts';
import type { Logger } from '../../src/log.ts';

export interface BenchDatabase {
  /** Where it runs, for the report: 'DATABASE_URL' or 'embedded'. */
  source: 'DATABASE_URL' | 'embedded';
  server: DatabaseServer;
  /** A connection to the server's default database (creates and drops the bench database). */
  admin: pg.Client;
  /** The bench database's URL. */
  url: string;
  /** Drops the bench database if it exists and creates it empty. */
  recreate(): Promise<void>;
  /** Drops the bench database (unless `keep`), closes the admin connection and stops the server. */
  close(keep: boolean): Promise<void>;
}

export async function openBenchDatabase(name: string, root: string, log: Logger): Promise<BenchDatabase> {
  const adminUrlFromEnv = process.env.DATABASE_URL?.trim() || null;
  const server = await openDatabaseServer({ ...loadConfig({ ...process.env, DATABASE_URL: adminUrlFromEnv ?? '' }, root), databaseUrl: adminUrlFromEnv }, log);
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  const admin = new pg.Client({ connectionString: server.url });
  admin.on('error', () => {});
  await admin.connect();
  const drop = `drop database if exists ${pg.escapeIdentifier(name)} with (force)`;
  return {
    source: adminUrlFromEnv ? 'DATABASE_URL' : 'embedded',
    server,
    admin,
    url: url.toString(),
    recreate: async () => {
      await admin.query(drop);
      await admin.query(`create database ${pg.escapeIdentifier(name)}`);
    },
    close: async (keep) => {
      if (!keep) await admin.query(drop).catch(() => {});
      await admin.end().catch(() => {});
      await server.stop().catch(() => {});
    },
  };
}
