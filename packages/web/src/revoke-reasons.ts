/**
 * The revocation reasons the console offers, for one certificate and for a selection alike.
 * `certificateHold` is left out because the console has no way to lift a hold (a hold that can
 * never be released is a revocation under a misleading name), and `aACompromise` concerns
 * attribute certificates, which certwright does not issue (RFC 5280 §5.3.1).
 */
export const REVOKE_REASONS = [
  'unspecified',
  'keyCompromise',
  'caCompromise',
  'affiliationChanged',
  'superseded',
  'cessationOfOperation',
  'privilegeWithdrawn',
] as const;
export type RevokeReason = (typeof REVOKE_REASONS)[number];
