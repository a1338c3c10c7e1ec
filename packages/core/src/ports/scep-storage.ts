/*
 * Storage of the SCEP server (RFC 8894): the registration authority (RA) certificate of each
 * profile, whose key clients encrypt their requests to. Same error rules as the rest of the
 * storage port.
 */

/** The RA of a profile as stored. The private keys are sealed at rest by storage. */
export interface ScepRaRecord {
  profile_id: string;
  /** The issuer that signed the RA certificate (a changed profile issuer means a new RA). */
  issuer_id: string;
  certificate_pem: string;
  /** SHA-256 of the certificate DER, hex: what a rotation compares against. */
  fingerprint_sha256: string;
  private_key_pem: string;
  not_before: Date;
  not_after: Date;
  /**
   * The RA before the last rotation: clients that fetched it with GetCACert shortly before
   * still encrypt to it, so it keeps decrypting until it expires.
   */
  previous_certificate_pem: string | null;
  previous_private_key_pem: string | null;
  updated_at: Date;
}

export type NewScepRa = Omit<ScepRaRecord, 'updated_at'>;

export interface ScepRaRepository {
  get(profileId: string): Promise<ScepRaRecord | null>;
  /**
   * Stores `next` only if the profile's RA is still the one with fingerprint `expected` (null:
   * none stored yet), so two instances rotating at once agree on one RA. Returns the record in
   * force afterwards: `next`, or the other writer's when it came first.
   */
  replace(next: NewScepRa, expected: string | null): Promise<ScepRaRecord>;
}

export interface ScepStorage {
  readonly scepRa: ScepRaRepository;
}
