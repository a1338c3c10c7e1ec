import { createHash } from 'node:crypto';
import { certificateToPem } from '../pki/certificate.js';
import { signatureAlgorithmOf } from '../pki/certificate-details.js';
import { type CertificateInfo, readCertificate } from '../pki/certificate-info.js';
import { Tag } from '../pki/der.js';
import { children, expectTag, readOid, readRoot } from '../pki/der-reader.js';
import { decodeSubjectAltName } from '../pki/extensions.js';
import { OID } from '../pki/oids.js';
import type { NewDiscoveredCertificate } from '../ports/discovery-storage.js';

/** Certificates kept of one served chain: a real chain has 2–4; the rest is noise or an attack. */
export const MAX_CHAIN_CERTIFICATES = 10;

/** SHA-256 of the DER, lower-case hex (the form versions store). */
export const fingerprintOf = (der: Uint8Array): string => createHash('sha256').update(der).digest('hex');

function keyOf(info: CertificateInfo): { key_algorithm: string; key_size: number } {
  const key = info.publicKey;
  if (key.type === 'RSA') return { key_algorithm: 'RSA', key_size: key.bits };
  if (key.type === 'EC') return { key_algorithm: 'ECDSA', key_size: Number(key.curve.slice(2)) };
  if (key.type === 'ML-DSA' || key.type === 'SLH-DSA')
    return { key_algorithm: key.parameterSet, key_size: 0 };
  return { key_algorithm: key.type, key_size: 0 };
}

function sansOf(info: CertificateInfo): string[] {
  const ext = info.extensions.find((e) => e.oid === OID.subjectAltName);
  if (!ext) return [];
  return decodeSubjectAltName(ext.value)
    .filter(
      (n): n is { type: 'dns' | 'ip' | 'email' | 'uri'; value: string } =>
        'value' in n && typeof n.value === 'string',
    )
    .map((n) => (n.type === 'dns' ? n.value : `${n.type}:${n.value}`))
    .slice(0, 1000);
}

/**
 * What a discovery record holds about a served chain (leaf first, DER). The leaf passes our
 * bounded parser (`malformed`, `too_large`, `key_rejected` otherwise); chain certificates are
 * kept as PEM up to `MAX_CHAIN_CERTIFICATES`.
 */
export function describeChain(chain: readonly Uint8Array[]): NewDiscoveredCertificate {
  const leaf = chain[0]!;
  const info = readCertificate(leaf);
  const subject = info.subject.text;
  const issuer = info.issuer.text;
  return {
    fingerprint_sha256: fingerprintOf(leaf),
    subject: subject.slice(0, 1024),
    issuer: issuer.slice(0, 1024),
    serial_number: info.serialNumber,
    sans: sansOf(info),
    not_before: info.notBefore,
    not_after: info.notAfter,
    ...keyOf(info),
    signature_algorithm: signatureAlgorithmOf(leaf),
    self_signed: Buffer.from(info.subject.der).equals(Buffer.from(info.issuer.der)),
    cert_pem: certificateToPem(leaf),
    chain_pem: chain
      .slice(1, MAX_CHAIN_CERTIFICATES)
      .map((der) => certificateToPem(der))
      .join(''),
  };
}
