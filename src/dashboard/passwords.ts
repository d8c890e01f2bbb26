// Dashboard passwords, hashed with scrypt (node:crypto). Parameters: N = 2^15, r = 8, p = 1, a
// 16-byte random salt and a 32-byte key — OWASP's recommended minimum for scrypt; one hash takes
// about 32 MiB and 50–100 ms of one core. They are written into each hash
// (`scrypt$15$8$1$<salt>$<key>`, base64), so raising them later leaves older hashes verifiable.
import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (password: string, salt: Buffer, keylen: number, options: crypto.ScryptOptions) => Promise<Buffer>;

export const SCRYPT_LOG2_N = 15;
export const SCRYPT_R = 8;
export const SCRYPT_P = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Passwords shorter than this are refused; longer than the maximum too (scrypt would take them, but nobody types 1 KiB). */
export const PASSWORD_MIN_LENGTH = 10;
const PASSWORD_MAX_LENGTH = 200;

const options = (log2N: number, r: number, p: number): crypto.ScryptOptions => ({ N: 2 ** log2N, r, p, maxmem: 128 * 2 ** log2N * r * p * 2 });

/** The problem with a new password, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `The password needs at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (password.length > PASSWORD_MAX_LENGTH) return `The password may have at most ${PASSWORD_MAX_LENGTH} characters.`;
  return null;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(SALT_BYTES);
  const key = await scrypt(password.normalize('NFC'), salt, KEY_BYTES, options(SCRYPT_LOG2_N, SCRYPT_R, SCRYPT_P));
  return `scrypt$${SCRYPT_LOG2_N}$${SCRYPT_R}$${SCRYPT_P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Whether `password` matches `stored` (constant-time compare); false for anything malformed. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(stored);
  if (!match) return false;
  const [log2N, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (log2N < 10 || log2N > 20 || r < 1 || r > 32 || p < 1 || p > 16) return false;
  const expected = Buffer.from(match[5]!, 'base64');
  const key = await scrypt(password.normalize('NFC'), Buffer.from(match[4]!, 'base64'), expected.length, options(log2N, r, p));
  return key.length === expected.length && crypto.timingSafeEqual(key, expected);
}

/** A hash of nothing anyone knows: sign-in verifies against it when the email is unknown, so both take as long. */
let decoy: Promise<string> | undefined;
export const decoyHash = (): Promise<string> => (decoy ??= hashPassword(crypto.randomBytes(16).toString('hex')));
