import { createSelfSignedCertificate, generateKeyPair, readCertificate } from '@certwright/core/pki';
import { describe, expect, it } from 'vitest';
import { certificateInfo, certificatePublicKey } from '../../../src/pki/cms/certificate-cache.js';

/**
 * The per-buffer memory of certificate readings in CMS: the same answers as readCertificate,
 * one reading per buffer, and a buffer altered in place read again (never answered from memory).
 */
describe('CMS certificate readings remembered per buffer', () => {
  it('answers as readCertificate, once per buffer, and reads an altered buffer again', async () => {
    const key = await generateKeyPair('ECDSA-P256');
    const now = Date.now();
    const make = (cn: string) =>
      Buffer.from(
        createSelfSignedCertificate(
          {
            subject: [{ type: 'CN', value: cn }],
            notBefore: new Date(now - 60_000),
            notAfter: new Date(now + 86_400_000),
          },
          key.privateKey,
        ).der,
      );
    const der = make('first.cache.test');
    const info = certificateInfo(der);
    expect(info.subject.text).toBe(readCertificate(der).subject.text);
    expect(certificateInfo(der)).toBe(info);
    const publicKey = certificatePublicKey(der);
    expect(certificatePublicKey(der)).toBe(publicKey);
    expect(publicKey.asymmetricKeyType).toBe('ec');

    // Same length, other content: overwritten in place, the buffer is read anew. (Signature and
    // serial lengths vary by a byte now and then: make one of the same length.)
    let other = make('other.cache.test');
    for (let i = 0; i < 50 && other.length !== der.length; i++) other = make('other.cache.test');
    expect(other.length).toBe(der.length);
    other.copy(der);
    expect(certificateInfo(der)).not.toBe(info);
    expect(certificateInfo(der).subject.text).toBe('CN=other.cache.test');

    // Garbage in place: the reading fails as readCertificate does, nothing stale is answered.
    der.fill(0);
    expect(() => certificateInfo(der)).toThrow();
    expect(() => readCertificate(der)).toThrow();
  });
});
