// examples/compose-several-containers.yml (docs/OPERATIONS.md, "Running on managed PostgreSQL with
// several containers") and the drill that runs its layout (drills/several-containers.ts) say the same
// thing: every Kassa variable the compose file sets is one src/config.ts reads, the commands per role
// are the drill's, and PgBouncer's settings are the drill's (test/helpers/pgbouncer.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const compose = read('examples/compose-several-containers.yml');
const config = read('src/config.ts');
const drill = read('drills/several-containers.ts');
const pgbouncerHelper = read('test/helpers/pgbouncer.ts');

/** The `KEY: value` lines of the compose file's environment blocks (the services' and the x-kassa anchor's). */
function environment(): Map<string, string> {
  const found = new Map<string, string>();
  const lines = compose.split('\n');
  let indent: number | null = null;
  for (const line of lines) {
    const opened = /^(\s*)environment:/.exec(line);
    if (opened) {
      indent = opened[1]!.length;
      continue;
    }
    if (indent === null || line.trim() === '' || line.trim().startsWith('#')) continue;
    const depth = /^(\s*)/.exec(line)![1]!.length;
    if (depth <= indent) {
      indent = null;
      continue;
    }
    const entry = /^\s*([A-Z][A-Z0-9_]*):\s*(.*)$/.exec(line);
    if (entry) found.set(entry[1]!, entry[2]!.replace(/^"(.*)"$/, '$1'));
  }
  return found;
}

/** The pgbouncer.ini the compose file gives PgBouncer: `key = value` lines of its [pgbouncer] section. */
function pgbouncerIni(): Map<string, string> {
  const section = /\[pgbouncer\]\n([\s\S]*?)\n\s*pgbouncer-users:/.exec(compose)?.[1] ?? '';
  return new Map([...section.matchAll(/^\s*([a-z_]+)\s*=\s*(.*?)\s*$/gm)].map((match) => [match[1]!, match[2]!]));
}

describe('examples/compose-several-containers.yml', () => {
  it("sets only variables src/config.ts reads (PostgreSQL's own image variables aside), and a valid configuration", () => {
    const env = environment();
    const kassa = [...env.keys()].filter((name) => !name.startsWith('POSTGRES_'));
    assert.ok(kassa.length >= 8, `found ${kassa.join(', ')}`);
    for (const name of kassa) assert.match(config, new RegExp(`'${name}'`), `${name} is not read by src/config.ts`);
    for (const name of ['DATABASE_URL', 'DATABASE_SESSION_URL', 'DATABASE_STATEMENT_TIMEOUT_MS', 'KASSA_MASTER_KEY', 'KASSA_DEPOSIT_PUBLIC_KEY']) {
      assert.ok(env.has(name), `${name} is set`);
    }
    // The values with the ${…} of the shell filled in: a configuration Kassa accepts, the pooled URL apart from the session one.
    const filled = Object.fromEntries(
      kassa.map((name) => [name, env.get(name)!.replace(/\$\{([A-Z_]+):\?\}/g, (_, inner: string) => (inner.includes('KEY') ? 'ab'.repeat(32) : 'secret'))]),
    );
    const loaded = loadConfig({ ...filled, KASSA_DEPOSIT_PUBLIC_KEY: '' });
    assert.equal(new URL(loaded.databaseUrl!).host, 'pgbouncer:6432');
    assert.equal(new URL(loaded.databaseSessionUrl!).host, 'postgres:5432');
    assert.equal(loaded.databasePreparedStatements, false, 'no named prepared statements through PgBouncer 1.18');
    assert.equal(loaded.databaseStatementTimeoutMs, 5000);
  });

  it("runs the drill's commands: kassa migrate, then --api and --worker with --skip-migrate", () => {
    assert.match(compose, /command: \["migrate"\]/);
    assert.match(compose, /command: \["start", "--api", "--skip-migrate"\]/);
    assert.match(compose, /command: \["start", "--worker", "--skip-migrate"\]/);
    assert.match(drill, /part: 'api', port: apiPort, skipMigrate: true/);
    assert.match(drill, /part: 'worker', baseUrl: apiUrl, skipMigrate: true/);
  });

  it("gives PgBouncer the drill's settings: transaction mode, no reset query, the pool size, the statement timeout at connect", () => {
    const ini = pgbouncerIni();
    assert.equal(ini.get('pool_mode'), 'transaction');
    assert.equal(ini.get('server_reset_query'), '');
    assert.equal(ini.get('max_client_conn'), '200');
    assert.match(pgbouncerHelper, /'pool_mode = transaction'/);
    assert.match(pgbouncerHelper, /'server_reset_query ='/);
    assert.match(pgbouncerHelper, /'max_client_conn = 200'/);
    assert.equal(ini.get('default_pool_size'), /const PGBOUNCER_POOL_SIZE = (\d+);/.exec(drill)?.[1]);
    const timeout = /connect_query='SET statement_timeout = (\d+)'/.exec(compose)?.[1];
    assert.equal(timeout, environment().get('DATABASE_STATEMENT_TIMEOUT_MS'));
    assert.equal(timeout, /const STATEMENT_TIMEOUT_MS = ([\d_]+);/.exec(drill)?.[1]?.replaceAll('_', ''));
    assert.match(drill, /connectQuery: `SET statement_timeout = \$\{STATEMENT_TIMEOUT_MS\}`/);
  });
});
