import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSelfSignedCertificate } from './certificate.js';
import { buildCrl } from './crl.js';
import { integer } from './der.js';
import { readRoot, readUnsignedInteger } from './der-reader.js';
import { generateKeyPair } from './keys.js';

describe('CRL serial encoding', () => {
  it('writes the same DER for a serial given as hex or as bytes (Ed25519 signatures are deterministic)', async () => {
    const { privateKey } = await generateKeyPair('Ed25519');
    const ca = createSelfSignedCertificate(
      {
        subject: 'CN=prop',
        notBefore: new Date(0),
        notAfter: new Date('2040-01-01T00:00:00Z'),
        basicConstraints: { ca: true },
      },
      privateKey,
    );
    const base = {
      issuerCert: ca.der,
      issuerKey: privateKey,
      thisUpdate: new Date('2030-01-01T00:00:00Z'),
      nextUpdate: new Date('2030-01-02T00:00:00Z'),
      crlNumber: 1,
    };
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 20 }), fc.boolean(), (bytes, upper) => {
        const hex = Buffer.from(bytes).toString('hex');
        const revokedAt = new Date('2029-06-01T12:00:00Z');
        const a = buildCrl({ ...base, entries: [{ serial: upper ? hex.toUpperCase() : hex, revokedAt }] });
        const b = buildCrl({ ...base, entries: [{ serial: bytes, revokedAt }] });
        const stripped = hex.replace(/^0+(?=.)/, '');
        const c = buildCrl({ ...base, entries: [{ serial: stripped, revokedAt }] });
        expect(a.equals(b)).toBe(true);
        expect(c.equals(b)).toBe(true);
        // And the INTEGER in it is the value we meant.
        const want = integer(bytes);
        expect(a.includes(want)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('round-trips non-negative INTEGERs through writer and reader', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 160n) - 1n }), (v) => {
        const der = integer(v);
        const magnitude = readUnsignedInteger(der, readRoot(der), 'x');
        expect(BigInt(`0x${Buffer.from(magnitude).toString('hex') || '0'}`)).toBe(v);
      }),
    );
  });
});
