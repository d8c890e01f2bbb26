// The floor of a Node HTTP read, for bench/api: a bare `node:http` server with a `pg` pool (as
// many connections as Kassa's) answering GET /v1/payments/{id} with the payment's row, read by
// primary key with a prepared statement, as JSON. No framework, no auth, no validation, no
// logging: what any Node service pays for an HTTP request and one round trip to PostgreSQL.
//   DATABASE_URL=… PORT=… node bench/lib/bare-server.ts   (prints "listening" when ready)
import http from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
const READ =
  'select id, store_id, status, amount::text as amount, currency, coin_symbol, coin_amount::text as coin_amount, metadata, created_at, expires_at from payments where id = $1';
const PREFIX = '/v1/payments/';

const server = http.createServer((req, res) => {
  const id = req.url?.startsWith(PREFIX) ? req.url.slice(PREFIX.length) : '';
  pool.query({ name: 'bare_payment', text: READ, values: [id] }).then(
    (result) => {
      const row = result.rows[0];
      const body = JSON.stringify(row ?? { error: 'not found' });
      res.writeHead(row ? 200 : 404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    },
    (error: Error) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(error.message);
    },
  );
});
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => {
  server.close();
  void pool.end().finally(() => process.exit(0));
});
