import { isCertwrightError } from '@certwright/core';
import { fuzzTarget, mutatedText } from '@certwright/core/testing';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  MDM_CHALLENGE_STATUSES,
  mdmStatusOf,
  mintScepChallenge,
  parseMdmChallenge,
  parseMdmSigners,
} from '../../src/scep/index.js';
import {
  type MdmSigningIdentity,
  SETTINGS,
  signingIdentity,
  signRaw,
  T0,
  T0_SECONDS,
  verifierWith,
} from './support.js';

/**
 * Mutated real challenges, random JSON in well-formed JWS envelopes and deeply nested JSON
 * never make the challenge reader throw anything but its typed error with a status label, and
 * never make the verifier answer anything but a status. Seeded, so a failure replays.
 */

let signer: MdmSigningIdentity;
let seeds: string[] = [];

beforeAll(async () => {
  signer = await signingIdentity('ECDSA-P256');
  const rsa = await signingIdentity('RSA-2048', 'rsa');
  const claims = {
    cn: 'device-1',
    dns: ['device-1.example'],
    ip: ['192.0.2.1', '2001:db8::1'],
    compliant: true,
  };
  seeds = [
    mintScepChallenge({ key: signer.key, certificate: signer.der, audience: 'aud', claims, now: T0 }),
    mintScepChallenge({
      key: rsa.key,
      certificate: rsa.der,
      audience: ['a', 'b'],
      claims,
      now: T0,
      algorithm: 'PS256',
    }),
    signRaw(signer, {
      ver: 1,
      iss: 'x',
      aud: 'aud',
      iat: T0_SECONDS,
      exp: T0_SECONDS + 5,
      jti: '12345678',
      cn: 'c',
    }),
  ];
});

const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

const FRAGMENTS = ['.', '..', '-', '_', '=', '+', '/', ' ', 'eyJ', 'e30', 'A', 'AAAA', '\u0000', 'é', '%2E'];

function typedWithStatus(token: unknown): void {
  try {
    parseMdmChallenge(token as string);
  } catch (error) {
    if (isCertwrightError(error) && mdmStatusOf(error) === undefined) {
      throw new Error(`typed error without a status label: ${error.message}`);
    }
    throw error;
  }
}

describe('MDM challenge reader fuzzing', () => {
  it('refuses mutated real challenges only with typed, labelled errors', () => {
    const report = fuzzTarget(
      {
        name: 'mdm-challenge-text',
        covers: 'parseMdmChallenge on mutations of minted challenges',
        inputs: mutatedText(seeds, FRAGMENTS),
        run: typedWithStatus,
        size: (t) => (t as string).length,
        show: (t) => JSON.stringify(t),
      },
      4000,
      0x5c3e,
    );
    expect(report.untyped).toEqual([]);
    expect(report.refused).toBeGreaterThan(0);
  });

  it('refuses random JSON headers and claims in a well-formed envelope only with typed, labelled errors', () => {
    const member = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.constantFrom(
        'ES256',
        'none',
        'HS256',
        'scep-challenge+jwt',
        1,
        2,
        -1,
        1e21,
        T0_SECONDS,
        'x'.repeat(300),
      ),
    );
    const header = fc.record(
      {
        alg: member,
        typ: member,
        'x5t#S256': fc.oneof(member, fc.constant(b64(Buffer.alloc(32)))),
        jwk: member,
        crit: member,
      },
      { requiredKeys: [] },
    );
    const payload = fc.record(
      {
        ver: fc.oneof(fc.constant(1), member),
        iss: member,
        aud: member,
        iat: member,
        nbf: member,
        exp: member,
        jti: member,
        cn: member,
        dns: member,
        ip: member,
        email: member,
        uri: member,
        compliant: member,
        __proto__: member,
      },
      { requiredKeys: [] },
    );
    const token = fc
      .tuple(
        fc.oneof(header, fc.jsonValue()),
        fc.oneof(payload, fc.jsonValue()),
        fc.uint8Array({ maxLength: 600 }),
      )
      .map(([h, p, s]) => `${b64(h)}.${b64(p)}.${Buffer.from(s).toString('base64url')}`);
    const report = fuzzTarget(
      {
        name: 'mdm-challenge-json',
        covers: 'parseMdmChallenge on random header and claims JSON',
        inputs: token,
        run: typedWithStatus,
        size: (t) => (t as string).length,
        show: (t) => JSON.stringify(t),
      },
      4000,
      0x4d444d,
    );
    expect(report.untyped).toEqual([]);
  });

  it('refuses deep nesting and oversized parts before parsing them', () => {
    const deep = `${b64({ alg: 'ES256' })}.${b64(`{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`)}.AAAA`;
    const huge = `${b64({ alg: 'ES256' })}.${'A'.repeat(9000)}.AAAA`;
    for (const token of [deep, huge]) {
      let error: unknown;
      try {
        parseMdmChallenge(token);
      } catch (e) {
        error = e;
      }
      expect(mdmStatusOf(error)).toBe('malformed');
    }
  });

  it('refuses mutated trust files only with typed errors', async () => {
    const rsa = await signingIdentity('RSA-2048', 'rsa signer');
    const report = fuzzTarget(
      {
        name: 'mdm-trust-file',
        covers: 'parseMdmSigners on mutations of PEM trust files',
        inputs: mutatedText(
          [signer.pem, signer.pem + rsa.pem],
          [
            '-----BEGIN CERTIFICATE-----\n',
            '-----END CERTIFICATE-----\n',
            '-----BEGIN PUBLIC KEY-----',
            'A',
            '=',
            '\n',
            'MII',
            ':',
          ],
        ),
        run: (text) => parseMdmSigners(text as string),
        size: (t) => (t as string).length,
        show: (t) => JSON.stringify(t),
      },
      1500,
      0x7e57,
    );
    expect(report.untyped).toEqual([]);
  });

  it('answers every mutated challenge with a status label, never an exception', async () => {
    const { verifier } = verifierWith(new Map([[SETTINGS.trust_bundle_path!, signer.pem]]), {
      failureLimit: null,
    });
    await fc.assert(
      fc.asyncProperty(mutatedText(seeds, FRAGMENTS), async (token) => {
        const result = await verifier.verify({
          profileId: 'prof-fuzz',
          settings: { ...SETTINGS, audience: 'aud' },
          challenge: token,
          csr: { commonNames: ['device-1'], subjectAltNames: [] },
          remoteAddress: '192.0.2.1',
        });
        expect(MDM_CHALLENGE_STATUSES).toContain(result.status);
      }),
      { numRuns: 1500, seed: 0x4d44 },
    );
  });
});
