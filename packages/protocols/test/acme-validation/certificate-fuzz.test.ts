import { isCertwrightError } from '@certwright/core';
import { mutated, randomDer } from '@certwright/core/testing';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { vetChallenge } from '../../src/acme/validation/challenge.js';
import { checkAcmeTlsCertificate } from '../../src/acme/validation/tls-alpn-01.js';
import { acmeCertificate, keyAuthorization } from './fixtures.js';

/**
 * The tls-alpn-01 certificate check reads a peer's leaf certificate — bytes anyone on the
 * network chooses. Fed mutated real challenge certificates and random DER, it must either accept
 * or refuse with tls_failed or incorrect_response, nothing else. Seeded, so a failure replays.
 */

const TOKEN = 'fuzzToken';
const KA = keyAuthorization(TOKEN);
const REASONS = new Set(['tls_failed', 'incorrect_response']);
let seeds: Buffer[] = [];

beforeAll(async () => {
  seeds = await Promise.all([
    acmeCertificate({ sans: [{ type: 'dns', value: 'fuzz.acme.test' }], keyAuthorization: KA }).then(
      (c) => c.der,
    ),
    acmeCertificate({ sans: [{ type: 'ip', value: '127.0.0.1' }], keyAuthorization: KA }).then((c) => c.der),
    acmeCertificate({
      sans: [
        { type: 'dns', value: 'fuzz.acme.test' },
        { type: 'uri', value: 'https://fuzz.acme.test/' },
      ],
      keyAuthorization: KA,
      extension: 'non-critical',
    }).then((c) => c.der),
  ]);
});

const challenges = [
  vetChallenge({
    type: 'tls-alpn-01',
    identifier: { type: 'dns', value: 'fuzz.acme.test' },
    token: TOKEN,
    keyAuthorization: KA,
  }),
  vetChallenge({
    type: 'tls-alpn-01',
    identifier: { type: 'ip', value: '127.0.0.1' },
    token: TOKEN,
    keyAuthorization: KA,
  }),
];

function accepts(der: Uint8Array, which: number): boolean {
  try {
    checkAcmeTlsCertificate(der, challenges[which]!);
    return true;
  } catch (error) {
    if (isCertwrightError(error) && REASONS.has(error.reason)) return false;
    throw error;
  }
}

describe('the tls-alpn-01 certificate check over untrusted bytes', () => {
  it('accepts the unmutated seeds it was made for', () => {
    expect(accepts(seeds[0]!, 0)).toBe(true);
    expect(accepts(seeds[1]!, 1)).toBe(true);
    expect(accepts(seeds[2]!, 0)).toBe(false);
  });

  it('refuses mutated certificates and random DER only with tls_failed or incorrect_response', {
    timeout: 120_000,
  }, () => {
    fc.assert(
      fc.property(fc.oneof(mutated(seeds), randomDer), fc.nat(1), (der, which) => {
        accepts(der, which);
      }),
      { seed: 0xacc7e5, numRuns: 600 },
    );
  });
});
