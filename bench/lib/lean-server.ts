// The floor of this stack for Kassa's own work, for bench/api: a bare `node:http` server with a `pg`
// pool (as many connections as Kassa's) that answers POST /v1/payments and GET /v1/payments/{id} by
// sending exactly the statements Kassa sends for them (recorded from Kassa's code by bench/api, as for
// the pgbench "same SQL" baseline), as named prepared statements, with fresh per-request values (the
// idempotency key, the payment id, the deposit address from the derivation index the first statement
// takes), and answers with the first statement's row as JSON. No framework, validation, token
// verification, rate limit or logging: the same SQL work done the leanest way this stack allows.
//   DATABASE_URL=… PORT=… STATEMENTS_FILE=… node bench/lib/lean-server.ts   (prints "listening")
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import pg from 'pg';
import type { LeanStatement, LeanValue } from './replay.ts';

const statements = JSON.parse(fs.readFileSync(process.env.STATEMENTS_FILE!, 'utf8')) as { create: LeanStatement[]; retrieve: LeanStatement[] };
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
const PREFIX = '/v1/payments/';

const md5 = (text: string): string => crypto.createHash('md5').update(text).digest('hex');

/** The per-request values the recorded ones stand for (bench/api's substitutions, by name). */
function fill(value: LeanValue, values: Map<string, string>): string | Buffer | null {
  if (value === null) return null;
  if ('text' in value) return value.text;
  if ('hex' in value) return Buffer.from(value.hex, 'hex');
  let text = '';
  for (const part of value.parts) {
    if (typeof part === 'string') text += part;
    else {
      const filled = values.get(part.value);
      if (filled === undefined) throw new Error(`no value for ${part.value}`);
      text += filled;
    }
  }
  return text;
}

/** What the derivation index decides: the deposit's addresses, as the pgbench replay computes them. */
function fromIndex(values: Map<string, string>, index: string): void {
  values.set('index', index);
  values.set('address', `0:${md5(index)}${md5(`a${index}`)}`);
  values.set('friendly', `UQ${md5(index)}`);
  values.set('jetton_wallet', `0:${md5(`w${index}`)}${md5(`b${index}`)}`);
}

async function replay(list: LeanStatement[], prefix: string, values: Map<string, string>): Promise<unknown> {
  const client = await pool.connect();
  try {
    let first: unknown;
    for (const [position, statement] of list.entries()) {
      const result = await client.query({
        name: `${prefix}_${position}`,
        text: statement.sql,
        values: statement.values.map((value) => fill(value, values)),
      });
      if (position === 0) first = result.rows[0];
      if (statement.gset) fromIndex(values, String(result.rows[0]?.[statement.gset]));
    }
    return first;
  } finally {
    client.release();
  }
}

function answer(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body ?? { error: 'not found' });
  res.writeHead(body ? status : 404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = http.createServer((req, res) => {
  const failed = (error: Error) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(error.message);
  };
  if (req.method === 'POST') {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const key = req.headers['x-idempotency-key'];
      const values = new Map([
        ['key', typeof key === 'string' ? key : crypto.randomUUID()],
        ['payment', crypto.randomUUID()],
      ]);
      replay(statements.create, 'lean_create', values).then((row) => answer(res, 201, row), failed);
    });
    return;
  }
  const id = req.url?.startsWith(PREFIX) ? req.url.slice(PREFIX.length) : '';
  replay(statements.retrieve, 'lean_retrieve', new Map([['payment', id]])).then((row) => answer(res, 200, row), failed);
});
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => {
  server.close();
  void pool.end().finally(() => process.exit(0));
});
