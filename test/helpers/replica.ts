// A private PostgreSQL primary and a streaming replica of it (Debian's PostgreSQL 15 binaries in
// /usr/lib/postgresql/15/bin; .ci/run installs `postgresql-15` when missing; its service is not used),
// for DATABASE_REPORTING_URL (issue 46 item 4) and the several-containers lane. Both run in one
// temporary directory on free ports of 127.0.0.1, trust authentication, one database `kassa`
// migrated with Kassa's own migrations before the replica is copied (pg_basebackup -R: it streams
// from the primary from then on). As root the binaries run as the `postgres` user (PostgreSQL
// refuses root), as test/helpers/pgbouncer.ts runs PgBouncer. About 6 s to start (most of it the migrations).
//
//   const pair = await startReplicatedPostgres();
//   pair.primaryUrl, pair.replicaUrl      // postgres://kassa@127.0.0.1:PORT/kassa
//   await pair.pauseReplay();             // the replica stops applying what it receives
//   await pair.resumeReplay(); await pair.caughtUp();
//   await pair.stop();                    // both servers stopped, the directory removed
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { migrate } from '../../src/db/migrate.ts';
import { freePort } from './servers.ts';

export interface ReplicatedPostgres {
  /** The primary's database `kassa` (superuser `kassa`, no password): migrated. */
  primaryUrl: string;
  /** The same database on the streaming replica (read-only: in recovery). */
  replicaUrl: string;
  /** Stops the replica applying the WAL it receives (pg_wal_replay_pause): what the primary writes next is not seen there until resumeReplay. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Resolves once the replica has replayed everything the primary had written when called (10 s at most). */
  caughtUp(): Promise<void>;
  stop(): Promise<void>;
}

const BIN = process.env.POSTGRESQL_BIN ?? '/usr/lib/postgresql/15/bin';
const USER = 'kassa';
const DATABASE = 'kassa';

/** The `postgres` user's ids when running as root (PostgreSQL refuses to run as root), else null. */
function owner(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()));
  return { uid: uid!, gid: gid! };
}

function run(program: string, args: string[], as: { uid: number; gid: number } | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(BIN, program), args, { stdio: ['ignore', 'pipe', 'pipe'], ...(as ?? {}) });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${program} failed (exit ${code}): ${output.trim().split('\n').slice(-5).join(' ')}`)),
    );
  });
}

const urlOf = (port: number) => `postgres://${USER}@127.0.0.1:${port}/${DATABASE}`;

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Starts the primary, migrates it, copies it to a streaming replica and starts that; both stopped by `stop`. */
export async function startReplicatedPostgres(): Promise<ReplicatedPostgres> {
  if (!fs.existsSync(path.join(BIN, 'pg_basebackup'))) {
    throw new Error(`PostgreSQL 15 is not installed (${BIN}): apt-get install -y postgresql-15 (.ci/run does)`);
  }
  const as = owner();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-replica-'));
  fs.chmodSync(dir, 0o755);
  if (as) fs.chownSync(dir, as.uid, as.gid);
  const primary = path.join(dir, 'primary');
  const replica = path.join(dir, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const started: string[] = [];
  const stopServer = (data: string) => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'], as).catch(() => {});
  const stop = async () => {
    for (const data of started.reverse()) await stopServer(data);
    started.length = 0;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await run('initdb', ['-D', primary, '-U', USER, '--auth=trust', '--encoding=UTF8', '--no-locale', '--no-sync'], as);
    // Test settings: no fsync (a lost test server is started afresh); the replica copies these.
    fs.appendFileSync(
      path.join(primary, 'postgresql.conf'),
      ["listen_addresses = '127.0.0.1'", `unix_socket_directories = '${dir}'`, 'fsync = off', 'full_page_writes = off', 'max_connections = 100', ''].join('\n'),
    );
    const startServer = async (data: string, port: number) => {
      await run('pg_ctl', ['-D', data, '-l', path.join(dir, `${path.basename(data)}.log`), '-o', `-p ${port}`, '-w', '-t', '30', 'start'], as);
      started.push(data);
    };
    await startServer(primary, primaryPort);
    await query(`postgres://${USER}@127.0.0.1:${primaryPort}/postgres`, `create database ${DATABASE}`);
    await migrate(urlOf(primaryPort), pino({ level: 'silent' }));
    // -R writes primary_conninfo and standby.signal: the copy starts as a streaming replica.
    await run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', USER, '-D', replica, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'], as);
    await startServer(replica, replicaPort);
  } catch (error) {
    await stop();
    throw error;
  }
  const primaryUrl = urlOf(primaryPort);
  const replicaUrl = urlOf(replicaPort);
  return {
    primaryUrl,
    replicaUrl,
    pauseReplay: async () => {
      await query(replicaUrl, 'select pg_wal_replay_pause()');
      // Paused once the startup process says so (it finishes the record it is applying first).
      for (let i = 0; i < 200; i += 1) {
        const [row] = await query<{ state: string }>(replicaUrl, 'select pg_get_wal_replay_pause_state() as state');
        if (row?.state === 'paused') return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error('the replica did not pause its replay within 5 s');
    },
    resumeReplay: async () => {
      await query(replicaUrl, 'select pg_wal_replay_resume()');
    },
    caughtUp: async () => {
      const [target] = await query<{ lsn: string }>(primaryUrl, 'select pg_current_wal_lsn()::text as lsn');
      for (let i = 0; i < 400; i += 1) {
        const [row] = await query<{ done: boolean }>(replicaUrl, `select pg_last_wal_replay_lsn() >= '${target!.lsn}'::pg_lsn as done`);
        if (row?.done) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`the replica did not replay up to ${target!.lsn} within 10 s`);
    },
    stop,
  };
}
