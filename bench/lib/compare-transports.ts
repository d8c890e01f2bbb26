// Which client should the load driver use? Runs both transports of bench/lib/load.ts against a
// trivial HTTP server in a child process and prints throughput and the driver's CPU per request.
// The cheaper client steals less of the shared cores from the service under test.
//   node bench/lib/compare-transports.ts [--duration 5]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { runClosedLoop, type Transport } from './load.ts';
import { formatNumber, percentile, sortedCopy, textTable } from './stats.ts';

const { values } = parseArgs({ options: { duration: { type: 'string', default: '5' } } });
const durationMs = Number(values.duration) * 1000;

const SERVER = `
const http = require('node:http');
const body = JSON.stringify({ id: '00000000-0000-0000-0000-000000000000', status: 'pending', padding: 'x'.repeat(600) });
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(body); });
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;
const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
const baseUrl = `http://127.0.0.1:${chunk.toString().trim()}`;

const rows: string[][] = [];
for (const transport of ['http', 'fetch', 'http', 'fetch'] as Transport[]) {
  for (const concurrency of [8, 32]) {
    const result = await runClosedLoop({
      baseUrl,
      concurrency,
      durationMs,
      transport,
      next: () => ({ method: 'POST', path: '/x', headers: { 'content-type': 'application/json', authorization: 'Bearer abc' }, body: '{"amount":"10"}' }),
    });
    const sorted = sortedCopy(result.latenciesMs);
    rows.push([
      transport,
      String(concurrency),
      formatNumber(result.requestsPerSecond),
      formatNumber(percentile(sorted, 50)),
      formatNumber(percentile(sorted, 99)),
      String(result.errors),
      formatNumber((result.driverCpuMs * 1000) / result.completed),
    ]);
  }
}
child.kill();
process.stdout.write(`${textTable(['transport', 'conc', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'driver CPU µs/req'], rows)}\n`);
