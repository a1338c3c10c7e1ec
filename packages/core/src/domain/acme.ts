import { z } from 'zod';
import type { AcmeChallengeType } from './profile.js';

/**
 * The ACME server's records (RFC 8555 §7.1). Status names are RFC 8555's; transitions are in
 * docs/protocols/acme.md.
 */

export const ACME_ACCOUNT_STATUSES = ['valid', 'deactivated', 'revoked'] as const;
export type AcmeAccountStatus = (typeof ACME_ACCOUNT_STATUSES)[number];
export const ACME_ORDER_STATUSES = ['pending', 'ready', 'processing', 'valid', 'invalid'] as const;
export type AcmeOrderStatus = (typeof ACME_ORDER_STATUSES)[number];
export const ACME_AUTHZ_STATUSES = [
  'pending',
  'valid',
  'invalid',
  'deactivated',
  'expired',
  'revoked',
] as const;
export type AcmeAuthorizationStatus = (typeof ACME_AUTHZ_STATUSES)[number];
export const ACME_CHALLENGE_STATUSES = ['pending', 'processing', 'valid', 'invalid'] as const;
export type AcmeChallengeStatus = (typeof ACME_CHALLENGE_STATUSES)[number];

/** RFC 8555 §9.7.7 `dns`, RFC 8738 `ip`. */
export const acmeIdentifierSchema = z.object({
  type: z.enum(['dns', 'ip']),
  value: z.string().min(1).max(253),
});
export type AcmeIdentifier = z.infer<typeof acmeIdentifierSchema>;

/**
 * An RFC 8555 §6.7 problem as stored on an order or a challenge: `type` is the short name
 * (`connection`, `dns`, `tls`, `incorrectResponse`, `badCSR`, `serverInternal` …) the protocol
 * layer prefixes with `urn:ietf:params:acme:error:`.
 */
export interface AcmeProblem {
  type: string;
  detail: string;
}

/** The public part of an account key, as the client sent it (RFC 7517 members only). */
export type PublicJwk = Record<string, string>;

export interface AcmeAccount {
  id: string;
  profile_id: string;
  status: AcmeAccountStatus;
  jwk: PublicJwk;
  /** RFC 7638 SHA-256 thumbprint, base64url. */
  jwk_thumbprint: string;
  contact: string[];
  terms_agreed: boolean;
  /** The external-account-binding key the account was created with. */
  eab_key_id: string | null;
  created_ip: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface AcmeOrder {
  id: string;
  account_id: string;
  profile_id: string;
  status: AcmeOrderStatus;
  identifiers: AcmeIdentifier[];
  not_before: Date | null;
  not_after: Date | null;
  expires: Date;
  error: AcmeProblem | null;
  /** The directory profile the client asked for (draft-aaron-acme-profiles `profile`). */
  acme_profile: string | null;
  /** RFC 9773 `replaces`: the certID of the certificate this order renews. */
  replaces: string | null;
  /** The managed certificate created at finalize; set with the move to `processing`. */
  certificate_id: string | null;
  /** The issuance job that signs it: the one issuance of this order, whatever crashes. */
  job_id: string | null;
  /** The issued version, once the order is `valid`. */
  version_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface AcmeAuthorization {
  id: string;
  order_id: string;
  account_id: string;
  identifier: AcmeIdentifier;
  wildcard: boolean;
  status: AcmeAuthorizationStatus;
  expires: Date;
  created_at: Date;
  updated_at: Date;
}

export interface AcmeChallenge {
  id: string;
  authorization_id: string;
  type: AcmeChallengeType;
  /** 128 random bits, base64url (RFC 8555 §8.1). */
  token: string;
  status: AcmeChallengeStatus;
  validated_at: Date | null;
  error: AcmeProblem | null;
  created_at: Date;
  updated_at: Date;
}

/** An external-account-binding key (RFC 8555 §7.3.4): its id is the EAB `kid`. */
export interface AcmeEabKey {
  id: string;
  profile_id: string;
  name: string;
  /** The account it was bound to; a key binds one account only. */
  account_id: string | null;
  bound_at: Date | null;
  created_at: Date;
  updated_at: Date;
}
