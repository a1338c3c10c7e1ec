import { describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box.js';

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
