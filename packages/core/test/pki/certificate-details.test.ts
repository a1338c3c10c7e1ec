import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../src/errors.js';
import {
  type CertificateDetails,
  certificateToPem,
  describeCertificate,
  describeCertificates,
  MAX_DESCRIBED_CERTIFICATES,
} from '../../src/pki/index.js';
import { openssl, workdir } from './openssl.js';
import { OPENSSL_EKU, OPENSSL_KEY_USAGE, parseOpensslText } from './support/openssl-text.js';

const CORPUS = new URL('./fuzz/corpus/', import.meta.url);
const certs = readdirSync(CORPUS)
  .filter((f) => f.startsWith('cert-') && f.endsWith('.der'))
  .sort()
  .map((f) => ({ name: f, der: readFileSync(new URL(f, CORPUS)) }));

/** What OpenSSL prints for the SANs the API groups by type. */
const opensslSans = (d: CertificateDetails): string[] => [
  ...d.subject_alt_names.dns.map((v) => `DNS:${v}`),
  ...d.subject_alt_names.ip.map((v) => `IP Address:${v.toUpperCase()}`),
  ...d.subject_alt_names.email.map((v) => `email:${v}`),
  ...d.subject_alt_names.uri.map((v) => `URI:${v}`),
];
const colons = (hex: string | null) => hex?.toUpperCase().match(/../g)?.join(':') ?? null;

describe('the decoded certificate view', () => {
  it.each(certs)('reads $name as openssl x509 -text does', async ({ der }) => {
    const work = await workdir();
    try {
      const file = await work.file('c.der', der);
      const args = ['x509', '-inform', 'DER', '-in', file, '-noout', '-text', '-nameopt', 'RFC2253'];
      const text = (await openssl([...args, '-fingerprint', '-sha256'])).stdout;
      const sha1 = (await openssl(['x509', '-inform', 'DER', '-in', file, '-noout', '-fingerprint', '-sha1']))
        .stdout;
      const o = parseOpensslText(`${text}\n${sha1}`);
      const d = describeCertificate(der);
      expect(d.version).toBe(o.version);
      expect(d.serial_number).toBe(o.serial);
      expect(d.subject.text).toBe(o.subject);
      expect(d.issuer.text).toBe(o.issuer);
      expect(d.not_before).toEqual(o.notBefore);
      expect(d.not_after).toEqual(o.notAfter);
      if (d.public_key.algorithm === 'RSA' || d.public_key.algorithm === 'EC')
        expect(d.public_key.size).toBe(o.publicKeyBits);
      expect(d.public_key.curve).toBe(o.curve);
      expect(d.fingerprint_sha256).toBe(o.sha256);
      expect(d.fingerprint_sha1).toBe(o.sha1);
      expect(opensslSans(d)).toEqual(o.sans);
      expect(d.key_usage?.map((k) => OPENSSL_KEY_USAGE[k]) ?? null).toEqual(o.keyUsage);
      expect(d.extended_key_usage?.map((k) => OPENSSL_EKU[k] ?? k) ?? null).toEqual(o.extendedKeyUsage);
      const bc = d.basic_constraints;
      expect(
        bc
          ? `CA:${bc.ca ? 'TRUE' : 'FALSE'}${bc.path_length !== null ? `, pathlen:${bc.path_length}` : ''}`
          : null,
      ).toBe(o.basicConstraints);
      expect(colons(d.subject_key_identifier)).toBe(o.subjectKeyIdentifier);
      expect(colons(d.authority_key_identifier)).toBe(o.authorityKeyIdentifier);
      expect(d.crl_distribution_points).toEqual(o.crlDistributionPoints);
      expect(d.ocsp_urls).toEqual(o.ocsp);
      expect(d.ca_issuer_urls).toEqual(o.caIssuers);
      expect(d.policies).toEqual(o.policies);
      expect(d.pem).toBe(certificateToPem(der));
    } finally {
      await work.cleanup();
    }
  });

  it('lists every extension with its name and criticality, and tells a self-signed CA from a leaf', () => {
    const ca = describeCertificate(certs.find((c) => c.name === 'cert-ca-p256.der')!.der);
    expect(ca.self_signed).toBe(true);
    expect(ca.extensions).toContainEqual({ oid: '2.5.29.30', name: 'nameConstraints', critical: true });
    const leaf = describeCertificate(certs.find((c) => c.name === 'cert-leaf-rsa.der')!.der);
    expect(leaf.self_signed).toBe(false);
    expect(leaf.extensions).toContainEqual({
      oid: '1.3.6.1.5.5.7.1.24',
      name: 'tlsFeature',
      critical: false,
    });
    expect(leaf.signature_algorithm).toBe('ecdsaWithSHA256');
  });

  it('decodes a chain in order, and refuses more certificates than a chain holds with a typed error', () => {
    const pems = certs.map((c) => certificateToPem(c.der));
    expect(describeCertificates(pems.join('')).map((d) => d.subject.text)).toEqual(
      certs.map((c) => describeCertificate(c.der).subject.text),
    );
    const many = Array.from({ length: MAX_DESCRIBED_CERTIFICATES + 1 }, () => pems[0]).join('');
    let caught: unknown;
    try {
      describeCertificates(many);
    } catch (error) {
      caught = error;
    }
    expect(isCertwrightError(caught) && caught.reason).toBe('too_large');
    let bad: unknown;
    try {
      describeCertificate(Buffer.from('30030201ff', 'hex'));
    } catch (error) {
      bad = error;
    }
    expect(isCertwrightError(bad) && bad.reason).toBe('malformed');
  });
});
