import type { AcmeAccount, CertificateProfile, PublicJwk } from '@certwright/core';
import type { AcmeOrderAuthority } from './order-authority.js';

/**
 * What the ACME endpoints need from the rest of certwright, and nothing more (the pattern of
 * `OcspSource`): `AcmeServer` (`createAcmeServer`, `server/`) implements it over core's
 * services; an embedder may implement it over anything. Every method throws `CertwrightError`s; the endpoints map
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
  /**
   * Creates an account. `duplicate` (with `extra.account_id`) when the key has one already;
   * `unauthenticated` for an external account binding that does not verify or was used
   * before; `invalid_input` for contacts or a missing agreement to the terms; `rate_limited`
   * (with `extra.retry_after_seconds`) over the profile's per-address limit.
   */
  createAccount(input: NewAccountRequest): Promise<AcmeAccount>;
  updateAccount(id: string, patch: { contact: string[] }): Promise<AcmeAccount>;
  /** valid → deactivated (RFC 8555 §7.3.6); deactivating again changes nothing. */
  deactivateAccount(id: string): Promise<AcmeAccount>;
  /**
   * Swaps the account key atomically (RFC 8555 §7.3.5). `conflict` when the current key is no
   * longer `oldThumbprint` (a concurrent rollover), `duplicate` (with `extra.account_id`) when
   * the new key belongs to an account already.
   */
  changeAccountKey(id: string, change: { oldThumbprint: string; jwk: PublicJwk }): Promise<AcmeAccount>;
  /** Ids of the account's orders, newest first, one page (RFC 8555 §7.1.2.1). */
  accountOrderIds(id: string, page: number, perPage: number): Promise<{ ids: string[]; total: number }>;
}

/** Everything the ACME handler calls. */
export type AcmeAuthority = AcmeProfileSource & AcmeAccountAuthority & AcmeOrderAuthority;
