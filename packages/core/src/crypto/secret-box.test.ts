import { describe, expect, it } from 'vitest';
import { keyIdOf, SecretBox } from './secret-box.js';

describe('SecretBox', () => {
  const box = new SecretBox(SecretBox.generateKey());

  it('round-trips text and never stores it in the clear', async () => {
    const sealed = await box.seal('{"token":"s3cr3t"}', 'issuer:iss-1');
    expect(sealed.startsWith('v1.')).toBe(true);
    expect(sealed).not.toContain('s3cr3t');
    expect(await box.open(sealed, 'issuer:iss-1')).toBe('{"token":"s3cr3t"}');
  });

  it('uses a fresh IV for every seal', async () => {
    expect(await box.seal('same')).not.toBe(await box.seal('same'));
  });

  it('refuses a value sealed for another context', async () => {
    const sealed = await box.seal('x', 'issuer:iss-1');
    await expect(box.open(sealed, 'issuer:iss-2')).rejects.toMatchObject({ code: 'internal' });
  });

  it('refuses a tampered value and a value sealed under another key', async () => {
    const sealed = await box.seal('hello');
    const last = sealed.at(-1) === 'A' ? 'B' : 'A';
    await expect(box.open(sealed.slice(0, -1) + last)).rejects.toMatchObject({ code: 'internal' });
    await expect(new SecretBox(SecretBox.generateKey()).open(sealed)).rejects.toMatchObject({
      code: 'internal',
    });
  });

  it('rejects keys that are not 32 bytes', () => {
    expect(() => new SecretBox(new Uint8Array(16))).toThrow(/32-byte/);
  });
});

describe('SecretBox keyring', () => {
  const oldKey = SecretBox.generateKey();
  const newKey = SecretBox.generateKey();

  it('names the sealing key in the v2 format and opens it under a ring that holds that key', async () => {
    const box = new SecretBox(oldKey, { keyIds: true });
    const sealed = await box.seal('ca key', 'issuer:iss-1:config');
    expect(sealed).toMatch(new RegExp(`^v2\\.${keyIdOf(oldKey)}\\.[A-Za-z0-9_-]+$`));
    expect(SecretBox.keyIdOfSealed(sealed)).toBe(keyIdOf(oldKey));
    const rotated = new SecretBox(newKey, { previous: [oldKey] });
    expect(await rotated.open(sealed, 'issuer:iss-1:config')).toBe('ca key');
    expect(await rotated.openingKeyId(sealed, 'issuer:iss-1:config')).toBe(keyIdOf(oldKey));
  });

  it('keeps reading the v1 format sealed before keyrings, under any key of the ring', async () => {
    const legacy = await new SecretBox(oldKey).seal('webhook header', 'webhook:wh-1:headers');
    expect(legacy.startsWith('v1.')).toBe(true);
    const rotated = new SecretBox(newKey, { previous: [SecretBox.generateKey(), oldKey] });
    expect(await rotated.open(legacy, 'webhook:wh-1:headers')).toBe('webhook header');
    expect(await rotated.openingKeyId(legacy, 'webhook:wh-1:headers')).toBe(keyIdOf(oldKey));
  });

  it('seals with the current key only, in the v2 format once a previous key is configured', async () => {
    const rotated = new SecretBox(newKey, { previous: [oldKey] });
    expect(rotated.keyId).toBe(keyIdOf(newKey));
    expect(rotated.previousKeyIds).toEqual([keyIdOf(oldKey)]);
    const sealed = await rotated.seal('x', 'c');
    expect(rotated.isCurrent(sealed)).toBe(true);
    // The old key alone does not open what the rotated ring sealed.
    await expect(new SecretBox(oldKey).open(sealed, 'c')).rejects.toMatchObject({ code: 'internal' });
    expect(await new SecretBox(newKey).open(sealed, 'c')).toBe('x');
  });

  it('seals in the v1 format (which release 2.0.0 reads) until told to name keys', async () => {
    const box = new SecretBox(oldKey);
    expect((await box.seal('x')).startsWith('v1.')).toBe(true);
    box.sealWithKeyIds();
    expect((await box.seal('x')).startsWith(`v2.${keyIdOf(oldKey)}.`)).toBe(true);
  });

  it('re-seals a value under the current key with its context, and refuses a key that is not in the ring', async () => {
    const sealed = await new SecretBox(oldKey, { keyIds: true }).seal('secret', 'ctx');
    const resealed = await new SecretBox(newKey, { previous: [oldKey] }).reseal(sealed, 'ctx');
    expect(SecretBox.keyIdOfSealed(resealed)).toBe(keyIdOf(newKey));
    expect(await new SecretBox(newKey).open(resealed, 'ctx')).toBe('secret');
    await expect(new SecretBox(newKey).open(sealed, 'ctx')).rejects.toThrow(/not in the keyring/);
    await expect(new SecretBox(newKey).reseal(resealed, 'other')).rejects.toMatchObject({ code: 'internal' });
  });

  it('derives the same subkeys from a key whichever ring holds it', async () => {
    const alone = await new SecretBox(oldKey).deriveBytes('label');
    const asPrevious = await new SecretBox(newKey, { previous: [oldKey] }).deriveBytes(
      'label',
      keyIdOf(oldKey),
    );
    expect(Buffer.from(asPrevious).equals(Buffer.from(alone))).toBe(true);
    const current = await new SecretBox(newKey, { previous: [oldKey] }).deriveBytes('label');
    expect(Buffer.from(current).equals(Buffer.from(alone))).toBe(false);
  });

  it('gives each key a stable id that is not the key', () => {
    expect(keyIdOf(oldKey)).toMatch(/^[0-9a-f]{16}$/);
    expect(keyIdOf(new Uint8Array(oldKey))).toBe(keyIdOf(oldKey));
    expect(keyIdOf(newKey)).not.toBe(keyIdOf(oldKey));
    expect(Buffer.from(oldKey).toString('hex')).not.toContain(keyIdOf(oldKey));
  });

  it('refuses a malformed v2 value with a typed error', async () => {
    const box = new SecretBox(oldKey);
    await expect(box.open('v2.nothex.AAAA')).rejects.toMatchObject({ code: 'internal' });
    await expect(box.open(`v2.${keyIdOf(oldKey)}.A`)).rejects.toMatchObject({ code: 'internal' });
    await expect(box.open('v3.AAAA')).rejects.toMatchObject({ code: 'internal' });
  });
});
