import {
  constants,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  publicEncrypt,
} from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../../src/errors.js';
import {
  rsaPkcs1v15Decrypt,
  rsaPkcs1v15DecryptJs,
  rsaPkcs1v15DecryptMode,
  unpadWithImplicitRejection,
} from '../../../src/pki/cms/rsa-pkcs1-decrypt.js';

/**
 * Known answers produced by Node.js 24 (OpenSSL 3.5, native implicit rejection) for two fixed
 * test keys: valid paddings of several lengths and every kind of bad padding. The JavaScript
 * path must return the same bytes — for bad paddings, the same synthetic message — so that a
 * fleet on mixed Node.js versions answers identically.
 */
const KAT = JSON.parse(
  readFileSync(new URL('./rsa-pkcs1-implicit-rejection.json', import.meta.url), 'utf8'),
) as {
  generatedBy: string;
  keys: Record<string, string>;
  vectors: { key: string; name: string; ciphertext: string; plaintext: string }[];
};
const katKey = (name: string) => createPrivateKey(KAT.keys[name]!);

const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 });
const encryptRaw = (em: Uint8Array) =>
  publicEncrypt({ key: rsa1024.publicKey, padding: constants.RSA_NO_PADDING }, em);

const code = (fn: () => unknown): string => {
  try {
    fn();
    return 'no error';
  } catch (e) {
    return isCertwrightError(e) ? e.reason : `untyped: ${String(e)}`;
  }
};

describe('RSA PKCS#1 v1.5 decryption with implicit rejection', () => {
  for (const v of KAT.vectors) {
    it(`matches OpenSSL's implicit rejection: ${v.key}, ${v.name}`, () => {
      const key = katKey(v.key);
      const c = Buffer.from(v.ciphertext, 'hex');
      expect(rsaPkcs1v15DecryptJs(key, c).toString('hex')).toBe(v.plaintext);
      expect(rsaPkcs1v15Decrypt(key, c).toString('hex')).toBe(v.plaintext);
    });
  }

  it('reports the path this runtime uses (Node.js 20 has no native implicit rejection)', () => {
    rsaPkcs1v15Decrypt(rsa1024.privateKey, encryptRaw(Buffer.alloc(128, 1)));
    const major = Number(process.versions.node.split('.')[0]);
    expect(rsaPkcs1v15DecryptMode()).toBe(major <= 20 ? 'implicit-rejection-js' : 'native');
  });

  it('decrypts every message length a PKCS#1 v1.5 encryptor can produce', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 128 - 11 }), (message) => {
        const c = publicEncrypt({ key: rsa1024.publicKey, padding: constants.RSA_PKCS1_PADDING }, message);
        expect(rsaPkcs1v15Decrypt(rsa1024.privateKey, c).equals(Buffer.from(message))).toBe(true);
        expect(rsaPkcs1v15DecryptJs(rsa1024.privateKey, c).equals(Buffer.from(message))).toBe(true);
      }),
      { seed: 0x5ce9, numRuns: 200 },
    );
  });

  it('never fails on a bad padding: the same ciphertext always yields the same synthetic message', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 127, maxLength: 127 }), (tail) => {
        const em = Buffer.concat([Buffer.from([0]), tail]);
        const c = encryptRaw(em);
        const a = rsaPkcs1v15Decrypt(rsa1024.privateKey, c);
        const b = rsaPkcs1v15Decrypt(rsa1024.privateKey, c);
        expect(a.equals(b)).toBe(true);
        expect(a.length).toBeLessThanOrEqual(128 - 11);
      }),
      { seed: 0x5cea, numRuns: 200 },
    );
  });

  it('gives different ciphertexts with bad padding different synthetic messages', () => {
    // A fixed key, so that the synthetic lengths (an empty one is possible) are the same every run.
    const key = katKey('kat1024');
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const em = Buffer.alloc(128, i + 1);
      em[0] = 0;
      em[1] = 1; // block type 1: never valid for decryption
      const c = publicEncrypt({ key: createPublicKey(key), padding: constants.RSA_NO_PADDING }, em);
      seen.add(rsaPkcs1v15Decrypt(key, c).toString('hex'));
    }
    expect(seen.size).toBe(50);
  });

  it('depends on the private key: another key gives another synthetic message for the same value', () => {
    // Fixed keys, so the outcome is the same every run. A small value is below both moduli.
    const small = (k: number) => Buffer.concat([Buffer.alloc(k - 1), Buffer.from([5])]);
    const a = rsaPkcs1v15Decrypt(katKey('kat1024'), small(128));
    const b = rsaPkcs1v15Decrypt(katKey('kat2048'), small(256));
    expect(a.length + b.length).toBeGreaterThan(0);
    expect(a.equals(b)).toBe(false);
  });

  it('unpads exactly: a separator at the right place is a message, one octet earlier is not', () => {
    const dHash = Buffer.alloc(32, 9);
    const c = Buffer.alloc(64, 3);
    const em = (psLength: number, message: number[]) =>
      Buffer.concat([
        Buffer.from([0, 2]),
        Buffer.alloc(psLength, 0xaa),
        Buffer.from([0]),
        Buffer.from(message),
      ]);
    const message = Array.from({ length: 64 - 11 }, (_, i) => i);
    expect([...unpadWithImplicitRejection(em(8, message), c, dHash)]).toEqual(message);
    // PS of 7 octets: invalid, so the result is the synthetic message, not the tail.
    const bad = unpadWithImplicitRejection(em(7, [0x55, ...message]), c, dHash);
    expect(bad.equals(Buffer.from([0x55, ...message]))).toBe(false);
    expect(bad.equals(unpadWithImplicitRejection(em(7, [0x55, ...message]), c, dHash))).toBe(true);
    // The empty message (separator in the last octet) is valid.
    expect(unpadWithImplicitRejection(em(64 - 3, []), c, dHash).length).toBe(0);
  });

  it('refuses what is public anyway: a non-RSA key, a ciphertext longer than or not below the modulus', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(code(() => rsaPkcs1v15Decrypt(ec.privateKey, Buffer.alloc(32)))).toBe('key_rejected');
    expect(
      code(() => rsaPkcs1v15Decrypt(createPublicKey(rsa1024.privateKey) as never, Buffer.alloc(128))),
    ).toBe('key_rejected');
    expect(code(() => rsaPkcs1v15Decrypt(rsa1024.privateKey, Buffer.alloc(129, 1)))).toBe('malformed');
    expect(code(() => rsaPkcs1v15Decrypt(rsa1024.privateKey, Buffer.alloc(128, 0xff)))).toBe('malformed');
    expect(code(() => rsaPkcs1v15DecryptJs(rsa1024.privateKey, Buffer.alloc(128, 0xff)))).toBe('malformed');
  });
});
