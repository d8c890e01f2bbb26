// The fuzz drill's requests that never reach Koa, sent over a bare socket (lib.ts rawSocket): fixed
// ones Node's HTTP parser refuses, and generated garbage bytes. drills/fuzz.ts sends them and checks
// the answers.
import fc from 'fast-check';
import { latin1 } from './requests.ts';

/** Requests Node's HTTP parser refuses: each must still get an HTTP answer (400, 413, 414, 431…) with X-Request-Id and nosniff. */
export const MALFORMED = [
  'GARBAGE\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n',
  'POST /v1/payments HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
  'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n',
  `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
  `GET /${'p'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
  `HEAD /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
  'GET /he\u0000althz HTTP/1.1\r\nHost: x\r\n\r\n',
  'POST /v1/payments HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n',
  'FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nHo st: x\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n',
  'GET /healthz HTTP/1.1\r\n\r\n',
  'GET http://evil.example/healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  'GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  'GET /healthz HTTP/1.0\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked, identity\r\n\r\n',
];

/** Random latin-1 text after nothing, a method, or a request line (with or without headers). */
export const garbageArb: fc.Arbitrary<string> = fc
  .tuple(latin1(1, 200), fc.constantFrom('', 'GET ', 'POST /v1/payments HTTP/1.1\r\n', 'GET / HTTP/1.1\r\nHost: x\r\n'))
  .map(([text, prefix]) => `${prefix}${text}\r\n\r\n`);
