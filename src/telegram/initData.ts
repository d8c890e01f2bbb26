// Telegram's init data, checked as Telegram documents for third parties ("Validating data for
// third-party use", core.telegram.org/bots/webapps): Telegram signs the launch parameters with its
// own Ed25519 key, so Kassa needs the bot's numeric id and Telegram's public key — never the bot's
// token. A plain function of the text, the bot id, the key and the time; no I/O.
import crypto from 'node:crypto';

export { TELEGRAM_PUBLIC_KEYS } from '../config.ts';

/**
 * How old init data may be (its `auth_date`) when the checkout sends it. Telegram leaves the bound
 * to the receiver; the checkout posts it as the Mini App opens (a reopened Mini App, as TON Connect's
 * return does, brings fresh data), so an hour is ample and keeps a leaked string from naming its user
 * as the payer of another day's payment.
 */
const INIT_DATA_MAX_AGE_SECONDS = 3600;
/** Clock skew tolerated for an auth_date in the future. */
const FUTURE_SKEW_SECONDS = 60;
/** Init data is a query string of a few hundred bytes; Telegram's clients keep it well under this. */
const INIT_DATA_MAX_LENGTH = 8192;

export interface TelegramUser {
  id: number;
  /** Without the @; null when the user has none. */
  username: string | null;
}

type InitDataCheck = { ok: true; user: TelegramUser; startParam: string | null; authDate: Date } | { ok: false; problem: 'malformed' | 'signature' | 'stale' };

/** The string Telegram signs: `<bot_id>:WebAppData\n` then every field but `hash` and `signature`, as key=value, sorted by key, joined by \n. */
export function dataCheckString(botId: number | string, fields: ReadonlyMap<string, string>): string {
  const lines = [...fields]
    .filter(([key]) => key !== 'hash' && key !== 'signature')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`);
  return `${botId}:WebAppData\n${lines.join('\n')}`;
}

/** The fields of init data (URL-decoded); null when a key repeats or the text is not init data. */
function initDataFields(text: string): Map<string, string> | null {
  if (text.length === 0 || text.length > INIT_DATA_MAX_LENGTH) return null;
  const fields = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(text)) {
    if (fields.has(key)) return null;
    fields.set(key, value);
  }
  return fields;
}

function publicKey(hex: string): crypto.KeyObject {
  return crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(hex, 'hex').toString('base64url') }, format: 'jwk' });
}

/** The user of init data Telegram signed for `botId`, no older than `maxAgeSeconds` at `now`. */
export function checkInitData(
  text: string,
  { botId, publicKeyHex, now, maxAgeSeconds = INIT_DATA_MAX_AGE_SECONDS }: { botId: number; publicKeyHex: string; now: Date; maxAgeSeconds?: number },
): InitDataCheck {
  const fields = initDataFields(text);
  const signature = fields?.get('signature');
  if (!fields || signature === undefined || !/^[A-Za-z0-9_-]{86}={0,2}$/.test(signature)) return { ok: false, problem: 'malformed' };
  const bytes = Buffer.from(signature.replace(/=+$/, ''), 'base64url');
  if (bytes.length !== 64) return { ok: false, problem: 'malformed' };
  // The algorithm is pinned: an Ed25519 key object, verified with no digest (Ed25519 hashes itself).
  if (!crypto.verify(null, Buffer.from(dataCheckString(botId, fields), 'utf8'), publicKey(publicKeyHex), bytes)) return { ok: false, problem: 'signature' };
  // Signed by Telegram from here on: what it says is what Telegram says.
  const authDate = Number(fields.get('auth_date'));
  if (!Number.isSafeInteger(authDate) || authDate <= 0) return { ok: false, problem: 'malformed' };
  const age = now.getTime() / 1000 - authDate;
  if (age > maxAgeSeconds || age < -FUTURE_SKEW_SECONDS) return { ok: false, problem: 'stale' };
  let user: unknown;
  try {
    user = JSON.parse(fields.get('user') ?? 'null');
  } catch {
    return { ok: false, problem: 'malformed' };
  }
  if (typeof user !== 'object' || user === null) return { ok: false, problem: 'malformed' };
  const { id, username } = user as { id?: unknown; username?: unknown };
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) return { ok: false, problem: 'malformed' };
  const name = typeof username === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(username) ? username : null;
  return { ok: true, user: { id, username: name }, startParam: fields.get('start_param') ?? null, authDate: new Date(authDate * 1000) };
}
