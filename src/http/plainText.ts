// One rule for the text Kassa takes in (path, query string, JSON body): Unicode without U+0000.
import type { Context, Middleware } from 'koa';
import { type ErrorCode, statusOf, type KassaError, unsafeText } from '../errors.ts';
import type { KassaState } from './context.ts';
import { codeAt } from './validate.ts';

/** U+0000 (PostgreSQL's text cannot hold it) or a lone surrogate (not Unicode, nor JSON PostgreSQL accepts). */
const isUnsafeText = (text: string): boolean => text.includes('\0') || !text.isWellFormed();

/**
 * The code a body field's refusal takes: its code on the route's body schema (`codeOf`, from the
 * field's path segments) when that is a 400, else invalid_request.
 */
const fieldCode = (codeOf: ((segments: readonly string[]) => ErrorCode | undefined) | undefined, segments: readonly string[]): ErrorCode => {
  const code = codeOf?.(segments);
  return code !== undefined && statusOf(code) === 400 ? code : 'invalid_request';
};

/**
 * The first unsafe string (value or key) in a parsed JSON body, as the error naming its field
 * (with the code `codeOf` gives its path). A loop over an explicit stack, not recursion: a body may
 * nest thousands of levels deep (64 KiB of brackets), which validation refuses afterwards with a
 * 400, never a stack overflow here.
 */
export function unsafeInBody(body: unknown, codeOf?: (segments: readonly string[]) => ErrorCode | undefined): KassaError | null {
  // `trail`: the keys and indexes from the body down to the value, last first (read only on a refusal).
  type Trail = { key: string; up: Trail } | null;
  const segments = (trail: Trail): string[] => {
    const keys: string[] = [];
    for (let at = trail; at !== null; at = at.up) keys.push(at.key);
    return keys.reverse();
  };
  const pending: Array<{ value: unknown; path: string; trail: Trail }> = [{ value: body, path: '', trail: null }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, path, trail } = next;
    if (typeof value === 'string') {
      if (isUnsafeText(value)) {
        return path === '' ? unsafeText('The body', { code: 'invalid_json' }) : unsafeText(path, { code: fieldCode(codeOf, segments(trail)), param: path });
      }
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) {
        pending.push({ value: value[index], path: path === '' ? `[${index}]` : `${path}[${index}]`, trail: { key: String(index), up: trail } });
      }
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (const [key] of entries) {
        if (!isUnsafeText(key)) continue;
        return path === '' ? unsafeText('Body field names') : unsafeText(`${path} keys`, { code: fieldCode(codeOf, segments(trail)), param: path });
      }
      for (let index = entries.length - 1; index >= 0; index -= 1) {
        const [key, item] = entries[index]!;
        pending.push({ value: item, path: path === '' ? key : `${path}.${key}`, trail: { key, up: trail } });
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
 * (on the body schema the matched route validates against: `bodySchema`) and its path as param
 * (`metadata.color`), a query parameter as invalid_request with its name. Runs after `jsonBody`,
 * before the routes.
 */
export function plainText(options: { bodySchema?: (ctx: Context) => object | undefined } = {}): Middleware<KassaState> {
  return async (ctx, next) => {
    for (const segment of ctx.path.split('/')) {
      const text = decoded(segment, false);
      if (text === null || isUnsafeText(text)) throw unsafeText('The request path', { percentEncoded: true });
    }
    if (ctx.querystring !== '') {
      for (const pair of ctx.querystring.split('&')) {
        const at = pair.indexOf('=');
        const name = decoded(at < 0 ? pair : pair.slice(0, at), true);
        const value = at < 0 ? '' : decoded(pair.slice(at + 1), true);
        if (name === null || isUnsafeText(name)) throw unsafeText('Query parameter names', { percentEncoded: true });
        if (value === null || isUnsafeText(value)) throw unsafeText(name, { percentEncoded: true, param: name });
      }
    }
    const codeOf = (segments: readonly string[]) => {
      const schema = options.bodySchema?.(ctx);
      return schema && codeAt(schema, segments);
    };
    const found = ctx.request.body === undefined ? null : unsafeInBody(ctx.request.body, codeOf);
    if (found) throw found;
    await next();
  };
}
