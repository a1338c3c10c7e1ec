import type { IssuedCertificateSample } from '../issuers/connector.js';
import type { Storage } from '../ports/storage.js';

/** What storage knows about the certificates an issuer signed (for CA-material checks). */

/** Whether `issuerId` signed any certificate that has a version. */
export async function hasIssued(storage: Storage, issuerId: string): Promise<boolean> {
  // Certificates without a version never match an expiry filter: this finds issued ones only.
  return (
    (await storage.certificates.list({ issuer_id: issuerId, expiresAfter: new Date(0), perPage: 1 })).total >
    0
  );
}

/**
 * A certificate `issuerId` signed, to check re-imported CA material against: the current
 * version of one of its issued certificates (a certificate moved to another issuer after
 * issuance is skipped, its version names the issuer that signed it). Null when none is found.
 */
export async function issuedCertificateOf(
  storage: Storage,
  issuerId: string,
): Promise<IssuedCertificateSample | null> {
  // Certificates without a version never match an expiry filter: this lists issued ones only.
  const page = await storage.certificates.list({
    issuer_id: issuerId,
    expiresAfter: new Date(0),
    perPage: 50,
  });
  for (const certificate of page.items) {
    if (!certificate.current_version_id) continue;
    const version = await storage.versions.get(certificate.current_version_id);
    if (version?.issuer_id === issuerId) {
      return { serialNumber: version.serial_number, certificatePem: version.cert_pem };
    }
  }
  return null;
}
