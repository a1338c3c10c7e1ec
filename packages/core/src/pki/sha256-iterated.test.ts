import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256Iterated } from './sha256-iterated.js';

const byNodeCrypto = (digest: Uint8Array, rounds: number): Buffer => {
  let out = Buffer.from(digest);
  for (let r = 0; r < rounds; r++) out = createHash('sha256').update(out).digest();
  return out;
};

describe('iterated SHA-256 of the PKCS#12 key derivation', () => {
  it('equals node:crypto hashing the digest again and again, for any 32 bytes and round count', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.integer({ min: 0, max: 300 }),
        (d, n) => {
          expect(sha256Iterated(d, n).equals(byNodeCrypto(d, n))).toBe(true);
        },
      ),
      { seed: 0x5ca1ab1e, numRuns: 200 },
    );
  });

  it('refuses an input that is not one digest instead of hashing something else', () => {
    expect(() => sha256Iterated(new Uint8Array(31), 1)).toThrow(
      expect.objectContaining({ code: 'internal' }),
    );
    expect(() => sha256Iterated(new Uint8Array(32), -1)).toThrow(
      expect.objectContaining({ code: 'internal' }),
    );
  });
});
