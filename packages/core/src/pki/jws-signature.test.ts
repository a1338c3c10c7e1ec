import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  defaultJwsAlgorithm,
  JWS_SIGNATURE_ALGORITHMS,
  type JwsSignatureAlgorithm,
  jwsAlgorithmFitsKey,
  signJws,
  verifyJwsSignature,
} from './jws-signature.js';
import { describePublicKey } from './keys.js';

const pairs = {
  RS256: generateKeyPairSync('rsa', { modulusLength: 2048 }),
  PS256: generateKeyPairSync('rsa', { modulusLength: 3072 }),
  ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  ES384: generateKeyPairSync('ec', { namedCurve: 'P-384' }),
  EdDSA: generateKeyPairSync('ed25519'),
} satisfies Record<JwsSignatureAlgorithm, unknown>;

describe('JWS signatures', () => {
  for (const alg of JWS_SIGNATURE_ALGORITHMS) {
    it(`${alg}: verifies its own signature, and refuses other bytes, another length and another key`, () => {
      const { privateKey, publicKey } = pairs[alg];
      expect(jwsAlgorithmFitsKey(alg, describePublicKey(publicKey))).toBe(true);
      const input = Buffer.from('header.payload');
      const signature = signJws(alg, privateKey, input);
      expect(verifyJwsSignature(alg, publicKey, input, signature)).toBe(true);
      expect(verifyJwsSignature(alg, publicKey, Buffer.from('header.other'), signature)).toBe(false);
      expect(verifyJwsSignature(alg, publicKey, input, signature.subarray(1))).toBe(false);
      expect(verifyJwsSignature(alg, publicKey, input, Buffer.concat([Buffer.alloc(1), signature]))).toBe(
        false,
      );
      expect(verifyJwsSignature(alg, publicKey, input, Buffer.alloc(0))).toBe(false);
      const other = alg === 'EdDSA' ? pairs.ES256 : pairs.EdDSA;
      expect(jwsAlgorithmFitsKey(alg, describePublicKey(other.publicKey))).toBe(false);
    });
  }

  for (const alg of ['RS256', 'PS256'] as const) {
    it(`${alg}: refuses a signature whose leading zero octet was removed (one signature, one text)`, () => {
      // About one signature in 256 starts with 0x00. OpenSSL's PSS verification reads the
      // signature one octet short as the same number and accepts it; RFC 8017 does not.
      const { privateKey, publicKey } = pairs[alg];
      for (let i = 0; i < 20_000; i++) {
        const input = Buffer.from(`header.${i}`);
        const signature = signJws(alg, privateKey, input);
        if (signature[0] !== 0) continue;
        expect(verifyJwsSignature(alg, publicKey, input, signature)).toBe(true);
        expect(verifyJwsSignature(alg, publicKey, input, signature.subarray(1))).toBe(false);
        return;
      }
      throw new Error('no signature starting with 0x00 in 20,000 inputs');
    });
  }

  it('names the algorithm a key signs with by default', () => {
    expect(defaultJwsAlgorithm(describePublicKey(pairs.RS256.publicKey))).toBe('RS256');
    expect(defaultJwsAlgorithm(describePublicKey(pairs.ES384.publicKey))).toBe('ES384');
    expect(defaultJwsAlgorithm(describePublicKey(pairs.EdDSA.publicKey))).toBe('EdDSA');
  });
});
