import { createHash } from 'node:crypto';
import type { AcmeAccount, CertificateVersion, ManagedCertificate, Storage } from '@certwright/core';
import { fail } from '@certwright/core';
import {
  type AcmeCertId,
  authorityKeyIdentifierOf,
  parseAcmeCertId,
  readCertificate,
} from '@certwright/core/pki';

/** Issuers scanned per page when a serial is looked up without knowing its issuer. */
const ISSUER_PAGE = 100;

/**
 * The version with this serial among every issuer's certificates that `matches` accepts. A
 * serial alone does not name a certificate (each issuer numbers its own), so the caller checks
 * what ties it to one issuer: the AKI for a certID, the exact bytes for a certificate.
 */
export async function findIssuedVersion(
  storage: Storage,
  serialHex: string,
  matches: (version: CertificateVersion) => boolean,
): Promise<CertificateVersion | null> {
  for (let page = 1; ; page++) {
    const issuers = await storage.issuers.list({ page, perPage: ISSUER_PAGE });
    for (const issuer of issuers.items) {
      const version = await storage.versions.findBySerial(issuer.id, serialHex);
      if (version && matches(version)) return version;
    }
    if (page * ISSUER_PAGE >= issuers.total || issuers.items.length === 0) return null;
  }
}

/** The version a certID names, or null. */
export function findByCertId(storage: Storage, certId: AcmeCertId): Promise<CertificateVersion | null> {
  const wanted = Buffer.from(certId.keyIdentifier);
  return findIssuedVersion(storage, certId.serialNumber, (version) => {
    const aki = authorityKeyIdentifierOf(readCertificate(version.cert_pem).extensions);
    return aki !== null && wanted.equals(Buffer.from(aki));
  });
}

/** The version whose certificate is exactly these bytes, or null. */
export function findByDer(storage: Storage, der: Uint8Array): Promise<CertificateVersion | null> {
  const info = readCertificate(der);
  const fingerprint = createHash('sha256').update(der).digest('hex');
  return findIssuedVersion(storage, info.serialNumber, (v) => v.fingerprint_sha256 === fingerprint);
}

/** Whether `account` obtained this managed certificate through one of its orders. */
export async function issuedToAccount(
  storage: Storage,
  certificateId: string,
  account: Pick<AcmeAccount, 'id'>,
): Promise<boolean> {
  // Every order of one certificate belongs to one account: `replaces` only accepts a
  // certificate of the ordering account, so the first order found speaks for all of them.
  const order = await storage.acmeOrders.findByCertificate(certificateId);
  return order !== null && order.account_id === account.id;
}

/**
 * RFC 9773 §5 `replaces`: the certificate must be this account's, still in force (neither
 * revoked nor expired) and not yet replaced (`conflict` with `extra.acme_problem`
 * `alreadyReplaced`). Returns the managed certificate the new order renews.
 */
export async function resolveReplaces(
  storage: Storage,
  replaces: string,
  account: Pick<AcmeAccount, 'id'>,
  now: Date,
): Promise<{ certificate: ManagedCertificate; version: CertificateVersion }> {
  const refuse = (why: string) =>
    fail('invalid_input', `replaces: ${why}`, { fields: [{ field: 'replaces', message: why }] });
  const version = await findByCertId(storage, parseAcmeCertId(replaces));
  if (!version || !(await issuedToAccount(storage, version.certificate_id, account)))
    throw refuse('names no certificate of this account');
  const certificate = await storage.certificates.get(version.certificate_id);
  if (!certificate) throw refuse('names no certificate of this account');
  if (version.revoked_at !== null || certificate.status === 'Revoked')
    throw refuse('the certificate is revoked');
  if (version.not_after.getTime() <= now.getTime()) throw refuse('the certificate has expired');
  // RFC 9773 §5 alreadyReplaced: a renewal already put a newer version on the certificate.
  if (certificate.current_version_id !== version.id)
    throw fail('conflict', 'replaces: the certificate has already been replaced by a renewal', {
      extra: { acme_problem: 'alreadyReplaced' },
    });
  return { certificate, version };
}
