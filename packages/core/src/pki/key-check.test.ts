import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import { hostilePrivateKeys, hostilePublicKeys, processKillingCsrs } from '../testing/hostile-keys.js';
import { parseCertificationRequest } from './csr.js';
import { algorithmIdentifier, bitString, oid, sequence } from './der.js';
import { children, readBitStringBytes, readRoot } from './der-reader.js';
import { checkPrivateKeyInfo, checkSubjectPublicKeyInfo } from './key-check.js';
import { describePublicKey, exportPkcs8Der, exportSpkiDer, importPkcs8Der, importSpkiDer } from './keys.js';
import { OID } from './oids.js';
import { verifySignature } from './signature.js';

function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (!isCertwrightError(e)) throw e;
    return e.reason;
  }
  return 'accepted';
}

const generated = [
  ['RSA-2048', () => generateKeyPairSync('rsa', { modulusLength: 2048 }), { type: 'RSA', bits: 2048 }],
  [
    'RSA-1024 (parsed, refused by profiles)',
    () => generateKeyPairSync('rsa', { modulusLength: 1024 }),
    { type: 'RSA', bits: 1024 },
  ],
  [
    'RSA e = 3',
    () => generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 3 }),
    { type: 'RSA', bits: 2048 },
  ],
  ['P-256', () => generateKeyPairSync('ec', { namedCurve: 'P-256' }), { type: 'EC', curve: 'P-256' }],
  ['P-384', () => generateKeyPairSync('ec', { namedCurve: 'P-384' }), { type: 'EC', curve: 'P-384' }],
  ['P-521', () => generateKeyPairSync('ec', { namedCurve: 'P-521' }), { type: 'EC', curve: 'P-521' }],
  ['Ed25519', () => generateKeyPairSync('ed25519'), { type: 'Ed25519' }],
  ['Ed448', () => generateKeyPairSync('ed448'), { type: 'Ed448' }],
] as const;

describe('key check', () => {
  for (const [name, make, description] of generated) {
    it(`accepts and describes a ${name} key, public and private`, () => {
      for (let i = 0; i < 3; i++) {
        const { publicKey, privateKey } = make();
        const spki = exportSpkiDer(publicKey);
        expect(checkSubjectPublicKeyInfo(spki)).toEqual(description);
        expect(checkPrivateKeyInfo(exportPkcs8Der(privateKey))).toEqual(description);
        expect(describePublicKey(privateKey)).toEqual(description);
        expect(exportSpkiDer(importPkcs8Der(exportPkcs8Der(privateKey))).equals(spki)).toBe(true);
      }
    }, 60_000);
  }

  it('accepts many Edwards and EC keys (the on-curve arithmetic never refuses a real key)', {
    timeout: 60_000,
  }, () => {
    for (let i = 0; i < 100; i++) {
      const edwards = [generateKeyPairSync('ed25519').publicKey, generateKeyPairSync('ed448').publicKey];
      for (const key of edwards) expect(() => checkSubjectPublicKeyInfo(exportSpkiDer(key))).not.toThrow();
      for (const namedCurve of ['P-256', 'P-384', 'P-521'])
        expect(() =>
          checkSubjectPublicKeyInfo(exportSpkiDer(generateKeyPairSync('ec', { namedCurve }).publicKey)),
        ).not.toThrow();
    }
  });

  it('accepts Edwards points that decode, whoever made them (y = 3 is on both curves, y = 2 on neither)', () => {
    for (const [algorithm, size] of [
      [OID.idEd25519, 32],
      [OID.idEd448, 57],
    ] as const) {
      const der = sequence(
        algorithmIdentifier(algorithm),
        bitString(Buffer.concat([Buffer.from([3]), Buffer.alloc(size - 1)])),
      );
      expect(() => checkSubjectPublicKeyInfo(der)).not.toThrow();
      expect(importSpkiDer(der).asymmetricKeyType).toBe(algorithm === OID.idEd25519 ? 'ed25519' : 'ed448');
    }
  });

  it('accepts compressed EC points that node:crypto imports', () => {
    for (const [namedCurve, curveOid, size] of [
      ['P-256', '1.2.840.10045.3.1.7', 32],
      ['P-384', '1.3.132.0.34', 48],
      ['P-521', '1.3.132.0.35', 66],
    ] as const) {
      for (let i = 0; i < 10; i++) {
        const { publicKey } = generateKeyPairSync('ec', { namedCurve });
        const spki = exportSpkiDer(publicKey);
        const point = readBitStringBytes(spki, children(spki, readRoot(spki))[1], 'key');
        const compressed = Buffer.concat([
          Buffer.from([2 + (point[point.length - 1]! & 1)]),
          point.subarray(1, 1 + size),
        ]);
        const der = sequence(algorithmIdentifier(OID.idEcPublicKey, oid(curveOid)), bitString(compressed));
        expect(checkSubjectPublicKeyInfo(der)).toEqual({ type: 'EC', curve: namedCurve });
        expect(importSpkiDer(der).export({ format: 'jwk' })).toEqual(publicKey.export({ format: 'jwk' }));
      }
    }
  });

  it('imports a compressed P-256 point even where its bytes hold 0x04 at an uncompressed point’s start', () => {
    // A compressed P-256 SPKI is 59 bytes; an uncompressed point would be the last 65. Reading
    // the last 65 of 59 once misread such a key as uncompressed (about 1 key in 256).
    let tried = 0;
    for (;;) {
      tried += 1;
      expect(tried).toBeLessThan(20_000);
      const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const spki = exportSpkiDer(publicKey);
      const point = readBitStringBytes(spki, children(spki, readRoot(spki))[1], 'key');
      const compressed = Buffer.concat([Buffer.from([2 + (point[64]! & 1)]), point.subarray(1, 33)]);
      const der = sequence(
        algorithmIdentifier(OID.idEcPublicKey, oid('1.2.840.10045.3.1.7')),
        bitString(compressed),
      );
      if (der.at(der.length - 65) !== 0x04) continue;
      expect(importSpkiDer(der).export({ format: 'jwk' })).toEqual(publicKey.export({ format: 'jwk' }));
      return;
    }
  });

  for (const key of hostilePublicKeys()) {
    it(`refuses a ${key.name} with ${key.reason}, in every place a public key enters`, () => {
      expect(reasonOf(() => checkSubjectPublicKeyInfo(key.spki))).toBe(key.reason);
      expect(reasonOf(() => importSpkiDer(key.spki))).toBe(key.reason);
      expect(reasonOf(() => describePublicKey(key.spki))).toBe(key.reason);
      expect(
        reasonOf(() => verifySignature(OID.ecdsaWithSHA256, key.spki, Buffer.alloc(1), Buffer.alloc(8))),
      ).toBe(key.reason);
    });
  }

  for (const key of hostilePrivateKeys()) {
    it(`refuses a PKCS#8 ${key.name} before createPrivateKey`, () => {
      expect(reasonOf(() => checkPrivateKeyInfo(key.pkcs8))).toBe(key.reason);
      expect(reasonOf(() => importPkcs8Der(key.pkcs8))).toBe(key.reason);
    });
  }

  it('refuses the process-killing CSRs with key_rejected naming the csr field', () => {
    for (const csr of processKillingCsrs()) {
      try {
        parseCertificationRequest(csr.der);
        expect.unreachable(`${csr.name} was accepted`);
      } catch (e) {
        expect(isCertwrightError(e) && { reason: e.reason, fields: e.fields.map((f) => f.field) }).toEqual({
          reason: 'key_rejected',
          fields: ['csr'],
        });
      }
    }
  });
});
