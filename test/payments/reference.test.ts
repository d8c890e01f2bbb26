// A treasury payment's reference (src/payments/reference.ts): its form, its reading (case, dash,
// Crockford's look-alikes), and that its check character catches every single-character typo — tried
// here over every substitution of every position of many references, and every swap of neighbours.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { Cell } from '@ton/core';
import { commentOf } from '../../src/chain/detect.ts';
import {
  checkCharacter,
  CROCKFORD,
  formatReference,
  normaliseReference,
  readReference,
  referenceChecks,
  referenceFromBytes,
  referencePayload,
  referencesOneAway,
} from '../../src/payments/reference.ts';

/** `n` references drawn as the create draws them. */
function draw(n: number): string[] {
  const out: string[] = [];
  while (out.length < n) {
    const reference = referenceFromBytes(crypto.randomBytes(5));
    if (reference !== null) out.push(reference);
  }
  return out;
}

describe('the reference', () => {
  it('is 8 Crockford base32 characters and a check character of the same alphabet, shown XXXX-XXXXX', () => {
    for (const reference of draw(200)) {
      assert.match(reference, /^[0-9A-HJKMNP-TV-Z]{9}$/);
      assert.ok(referenceChecks(reference));
      assert.match(formatReference(reference), /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{5}$/);
    }
  });

  it("uses Crockford's mod-37 check symbol: 40 bits of zero check 0, of one check 1; a symbol past the alphabet is drawn again", () => {
    assert.equal(referenceFromBytes(new Uint8Array([0, 0, 0, 0, 0])), '000000000');
    assert.equal(referenceFromBytes(new Uint8Array([0, 0, 0, 0, 1])), '000000011');
    // 32 mod 37 = 32: the check symbol would be '*', so this draw is refused.
    assert.equal(checkCharacter('00000010'), '*');
    assert.equal(referenceFromBytes(new Uint8Array([0, 0, 0, 0, 32])), null);
  });

  it('detects every single-character substitution (the check character included) and every swap of neighbours', () => {
    let tried = 0;
    for (const reference of draw(300)) {
      for (let i = 0; i < reference.length; i += 1) {
        for (const char of CROCKFORD) {
          if (char === reference[i]) continue;
          const typo = reference.slice(0, i) + char + reference.slice(i + 1);
          assert.equal(referenceChecks(typo), false, `${reference} → ${typo} passed the check`);
          tried += 1;
        }
        if (i + 1 < reference.length && reference[i] !== reference[i + 1]) {
          const swapped = reference.slice(0, i) + reference[i + 1] + reference[i] + reference.slice(i + 2);
          assert.equal(referenceChecks(swapped), false, `${reference} → ${swapped} passed the check`);
        }
      }
    }
    assert.equal(tried, 300 * 9 * 31);
  });

  it('is read whatever the case, with or without the dash or spaces, with I/L as 1 and O as 0', () => {
    const [reference] = draw(1) as [string];
    const shown = formatReference(reference);
    for (const typed of [shown, reference, shown.toLowerCase(), ` ${shown.slice(0, 4)} ${shown.slice(5)} `, shown.replace('-', '–')]) {
      assert.deepEqual(readReference(typed), { kind: 'reference', reference }, typed);
    }
    assert.equal(normaliseReference('o1lI-abcde'), '0111ABCDE');
    assert.deepEqual(readReference('ABCD-EFGH0'.replace('0', checkCharacter('ABCDEFGH'))), {
      kind: 'reference',
      reference: `ABCDEFGH${checkCharacter('ABCDEFGH')}`,
    });
  });

  it('a typo is malformed and its one-character neighbours are the suggestions; other text is no reference', () => {
    const [reference] = draw(1) as [string];
    const wrong = CROCKFORD[(CROCKFORD.indexOf(reference[3]!) + 1) % 32]!;
    const typo = reference.slice(0, 3) + wrong + reference.slice(4);
    assert.deepEqual(readReference(typo), { kind: 'malformed', text: typo });
    assert.ok(referencesOneAway(typo).includes(reference));
    assert.ok(referencesOneAway(typo).every(referenceChecks));
    assert.equal(readReference(reference.slice(0, 8)).kind, 'malformed', 'a character short');
    assert.deepEqual(readReference('thank you for the coffee'), { kind: 'none' });
    assert.deepEqual(readReference(''), { kind: 'none' });
    assert.deepEqual(readReference(null), { kind: 'none' });
  });

  it('the payload is a text comment (op 0) of the reference as shown', () => {
    const [reference] = draw(1) as [string];
    const cell = Cell.fromBoc(Buffer.from(referencePayload(reference), 'base64'))[0]!;
    assert.equal(commentOf(cell), formatReference(reference));
  });
});
