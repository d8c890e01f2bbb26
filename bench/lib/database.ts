// The benchmarks' database lifecycle, shared by bench/api.ts and bench/chain.ts: the server of
// DATABASE_URL when set (its role must be allowed to create databases), otherwise the embedded
// PostgreSQL; a bench database of its own on it, dropped, created and migrated afresh; and the
// teardown, also on SIGINT/SIGTERM.
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { openDatabaseServer, type DatabaseServer } from '../../src/db/embedded.ts';
import { migrate } from '../../src/db/migrate.ts';
import type { Logger } from '../../src/log.ts';

export interface BenchDatabase {
  /** Where it runs, for the report: 'DATABASE_URL' or 'embedded'. */
  source: 'DATABASE_URL' | 'embedded';
  server: DatabaseServer;
  /** A connection to the server's default database (creates and drops the bench database). */
  admin: pg.Client;
  /** The bench database's URL. */
  url: string;
  /** Drops the bench database if it exists, creates it and migrates it. */
  fresh(): Promise<void>;
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
    fresh: async () => {
      await admin.query(drop);
      await admin.query(`create database ${pg.escapeIdentifier(name)}`);
      await migrate(url.toString(), log);
    },
    close: async (keep) => {
      if (!keep) await admin.query(drop).catch(() => {});
      await admin.end().catch(() => {});
      await server.stop().catch(() => {});
    },
  };
}

/** On SIGINT or SIGTERM, runs the bench's teardown (`cleanUp`, which ends with close()) and exits 130. */
export function teardownOnSignals(cleanUp: () => Promise<void>): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`bench: ${signal}: stopping\n`);
      void cleanUp().finally(() => process.exit(130));
    });
  }
}
