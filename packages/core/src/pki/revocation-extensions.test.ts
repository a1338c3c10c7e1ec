import { describe, expect, it } from 'vitest';
import { createSelfSignedCertificate, issueCertificate, prepareIssuer } from './certificate.js';
import { readCertificate } from './certificate-info.js';
import { buildCrl } from './crl.js';
import { decodeCrlDistributionPoints } from './extensions.js';
import { generateKeyPair } from './keys.js';
import { OID } from './oids.js';

const DAY = 86_400_000;
const now = new Date('2026-01-01T00:00:00Z');

async function authority() {
  const key = await generateKeyPair('ECDSA-P256');
  const ca = createSelfSignedCertificate(
    {
      subject: 'CN=revocation extensions CA',
      notBefore: now,
      notAfter: new Date(now.getTime() + 30 * DAY),
      basicConstraints: { ca: true },
    },
    key.privateKey,
  );
  return { key, issuer: prepareIssuer(ca.der, key.privateKey) };
}

describe('revocation extensions of the builders', () => {
  it('writes freshestCRL like a CDP and noRevAvail as NULL, and refuses noRevAvail with revocation pointers', async () => {
    const { issuer } = await authority();
    const leafKey = await generateKeyPair('ECDSA-P256');
    const template = {
      subject: 'CN=leaf.example.test',
      publicKey: leafKey.publicKey,
      notBefore: now,
      notAfter: new Date(now.getTime() + DAY),
    };
    const withDelta = readCertificate(
      issueCertificate({ ...template, freshestCrl: ['http://crl.example.test/delta.crl'] }, issuer).der,
    );
    const freshest = withDelta.extensions.find((e) => e.oid === OID.freshestCRL)!;
    expect(freshest.critical).toBe(false);
    expect(decodeCrlDistributionPoints(freshest.value)).toEqual(['http://crl.example.test/delta.crl']);

    const short = readCertificate(
      issueCertificate(
        { ...template, noRevAvail: true, authorityInfoAccess: { caIssuers: ['http://a.test/ca'] } },
        issuer,
      ).der,
    );
    const noRev = short.extensions.find((e) => e.oid === OID.noRevAvail)!;
    expect([noRev.critical, Buffer.from(noRev.value).toString('hex')]).toEqual([false, '0500']);

    for (const pointers of [
      { crlDistributionPoints: ['http://crl.test/a.crl'] },
      { freshestCrl: ['http://crl.test/d.crl'] },
      { authorityInfoAccess: { ocsp: ['http://ocsp.test/'] } },
    ]) {
      expect(() => issueCertificate({ ...template, noRevAvail: true, ...pointers }, issuer)).toThrow(
        /RFC 9608/,
      );
    }
  });

  it('marks a delta CRL with a critical Delta CRL Indicator and refuses a base number not below its own', async () => {
    const { key, issuer } = await authority();
    const options = {
      issuerCert: issuer.certificate,
      issuerKey: key.privateKey,
      thisUpdate: now,
      nextUpdate: new Date(now.getTime() + DAY),
      crlNumber: 10n,
    };
    const delta = buildCrl({ ...options, deltaBaseCrlNumber: 7n });
    // DeltaCRLIndicator: OID 2.5.29.27, BOOLEAN TRUE, OCTET STRING { INTEGER 7 }.
    expect(delta.toString('hex')).toContain('0603551d1b0101ff0403020107');
    expect(buildCrl(options).toString('hex')).not.toContain('0603551d1b');
    expect(() => buildCrl({ ...options, deltaBaseCrlNumber: 10n })).toThrow(/base CRL number below/);
  });
});
