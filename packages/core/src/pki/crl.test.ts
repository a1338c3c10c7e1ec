import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSelfSignedCertificate } from './certificate.js';
import { buildCrl, checkEncodedEntries, encodeCrlEntry } from './crl.js';
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

describe('CRL from stored entry DER', () => {
  const reasons = [undefined, 'unspecified', 'keyCompromise', 'superseded', 'aACompromise'] as const;
  // Dates on both sides of the UTCTime/GeneralizedTime switch (RFC 5280 §4.1.2.5).
  const date = fc.integer({ min: Date.UTC(1950, 0, 1), max: Date.UTC(2200, 0, 1) }).map((t) => new Date(t));
  const entry = fc.record({
    serial: fc.uint8Array({ minLength: 1, maxLength: 20 }).map((b) => Buffer.from(b).toString('hex')),
    revokedAt: date,
    reason: fc.constantFrom(...reasons),
    invalidityDate: fc.option(date, { nil: undefined }),
  });

  async function ca() {
    const { privateKey } = await generateKeyPair('Ed25519');
    const cert = createSelfSignedCertificate(
      {
        subject: 'CN=stored',
        notBefore: new Date(0),
        notAfter: new Date('2040-01-01T00:00:00Z'),
        basicConstraints: { ca: true },
      },
      privateKey,
    );
    return {
      issuerCert: cert.der,
      issuerKey: privateKey,
      thisUpdate: new Date('2030-01-01T00:00:00Z'),
      nextUpdate: new Date('2030-01-02T00:00:00Z'),
      crlNumber: 7,
    };
  }

  it('signs the same bytes from encodeCrlEntry blocks as from the entries (Ed25519 is deterministic)', async () => {
    const base = await ca();
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 12 }), fc.integer({ min: 1, max: 5 }), (entries, per) => {
        const direct = buildCrl({ ...base, entries });
        const blocks: Buffer[] = [];
        for (let i = 0; i < entries.length; i += per)
          blocks.push(Buffer.concat(entries.slice(i, i + per).map((e) => encodeCrlEntry(e))));
        expect(buildCrl({ ...base, encodedEntries: blocks }).equals(direct)).toBe(true);
        expect(checkEncodedEntries(Buffer.concat(blocks))).toBe(entries.length);
      }),
      { seed: 0xc71e, numRuns: 150 },
    );
  });

  it('refuses stored bytes that are not whole entries, before signing them', async () => {
    const base = await ca();
    const good = encodeCrlEntry({
      serial: '0a',
      revokedAt: new Date('2029-01-01T00:00:00Z'),
      reason: 'superseded',
    });
    for (const bad of [
      good.subarray(0, good.length - 1), // truncated
      Buffer.concat([good, Buffer.from([0x30])]), // a stray byte after an entry
      Buffer.from([0x04, 0x02, 0x02, 0x00]), // not a SEQUENCE
      Buffer.from(good).fill(0x05, 2, 3), // no serial INTEGER
    ]) {
      expect(() => buildCrl({ ...base, encodedEntries: [bad] })).toThrow(/malformed/);
    }
  });

  it('checks arbitrary bytes without crashing: whole entries or a validation error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        try {
          const n = checkEncodedEntries(bytes);
          expect(n).toBeGreaterThanOrEqual(0);
        } catch (error) {
          expect(error).toMatchObject({ code: 'validation_failed' });
        }
      }),
      { seed: 0xc71f, numRuns: 2000 },
    );
    // Mutations of real entries reach deeper than random bytes do.
    const real = Buffer.concat([
      encodeCrlEntry({
        serial: 'ff'.repeat(20),
        revokedAt: new Date('2060-01-01T00:00:00Z'),
        reason: 'keyCompromise',
        invalidityDate: new Date('2001-01-01T00:00:00Z'),
      }),
      encodeCrlEntry({ serial: '01', revokedAt: new Date('2020-01-01T00:00:00Z') }),
    ]);
    fc.assert(
      fc.property(fc.nat(real.length - 1), fc.nat(255), (at, value) => {
        const mutated = Buffer.from(real);
        mutated[at] = value;
        try {
          checkEncodedEntries(mutated);
        } catch (error) {
          expect(error).toMatchObject({ code: 'validation_failed' });
        }
      }),
      { seed: 0xc720, numRuns: 2000 },
    );
  });
});
