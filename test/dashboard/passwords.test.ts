// Dashboard passwords (scrypt) and secrets: the stored form names its parameters; a wrong password,
// a tampered hash and a malformed one are refused; secrets are stored as their SHA-256 only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashPassword, passwordProblem, SCRYPT_LOG2_N, SCRYPT_P, SCRYPT_R, verifyPassword } from '../../src/dashboard/passwords.ts';
import { isSecret, newSecret, secretHash } from '../../src/dashboard/secrets.ts';
import { normalizeEmail } from '../../src/dashboard/forms.ts';

describe('dashboard passwords', () => {
  it('hash as scrypt$15$8$1$<salt>$<key>, salted afresh each time; verify accepts the password and nothing else', async () => {
    const one = await hashPassword('correct horse battery');
    const two = await hashPassword('correct horse battery');
    assert.match(one, new RegExp(`^scrypt\\$${SCRYPT_LOG2_N}\\$${SCRYPT_R}\\$${SCRYPT_P}\\$[A-Za-z0-9+/]{22}==\\$[A-Za-z0-9+/]{43}=$`));
    assert.notEqual(one, two);
    assert.equal(await verifyPassword('correct horse battery', one), true);
    assert.equal(await verifyPassword('correct horse batterY', one), false);
    const key = one.split('$')[5]!;
    const tampered = one.replace(key, `${key[0] === 'A' ? 'B' : 'A'}${key.slice(1)}`);
    assert.equal(await verifyPassword('correct horse battery', tampered), false);
    assert.equal(await verifyPassword('x', 'bcrypt$whatever'), false);
    assert.equal(await verifyPassword('x', 'scrypt$30$8$1$AAAA$AAAA'), false, 'absurd parameters are refused before any work');
    // Unicode is normalised: the same password typed as composed or decomposed characters.
    assert.equal(await verifyPassword('cafe\u0301 au lait!', await hashPassword('café au lait!')), true);
  });

  it('a new password has 10 to 200 characters', () => {
    assert.match(passwordProblem('short')!, /at least 10/);
    assert.equal(passwordProblem('ten chars!'), null);
    assert.match(passwordProblem('x'.repeat(201))!, /at most 200/);
  });

  it('secrets: 32 random bytes base64url, stored as SHA-256', () => {
    const secret = newSecret();
    assert.equal(isSecret(secret), true);
    assert.equal(isSecret(`${secret}x`), false);
    assert.equal(secretHash(secret).length, 32);
    assert.notEqual(newSecret(), secret);
  });

  it('emails are compared in lower case, trimmed; anything else is not an email', () => {
    assert.equal(normalizeEmail(' Ann@Example.COM '), 'ann@example.com');
    assert.equal(normalizeEmail('ann@localhost'), null);
    assert.equal(normalizeEmail('ann example.com'), null);
  });
});
