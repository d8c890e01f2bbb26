// A treasury payment's reference (CONTRACT §12): 8 Crockford base32 characters and a check character,
// shown XXXX-XXXXX, that the customer sends as the comment of a transfer to the store's treasury. Pure:
// drawing one takes its randomness from the caller. The check character is Crockford's mod-37 check
// symbol of the 40-bit value; a reference is only drawn when that symbol is one of the 32 ordinary
// characters (never * ~ $ = U, which a person cannot be expected to type in a wallet's comment field),
// so every reference is 9 characters of the one alphabet. Because 37 is prime and larger than 32,
// changing any one character (the check character included), or swapping two neighbours, changes the
// value mod 37: every such typo is detected (test/payments/reference.test.ts tries every one).
import { beginCell, type Cell } from '@ton/core';

/** Crockford's base32 alphabet (no I, L, O, U). */
export const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** Crockford's check symbols: the alphabet, then * ~ $ = U for 32 to 36. */
const CHECK_SYMBOLS = `${CROCKFORD}*~$=U`;
const BODY_LENGTH = 8;

/** The check character of an 8-character body (Crockford: the value mod 37). */
export function checkCharacter(body: string): string {
  let value = 0n;
  for (const char of body) {
    const digit = CROCKFORD.indexOf(char);
    if (digit < 0) throw new Error(`not a Crockford base32 character: ${char}`);
    value = value * 32n + BigInt(digit);
  }
  return CHECK_SYMBOLS[Number(value % 37n)]!;
}

/**
 * A new reference from 5 random bytes (40 bits: the 8 characters), or null when its check symbol is
 * not one of the 32 ordinary characters (5 draws in 37): the caller draws again.
 */
export function referenceFromBytes(bytes: Uint8Array): string | null {
  if (bytes.length < 5) throw new Error('a reference needs 5 random bytes');
  let value = 0n;
  for (let i = 0; i < 5; i += 1) value = value * 256n + BigInt(bytes[i]!);
  let body = '';
  for (let i = 0; i < BODY_LENGTH; i += 1) {
    body = CROCKFORD[Number(value % 32n)]! + body;
    value /= 32n;
  }
  const check = checkCharacter(body);
  return CROCKFORD.includes(check) ? body + check : null;
}

/** As people see it: XXXX-XXXXX. */
export function formatReference(reference: string): string {
  return `${reference.slice(0, 4)}-${reference.slice(4)}`;
}

/**
 * What a comment says as a reference, normalised: spaces and dashes dropped, upper case, Crockford's
 * readings of look-alikes (I and L are 1, O is 0). Null when what is left is not 9 characters of the
 * alphabet.
 */
export function normaliseReference(text: string): string | null {
  const plain = text
    .replace(/[\s\u00a0\-\u2010-\u2015]/g, '')
    .toUpperCase()
    .replace(/[IL]/g, '1')
    .replace(/O/g, '0');
  if (plain.length !== BODY_LENGTH + 1) return null;
  for (const char of plain) if (!CROCKFORD.includes(char)) return null;
  return plain;
}

/** Whether a normalised 9-character reference's check character is right. */
export function referenceChecks(reference: string): boolean {
  return reference.length === BODY_LENGTH + 1 && checkCharacter(reference.slice(0, BODY_LENGTH)) === reference[BODY_LENGTH];
}

/** What a transfer's comment makes of a reference. */
export type ReadReference =
  /** A reference whose check character is right. */
  | { kind: 'reference'; reference: string }
  /** 9 characters of the alphabet whose check fails (a typo), or near enough in length to be one. */
  | { kind: 'malformed'; text: string }
  /** No comment, or one that is no reference at all. */
  | { kind: 'none' };

/** Reads a comment's text as a reference (case, spaces and the dash ignored). */
export function readReference(comment: string | null | undefined): ReadReference {
  if (comment === null || comment === undefined) return { kind: 'none' };
  const normalised = normaliseReference(comment);
  if (normalised !== null) return referenceChecks(normalised) ? { kind: 'reference', reference: normalised } : { kind: 'malformed', text: normalised };
  // A character too many or too few: a reference mistyped, kept as what it carried.
  const plain = comment.replace(/[\s-]/g, '').toUpperCase();
  if (/^[0-9A-Z]{7,10}$/.test(plain) && /\d/.test(plain)) return { kind: 'malformed', text: plain };
  return { kind: 'none' };
}

/**
 * The valid references one character away from `text` (a mistyped reference): each single
 * substitution whose check character is right, and each swap of two neighbours. Only candidates:
 * whether a payment has one is the database's question.
 */
export function referencesOneAway(text: string): string[] {
  if (text.length !== BODY_LENGTH + 1) return [];
  const found = new Set<string>();
  for (let i = 0; i < text.length; i += 1) {
    for (const char of CROCKFORD) {
      if (char === text[i]) continue;
      const candidate = text.slice(0, i) + char + text.slice(i + 1);
      if (referenceChecks(candidate)) found.add(candidate);
    }
    if (i + 1 < text.length && text[i] !== text[i + 1]) {
      const swapped = text.slice(0, i) + text[i + 1] + text[i] + text.slice(i + 2);
      if (referenceChecks(swapped)) found.add(swapped);
    }
  }
  return [...found];
}

/** The body a wallet sends: a text comment (op 0) of the reference as people see it. */
export function referenceCommentCell(reference: string): Cell {
  return beginCell().storeUint(0, 32).storeStringTail(formatReference(reference)).endCell();
}

/** paymentDetails.payload: the comment's BoC in base64 (for a jetton, the transfer's forward_payload). */
export function referencePayload(reference: string): string {
  return referenceCommentCell(reference).toBoc().toString('base64');
}
