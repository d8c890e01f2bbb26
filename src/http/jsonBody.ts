// The JSON API's strict body reader (docs/ARCHITECTURE.md, Two body readers): application/json in
// UTF-8 only, at most 64 KiB after decompression, invalid UTF-8 refused rather than replaced.
import type http from 'node:http';
import zlib from 'node:zlib';
import type { Middleware } from 'koa';
import { bodyNotUtf8, bodyUnreadable, KassaError, unsupportedCharset, unsupportedEncoding } from '../errors.ts';
import type { KassaState } from './context.ts';

const BODY_LIMIT_BYTES = 64 * 1024;

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

const PARSED_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const tooLarge = () => new KassaError('payload_too_large');
const invalidJson = () => new KassaError('invalid_json');

/** The body's bytes (decompressed when gzip/deflate), at most BODY_LIMIT_BYTES of them. */
async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const coding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  let source: NodeJS.ReadableStream = req;
  if (coding === 'gzip' || coding === 'x-gzip') source = req.pipe(zlib.createGunzip());
  else if (coding === 'deflate') source = req.pipe(zlib.createInflate());
  else if (coding !== 'identity') throw unsupportedEncoding(coding);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        req.unpipe();
        req.pause();
        throw tooLarge();
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof KassaError) throw error;
    throw bodyUnreadable();
  }
  return Buffer.concat(chunks);
}

/**
 * Bodies must be JSON (415 otherwise, also for a charset other than UTF-8), at most 64 KiB (413),
 * well-formed UTF-8 JSON with an object or array at the top (400 invalid_json; invalid UTF-8 is
 * refused, never replaced by U+FFFD). `except`: paths whose routes read their own bodies (the
 * dashboard's HTML forms, src/http/routes/dashboardSteps.ts; a payment link's page, checkoutLinks.ts; a portal's forms, checkoutPortal.ts).
 */
export function jsonBody(options: { except?: (path: string) => boolean } = {}): Middleware<KassaState> {
  return async (ctx, next) => {
    if (PARSED_METHODS.includes(ctx.method) && hasBody(ctx.headers) && !options.except?.(ctx.path)) {
      if (!ctx.is('application/json')) {
        throw new KassaError('unsupported_media_type');
      }
      const charset = ctx.request.charset.toLowerCase();
      if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
        throw unsupportedCharset(charset);
      }
      const declared = Number(ctx.get('Content-Length'));
      if (Number.isFinite(declared) && declared > BODY_LIMIT_BYTES) throw tooLarge();
      let text: string;
      try {
        text = UTF8.decode(await readBody(ctx.req));
      } catch (error) {
        if (error instanceof KassaError) throw error;
        throw bodyNotUtf8();
      }
      if (!/^[\x20\x09\x0a\x0d]*[[{]/.test(text) && text.trim() !== '') throw invalidJson();
      try {
        ctx.request.body = text.trim() === '' ? {} : JSON.parse(text);
      } catch {
        throw invalidJson();
      }
    }
    await next();
  };
}
