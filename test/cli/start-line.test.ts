// What a new user sees from `kassa start`: a start line naming every URL and the next command, and
// request lines for their own requests, not for the sandbox's chain API (the watcher polls it).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SANDBOX_JSON_RPC_PATH } from '../../src/chain/sandbox/path.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

describe('kassa start, as a new user sees it', () => {
  let db: TestDatabase;
  let child: ReturnType<typeof spawn>;
  let output = '';
  const lines = (): LogLine[] =>
    output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);
  let started: LogLine;

  before(async () => {
    db = await createTestDatabase();
    child = spawn(process.execPath, [CLI, 'start'], { env: { PATH: process.env.PATH ?? '', DATABASE_URL: db.url, PORT: '0', LOG_LEVEL: 'info' } });
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    started = await new Promise<LogLine>((resolve, reject) => {
      const poll = setInterval(() => {
        const line = lines().find((candidate) => candidate.msg === 'kassa started');
        if (line) {
          clearInterval(poll);
          resolve(line);
        }
      }, 50);
      child.once('exit', () => {
        clearInterval(poll);
        reject(new Error(`kassa exited early:\n${output}`));
      });
    });
  });
  after(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    await db.drop();
  });

  it('names the API, checkout, OpenAPI and metrics URLs and the next command', async () => {
    const url = started.url as string;
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(started.apiUrl, url);
    assert.equal(started.checkoutUrl, `${url}/pay/{payment id}`);
    assert.equal(started.openapiUrl, `${url}/openapi.json`);
    assert.equal(started.metricsUrl, `${url}/metrics`);
    assert.equal(started.next, 'npm run -s kassa -- store create --name "My shop"');
    for (const target of [started.openapiUrl, started.metricsUrl]) {
      assert.equal((await fetch(target as string)).status, 200, `${target} answers`);
    }
  });

  it('logs requests at info, except the sandbox chain API ones (debug)', async () => {
    const url = started.url as string;
    const chain = await fetch(`${url}${SANDBOX_JSON_RPC_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 1, jsonrpc: '2.0', method: 'getMasterchainInfo', params: {} }),
    });
    assert.equal(chain.status, 200);
    await chain.arrayBuffer();
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    for (let i = 0; i < 50 && !lines().some((line) => line.msg === 'request' && line.path === '/healthz'); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const requests = lines().filter((line) => line.msg === 'request');
    assert.ok(
      requests.some((line) => line.path === '/healthz' && line.level === 30),
      output,
    );
    assert.deepEqual(
      requests.filter((line) => String(line.path).startsWith('/sandbox/toncenter')),
      [],
      'no info line for the chain API',
    );
  });
});
