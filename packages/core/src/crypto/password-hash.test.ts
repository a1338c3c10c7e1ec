import { scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCRYPT_PARAMETERS, hashPassword, isPasswordHash, verifyPassword } from './password-hash.js';

const FAST = { log2N: 10, r: 8, p: 1 };

describe('password hashes', () => {
  // Three checks at the default cost: slow on a loaded machine, never a timing assertion.
  it('verify the password they were made from, and nothing else', { timeout: 120_000 }, async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(stored).toMatch(/^scrypt\$15\$8\$3\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/);
    expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
  });

  it('are salted: one password hashes differently each time', async () => {
    const [a, b] = await Promise.all([hashPassword('same', FAST), hashPassword('same', FAST)]);
    expect(a).not.toBe(b);
    expect(await verifyPassword('same', a)).toBe(true);
    expect(await verifyPassword('same', b)).toBe(true);
  });

  it('are plain scrypt (RFC 7914) over the NFC form, so other tools can check them', async () => {
    const stored = await hashPassword('Ångström', FAST);
    const [, , , , salt, hash] = stored.split('$');
    const expected = scryptSync('Ångström'.normalize('NFC'), Buffer.from(salt!, 'base64'), 32, {
      N: 1024,
      r: 8,
      p: 1,
    });
    expect(Buffer.from(hash!, 'base64')).toEqual(expected);
    // The decomposed spelling is the same password.
    expect(await verifyPassword('A\u030angstro\u0308m', stored)).toBe(true);
  });

  it('keep their parameters, so old hashes still verify after the defaults change', async () => {
    const old = await hashPassword('pw', { log2N: 11, r: 4, p: 2 });
    expect(old.startsWith('scrypt$11$4$2$')).toBe(true);
    expect(await verifyPassword('pw', old)).toBe(true);
    expect(DEFAULT_SCRYPT_PARAMETERS).toEqual({ log2N: 15, r: 8, p: 3 });
  });

  it('never match a stored value of another form, and refuse absurd parameters', {
    timeout: 120_000,
  }, async () => {
    for (const foreign of [
      '',
      'pw',
      'sha256$00$00',
      `scrypt$30$8$1$AAAAAAAAAAAAAAAAAAAAAA==$${'A'.repeat(43)}=`,
    ]) {
      expect(isPasswordHash(foreign)).toBe(false);
      expect(await verifyPassword('pw', foreign)).toBe(false);
    }
    await expect(hashPassword('pw', { log2N: 25, r: 8, p: 1 })).rejects.toMatchObject({
      reason: 'invalid_input',
    });
  });
});
