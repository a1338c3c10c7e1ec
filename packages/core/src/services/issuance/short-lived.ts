import type { CertificateProfile } from '../../domain/profile.js';

const HOUR = 3_600_000;

/**
 * Whether a certificate is short-lived under its profile (RFC 9608): its lifetime from issuance
 * (`now` to notAfter) is at most the profile's `short_lived_validity_hours`. Measured from
 * issuance, not from notBefore, so the minute of backdating for clock skew does not push a
 * one-day certificate over a 24-hour threshold.
 */
export function isShortLived(
  profile: Pick<CertificateProfile, 'short_lived_validity_hours'> | null,
  now: Date,
  notAfter: Date,
): boolean {
  const hours = profile?.short_lived_validity_hours;
  return hours != null && notAfter.getTime() - now.getTime() <= hours * HOUR;
}
