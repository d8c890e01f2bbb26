// Requests Node's HTTP parser refuses before Koa sees them (too-large headers, malformed requests,
// timeouts), answered with the envelope instead of Node's bare status line.
import crypto from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { chunkExtensionsTooLarge, KassaError } from '../errors.ts';
import { httpError } from './errorEnvelope.ts';

/**
 * A request Node's HTTP parser refuses never reaches Koa: headers over 16 KiB, a malformed request
 * line or header, conflicting framing, a request not received within `requestTimeout`. Node would
 * answer a bare 400/408/413/431; this answers the same statuses with the envelope (docs/API.md).
 * Installed with `server.on('clientError', answerClientError)`.
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Duplex): void {
  const sent = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === 'ECONNRESET' || !socket.writable || sent) {
    socket.destroy();
    return;
  }
  let refusal: KassaError;
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    refusal = new KassaError('headers_too_large');
  } else if (error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') {
    refusal = chunkExtensionsTooLarge();
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    refusal = new KassaError('request_timeout');
  } else {
    refusal = new KassaError('malformed_request');
  }
  const answer = httpError(refusal);
  const body = JSON.stringify(answer.body);
  // The answer to a HEAD request has no body (the client would read it as a broken next response).
  const head = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
  socket.end(
    `HTTP/1.1 ${answer.status} ${http.STATUS_CODES[answer.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${crypto.randomUUID()}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${head ? '' : body}`,
  );
}
