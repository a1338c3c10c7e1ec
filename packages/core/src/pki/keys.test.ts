import { generateKeyPairSync, privateDecrypt, publicEncrypt, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readRoot } from './der-reader.js';
import { bytesToIp, ipToBytes } from './ip.js';
import {
  describePublicKey,
  exportPkcs8Der,
  exportPkcs8Pem,
  exportSpkiDer,
  exportSpkiPem,
  generateKeyPair,
  importPkcs8Der,
  importPkcs8Pem,
  importSpkiDer,
  importSpkiPem,
  KEY_ALGORITHMS,
  keyAlgorithmName,
} from './keys.js';
import { decodeName, encodeName, formatName } from './name.js';
import { isPostQuantumParameterSet } from './post-quantum.js';

describe('keys', () => {
  // ML-DSA and SLH-DSA need Node.js 24: test/pki/post-quantum.test.ts covers them there.
  for (const alg of KEY_ALGORITHMS.filter((a) => !isPostQuantumParameterSet(a))) {
    it(`generates, describes and round-trips ${alg} through PKCS#8 and SPKI`, async () => {
      const { privateKey, publicKey } = await generateKeyPair(alg);
      expect(keyAlgorithmName(describePublicKey(publicKey))).toBe(alg);
      expect(describePublicKey(exportSpkiDer(privateKey))).toEqual(describePublicKey(publicKey));
      const back = importPkcs8Der(exportPkcs8Der(privateKey));
      expect(exportSpkiDer(back).equals(exportSpkiDer(publicKey))).toBe(true);
      expect(exportSpkiDer(importPkcs8Pem(exportPkcs8Pem(privateKey))).equals(exportSpkiDer(publicKey))).toBe(
        true,
      );
      expect(exportSpkiDer(importSpkiPem(exportSpkiPem(publicKey))).equals(exportSpkiDer(publicKey))).toBe(
        true,
      );
    }, 30_000);
  }
  it('imports EC public keys of every curve as the very key the SPKI holds', () => {
    for (const namedCurve of ['P-256', 'P-384', 'P-521']) {
      for (let i = 0; i < 20; i++) {
        const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve });
        const der = publicKey.export({ format: 'der', type: 'spki' });
        const imported = importSpkiDer(der);
        expect(imported.equals(publicKey)).toBe(true);
        expect(Buffer.from(exportSpkiDer(imported)).equals(der)).toBe(true);
        const signature = sign('sha256', der, privateKey);
        expect(verify('sha256', der, imported, signature)).toBe(true);
      }
    }
  });

  it('imports RSA public keys as the very key the SPKI holds, and encrypts to and verifies with them', () => {
    for (const [modulusLength, publicExponent] of [
      [2048, 65537],
      [3072, 3],
      [4096, 65537],
    ] as const) {
      const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength, publicExponent });
      const der = publicKey.export({ format: 'der', type: 'spki' });
      const imported = importSpkiDer(der);
      expect(imported.equals(publicKey)).toBe(true);
      expect(imported.asymmetricKeyType).toBe('rsa');
      expect(Buffer.from(exportSpkiDer(imported)).equals(der)).toBe(true);
      expect(verify('sha256', der, imported, sign('sha256', der, privateKey))).toBe(true);
      const secret = Buffer.from('content-encryption key');
      expect(privateDecrypt(privateKey, publicEncrypt(imported, secret)).equals(secret)).toBe(true);
    }
  }, 60_000);

  it('imports the key the bytes hold now, even when a buffer imported before was rewritten in place', () => {
    const a = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    const b = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    const bytes = Buffer.from(a.export({ format: 'der', type: 'spki' }));
    expect(importSpkiDer(bytes).equals(a)).toBe(true);
    expect(importSpkiDer(Buffer.from(bytes)).equals(a)).toBe(true);
    b.export({ format: 'der', type: 'spki' }).copy(bytes);
    expect(importSpkiDer(bytes).equals(b)).toBe(true);
    // A refused key is refused every time, not remembered as anything.
    const truncated = bytes.subarray(0, bytes.length - 1);
    expect(() => importSpkiDer(truncated)).toThrow();
    expect(() => importSpkiDer(truncated)).toThrow();
  }, 30_000);

  it('refuses garbage and the wrong PEM label', async () => {
    expect(() => importPkcs8Der(Buffer.from('3000', 'hex'))).toThrow(/PKCS#8/);
    const { publicKey } = await generateKeyPair('ECDSA-P256');
    expect(() => importPkcs8Pem(exportSpkiPem(publicKey))).toThrow(/expected PRIVATE KEY/);
    expect(() => exportPkcs8Der(publicKey)).toThrow(/private key/);
  });
});

describe('names and IP addresses', () => {
  it('writes RFC 4514 strings in reverse (DER) order and reads them back', () => {
    const der = encodeName('CN=a\\,b,OU=x+O=y,C=DE');
    const name = decodeName(der, readRoot(der));
    expect(name.rdns.map((r) => r.map((a) => a.type))).toEqual([['C'], ['O', 'OU'], ['CN']]);
    expect(name.rdns[2]![0]!.value).toBe('a,b');
    expect(formatName(name.rdns)).toBe('CN=a\\,b,O=y+OU=x,C=DE');
    expect(() => encodeName('C=Germany')).toThrow(/two-letter/);
    expect(() => encodeName('XX=1')).toThrow(/unknown/);
  });
  it('converts IPv4 and IPv6 addresses', () => {
    for (const [text, out] of [
      ['192.0.2.1', '192.0.2.1'],
      ['2001:db8::1', '2001:db8::1'],
      ['::1', '::1'],
      ['::ffff:192.0.2.1', '::ffff:c000:201'],
      ['2001:0db8:0000:0000:1:0:0:1', '2001:db8::1:0:0:1'],
    ]) {
      expect(bytesToIp(ipToBytes(text!))).toBe(out);
    }
    expect(() => ipToBytes('300.1.1.1')).toThrow(/not an IP/);
  });
});
