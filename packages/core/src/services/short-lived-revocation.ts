import type { ManagedCertificate } from '../domain/certificate.js';
import { fail } from '../errors.js';
import { readCertificate } from '../pki/certificate-info.js';
import { OID } from '../pki/oids.js';
import type { Storage } from '../ports/storage.js';

/** The longest lifetime a profile may call short-lived (`short_lived_validity_hours` ≤ 720). */
const MAX_SHORT_LIVED_MS = 720 * 3_600_000;

/**
 * Refuses to revoke a certificate whose current version carries noRevAvail (RFC 9608): no CRL
 * or OCSP answer covers it, so "revoked" would be a promise nobody can check. Only versions
 * that could be short-lived at all (expiring within the longest threshold) are read.
 */
export async function refuseShortLivedRevocation(
  tx: Storage,
  certificates: readonly Pick<ManagedCertificate, 'id' | 'current_version_id' | 'expires_at'>[],
  now: Date,
): Promise<void> {
  for (const c of certificates) {
    if (!c.current_version_id || !c.expires_at) continue;
    if (c.expires_at.getTime() - now.getTime() > MAX_SHORT_LIVED_MS) continue;
    const version = await tx.versions.get(c.current_version_id);
    if (!version) continue;
    const extensions = readCertificate(version.cert_pem).extensions;
    if (!extensions.some((e) => e.oid === OID.noRevAvail)) continue;
    throw fail(
      'revocation_unavailable',
      `certificate '${c.id}' is short-lived (noRevAvail, RFC 9608): no CRL or OCSP covers it, so it cannot be revoked; it expires at ${version.not_after.toISOString()}`,
    );
  }
}
