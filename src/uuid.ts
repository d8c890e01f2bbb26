// The one UUID check: path ids, X-Idempotency-Key, query cursors and job payloads all use it.
import crypto from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in its 8-4-4-4-12 hex form, in either case (callers lower-case what they keep). */
export const isUuid = (value: string): boolean => UUID.test(value);

/** A new random (version 4) UUID. */
export const newUuid = (): string => crypto.randomUUID();
