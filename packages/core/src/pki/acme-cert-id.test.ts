import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import { formatAcmeCertId, MAX_CERT_ID_LENGTH, parseAcmeCertId } from './acme-cert-id.js';

// RFC 9773 §4.1: keyIdentifier 69:88:5B:…:C8:D4 and serial 0x0087654321.
const RFC_KEY_ID = Buffer.from('69885b6b87464041e1b37b847ba0ae2cde01c8d4', 'hex');
const RFC_CERT_ID = 'aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE';

function reasonOf(text: string): string {
  try {
    parseAcmeCertId(text);
    return 'accepted';
  } catch (error) {
    return isCertwrightError(error) ? error.reason : 'untyped';
  }
}

describe('ACME renewal-information certificate identifiers (RFC 9773 §4.1)', () => {
  it('reads the RFC example: the AKI key identifier and the serial with its leading zero octet', () => {
    const parsed = parseAcmeCertId(RFC_CERT_ID);
    expect(Buffer.from(parsed.keyIdentifier).equals(RFC_KEY_ID)).toBe(true);
    expect(parsed.serialNumber).toBe('87654321');
  });

  it('writes the RFC example from a stored serial, adding the zero octet a high bit needs', () => {
    expect(formatAcmeCertId(RFC_KEY_ID, '87654321')).toBe(RFC_CERT_ID);
    expect(formatAcmeCertId(RFC_KEY_ID, '1')).toBe(`${RFC_KEY_ID.toString('base64url')}.AQ`);
  });

  it.each([
    ['', 'empty'],
    ['aYhba4dGQEHhs3uEe6CuLN4ByNQ', 'no dot'],
    ['aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE.AA', 'three parts'],
    ['aYhba4dGQEHhs3uEe6CuLN4ByNQ=.AIdlQyE', 'padding'],
    ['aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyF', 'non-canonical trailing bits'],
    ['aYhba4dGQEHhs3uEe6CuLN4ByNQ.gA', 'negative serial'],
    ['aYhba4dGQEHhs3uEe6CuLN4ByNQ.AAE', 'serial with a superfluous zero'],
    ['.AIdlQyE', 'empty key identifier'],
    [`${'A'.repeat(MAX_CERT_ID_LENGTH)}.AQ`, 'too long'],
    ['aYhb+4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE', 'base64 instead of base64url'],
  ])('refuses %s (%s) as malformed', (text) => {
    expect(reasonOf(text)).toBe('malformed');
  });

  it('round-trips every identifier it writes', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        fc.uint8Array({ minLength: 1, maxLength: 20 }),
        (keyId, serialBytes) => {
          const hex = Buffer.from(serialBytes).toString('hex').replace(/^0+/, '') || '0';
          const parsed = parseAcmeCertId(formatAcmeCertId(keyId, hex));
          expect(Buffer.from(parsed.keyIdentifier).equals(Buffer.from(keyId))).toBe(true);
          expect(parsed.serialNumber).toBe(hex);
        },
      ),
      { seed: 0x9773, numRuns: 300 },
    );
  });

  it('throws nothing but typed errors on arbitrary text (seeded fuzz)', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.stringMatching(/^[A-Za-z0-9_=+/.-]{0,120}$/),
      fc
        .constantFrom(RFC_CERT_ID)
        .chain((s) =>
          fc
            .tuple(fc.nat(s.length), fc.string({ maxLength: 3 }))
            .map(([at, ins]) => s.slice(0, at) + ins + s.slice(at + 1)),
        ),
    );
    fc.assert(
      fc.property(text, (t) => {
        expect(reasonOf(t)).not.toBe('untyped');
      }),
      { seed: 0x5eed9773, numRuns: 2000 },
    );
  });
});
