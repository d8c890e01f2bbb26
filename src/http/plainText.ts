// One rule for the text Kassa takes in (path, query string, JSON body): Unicode without U+0000.
import type { Middleware } from 'koa';
import { type ErrorCode, KassaError, statusOf } from '../errors.ts';
import type { KassaState } from './context.ts';
import { FIELD_CODES } from './routes/shared.schema.ts';

/** U+0000 (PostgreSQL's text cannot hold it) or a lone surrogate (not Unicode, nor JSON PostgreSQL accepts). */
const isUnsafeText = (text: string): boolean => text.includes('\0') || !text.isWellFormed();

const UNSAFE_TEXT = 'must not contain U+0000 or unpaired UTF-16 surrogates';

/** The code a body field's refusal takes: the field's own code when it is a 400, else invalid_request. */
const fieldCode = (top: string): ErrorCode => {
  // Own keys only: a body's field may be called `constructor` or `__defineGetter__`.
  const code = Object.hasOwn(FIELD_CODES, top) ? FIELD_CODES[top] : undefined;
  return code !== undefined && statusOf(code) === 400 ? code : 'invalid_request';
};

/**
 * The first unsafe string (value or key) in a parsed JSON body, as the error naming its field. A
 * loop over an explicit stack, not recursion: a body may nest thousands of levels deep (64 KiB of
 * brackets), which validation refuses afterwards with a 400, never a stack overflow here.
 */
export function unsafeInBody(body: unknown): KassaError | null {
  const pending: Array<{ value: unknown; path: string; top: string }> = [{ value: body, path: '', top: '' }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, path, top } = next;
    if (typeof value === 'string') {
      if (isUnsafeText(value)) {
        return path === ''
          ? new KassaError('invalid_json', `The body ${UNSAFE_TEXT}.`)
          : new KassaError(fieldCode(top), `${path} ${UNSAFE_TEXT}.`, { param: path });
      }
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) {
        pending.push({ value: value[index], path: path === '' ? `[${index}]` : `${path}[${index}]`, top });
      }
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (const [key] of entries) {
        if (!isUnsafeText(key)) continue;
        return path === ''
          ? new KassaError('invalid_request', `Body field names ${UNSAFE_TEXT}.`)
          : new KassaError(fieldCode(top), `${path} keys ${UNSAFE_TEXT}.`, { param: path });
      }
      for (let index = entries.length - 1; index >= 0; index -= 1) {
        const [key, item] = entries[index]!;
        pending.push({ value: item, path: path === '' ? key : `${path}.${key}`, top: path === '' ? key : top });
      }
    }
  }
  return null;
}

/** `%xx` escapes decoded, or null when they are not UTF-8 (a lone surrogate sent as its three bytes included). */
function decoded(text: string, plusIsSpace: boolean): string | null {
  try {
    return decodeURIComponent(plusIsSpace ? text.replaceAll('+', ' ') : text);
  } catch {
    return null;
  }
}

/**
 * One rule for every route (the merchant API, the checkout's, the sandbox's): text Kassa takes in —
 * the path, each query parameter's name and value, every string and key of a JSON body — is
 * Unicode without U+0000. Such text would otherwise reach PostgreSQL, which refuses it (a 500), or
 * be silently replaced (U+FFFD). Refused with 400 in the envelope: a body field with its own code
 * and its path as param (`metadata.color`), a query parameter as invalid_request with its name.
 * Runs after `jsonBody`, before the routes.
 */
export function plainText(): Middleware<KassaState> {
  return async (ctx, next) => {
    for (const segment of ctx.path.split('/')) {
      const text = decoded(segment, false);
      if (text === null || isUnsafeText(text)) throw new KassaError('invalid_request', `The request path must be percent-encoded UTF-8 and ${UNSAFE_TEXT}.`);
    }
    if (ctx.querystring !== '') {
      for (const pair of ctx.querystring.split('&')) {
        const at = pair.indexOf('=');
        const name = decoded(at < 0 ? pair : pair.slice(0, at), true);
        const value = at < 0 ? '' : decoded(pair.slice(at + 1), true);
        if (name === null || isUnsafeText(name))
          throw new KassaError('invalid_request', `Query parameter names must be percent-encoded UTF-8 and ${UNSAFE_TEXT}.`);
        if (value === null || isUnsafeText(value))
          throw new KassaError('invalid_request', `${name} must be percent-encoded UTF-8 and ${UNSAFE_TEXT}.`, { param: name });
      }
    }
    const found = ctx.request.body === undefined ? null : unsafeInBody(ctx.request.body);
    if (found) throw found;
    await next();
  };
}
