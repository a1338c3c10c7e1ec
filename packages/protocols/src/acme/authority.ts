import type { AcmeAccount, CertificateProfile, PublicJwk } from '@certwright/core';
import type { AcmeOrderAuthority } from './order-authority.js';

/**
 * What the ACME endpoints need from the rest of certwright, and nothing more (the pattern of
 * `OcspSource`): the api package adapts `Services` to it when it builds the mount; an embedder
 * may implement it over anything. Every method throws `CertwrightError`s; the endpoints map
 * their reasons with `problem.ts`.
 */

/** Which profile a request addresses. */
export interface AcmeProfileSource {
  /**
   * The profile `/acme/profile/{segment}` names: the one whose ACME `path_id` is `segment`, or
   * whose id is `segment` when it has no path id. Null when none exists or it serves no ACME.
   */
  profileForPath(segment: string): Promise<CertificateProfile | null>;
  /** The profile the shorthand `/acme/…` routes serve; null when it is missing or serves no ACME. */
  defaultProfile(): Promise<CertificateProfile | null>;
}

/** An external account binding as the new-account request carried it (RFC 8555 §7.3.4). */
export interface ExternalAccountBinding {
  /** The EAB key id (the inner JWS `kid`). */
  keyId: string;
  alg: 'HS256' | 'HS384' | 'HS512';
  /** The inner JWS members as sent: the MAC covers `protected.payload`. */
  protected: string;
  payload: string;
  signature: string;
}

export interface NewAccountRequest {
  profileId: string;
  jwk: PublicJwk;
  contact: string[];
  termsAgreed: boolean;
  externalAccountBinding?: ExternalAccountBinding;
  /** The client's address, for the per-address account limit. */
  clientAddress?: string;
}

/** Accounts (RFC 8555 §7.3). */
export interface AcmeAccountAuthority {
  account(id: string): Promise<AcmeAccount | null>;
  /** The account of a key on a profile, by RFC 7638 thumbprint. */
  accountByKey(profileId: string, thumbprint: string): Promise<AcmeAccount | null>;
}

/** Everything the ACME handler calls. */
export type AcmeAuthority = AcmeProfileSource & AcmeAccountAuthority & AcmeOrderAuthority;
