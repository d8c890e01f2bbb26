// The dashboard's bearer secrets (invitation links, session cookies): 32 random bytes, base64url,
// of which only the SHA-256 is stored. A lookup by hash needs no constant-time compare: the
// database finds the row by the hash of what was sent, never by comparing secrets.
import crypto from 'node:crypto';

export const newSecret = (): string => crypto.randomBytes(32).toString('base64url');

/** SHA-256 of a secret as sent (a malformed one hashes too, and finds nothing). */
export const secretHash = (secret: string): Buffer => crypto.createHash('sha256').update(secret, 'utf8').digest();

/** A well-formed secret: 43 base64url characters. */
export const isSecret = (value: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(value);
