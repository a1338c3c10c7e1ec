import { createPublicKey } from 'node:crypto';
import { isCertwrightError } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { acmeRevocationReason, spkiThumbprint } from './revoke.js';

describe('ACME revocation inputs', () => {
  it('maps RFC 5280 codes to the service reasons, 8 and 10 to unspecified', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 8, 9, 10, undefined].map((c) => acmeRevocationReason(c))).toEqual([
      'unspecified',
      'keyCompromise',
      'caCompromise',
      'affiliationChanged',
      'superseded',
      'cessationOfOperation',
      'certificateHold',
      'unspecified',
      'privilegeWithdrawn',
      'unspecified',
      'unspecified',
    ]);
  });

  it.each([7, 11, -1, 1.5])('refuses the unassigned code %s', (code) => {
    try {
      acmeRevocationReason(code);
      expect.unreachable();
    } catch (error) {
      expect(isCertwrightError(error) && error.reason).toBe('invalid_input');
    }
  });

  it('computes the RFC 7638 §3.1 thumbprint from the certificate key', () => {
    const jwk = {
      kty: 'RSA',
      n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
      e: 'AQAB',
    };
    const spki = createPublicKey({ key: jwk, format: 'jwk' }).export({ format: 'der', type: 'spki' });
    expect(spkiThumbprint(spki)).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });
});
