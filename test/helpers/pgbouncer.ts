// A private PgBouncer (Debian's package: 1.18; .ci/run installs it) in transaction mode in front of
// a test database, as a managed PostgreSQL's "pooled" URL: a process of this test file's own, on a
// free port of 127.0.0.1, its ini file in a temporary directory; stopped by `stop`; frozen (SIGSTOP)
// by `freeze` and let go by `thaw`. examples/compose-several-containers.yml sets the same pgbouncer.ini keys.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './servers.ts';

export interface PgBouncer {
  /** `databaseUrl` with PgBouncer's host and port: the same database, through the pooler. */
  url: string;
  /** What PgBouncer logged so far. */
  log(): string;
  /** Stops the process (SIGSTOP): its connections stay open and new ones are queued by the kernel, nothing is answered. */
  freeze(): void;
  /** Lets it run again (SIGCONT). */
  thaw(): void;
  stop(): Promise<void>;
}

const PGBOUNCER = process.env.PGBOUNCER_PATH ?? '/usr/sbin/pgbouncer';

/**
 * Starts PgBouncer with pool_mode=transaction and auth_type=trust in front of `databaseUrl`'s server
 * (it logs in there with that URL's user and password). PgBouncer refuses to run as root: as root it
 * runs as the `postgres` user (the embedded PostgreSQL's). `poolSize`: server connections per
 * database and user (default_pool_size). `connectQuery`: run on each server connection PgBouncer
 * opens (connect_query), e.g. `SET statement_timeout = 5000`.
 */
export async function startPgBouncer(databaseUrl: string, options: { poolSize?: number; connectQuery?: string } = {}): Promise<PgBouncer> {
  if (!fs.existsSync(PGBOUNCER)) throw new Error(`PgBouncer is not installed (${PGBOUNCER}): apt-get install -y pgbouncer (.ci/run does)`);
  const target = new URL(databaseUrl);
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-pgbouncer-'));
  fs.chmodSync(dir, 0o755);
  const user = decodeURIComponent(target.username);
  const connection = [
    `host=${target.hostname}`,
    `port=${target.port || '5432'}`,
    `user=${user}`,
    ...(target.password ? [`password=${decodeURIComponent(target.password)}`] : []),
    ...(options.connectQuery ? [`connect_query='${options.connectQuery.replaceAll("'", "''")}'`] : []),
  ].join(' ');
  fs.writeFileSync(path.join(dir, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 });
  fs.writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = ${connection}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize ?? 5}`,
      'max_client_conn = 200',
      'server_reset_query =',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const args = [...(process.getuid?.() === 0 ? ['-u', 'postgres'] : []), path.join(dir, 'pgbouncer.ini')];
  const child: ChildProcess = spawn(PGBOUNCER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Listening once a connection is accepted.
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`PgBouncer exited at start: ${output}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`PgBouncer did not listen on ${port} within 10 s: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    log: () => output,
    freeze: () => {
      child.kill('SIGSTOP');
    },
    thaw: () => {
      child.kill('SIGCONT');
    },
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
        await exited;
        clearTimeout(timer);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
