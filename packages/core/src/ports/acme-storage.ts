import type { AcmeAccount, AcmeAuthorization, AcmeChallenge, AcmeEabKey, AcmeOrder } from '../domain/acme.js';
import type { PageRequest, PageResult } from '../domain/common.js';
import type { Lockable } from './storage.js';

/*
 * Storage of the ACME server (RFC 8555). Same error rules as the rest of the storage port:
 * not_found, conflict (reason `duplicate` for a taken unique value), invalid_reference,
 * unavailable.
 */

export type NewAcmeAccount = Omit<AcmeAccount, 'id' | 'created_at' | 'updated_at'> & { id?: string };
export type AcmeAccountPatch = Partial<Pick<AcmeAccount, 'status' | 'contact' | 'jwk' | 'jwk_thumbprint'>>;

export interface AcmeAccountRepository extends Lockable<AcmeAccount> {
  /** `conflict` (duplicate) when the profile already has an account with this key. */
  create(input: NewAcmeAccount): Promise<AcmeAccount>;
  get(id: string): Promise<AcmeAccount | null>;
  /** The account of a key (RFC 7638 thumbprint) on a profile. */
  getByThumbprint(profileId: string, thumbprint: string): Promise<AcmeAccount | null>;
  /** `conflict` (duplicate) when a new key is registered to another account of the profile. */
  update(id: string, patch: AcmeAccountPatch): Promise<AcmeAccount>;
  /** Newest first; each filter narrows the page and its total. */
  list(
    query?: PageRequest & { profile_id?: string; status?: AcmeAccount['status'] },
  ): Promise<PageResult<AcmeAccount>>;
}

export type NewAcmeChallenge = Omit<
  AcmeChallenge,
  'id' | 'authorization_id' | 'created_at' | 'updated_at' | 'validated_at' | 'error'
> & { id?: string };
export type NewAcmeAuthorization = Omit<
  AcmeAuthorization,
  'id' | 'order_id' | 'account_id' | 'created_at' | 'updated_at'
> & { id?: string; challenges: NewAcmeChallenge[] };
export type NewAcmeOrder = Omit<
  AcmeOrder,
  'id' | 'created_at' | 'updated_at' | 'error' | 'certificate_id' | 'job_id' | 'version_id'
> & { id?: string };
export type AcmeOrderPatch = Partial<
  Pick<AcmeOrder, 'status' | 'error' | 'certificate_id' | 'job_id' | 'version_id'>
>;

/** The certificate of a valid order as the download serves it (RFC 8555 §7.4.2). */
export interface AcmeOrderCertificate {
  version_id: string;
  issuer_id: string;
  cert_pem: string;
  chain_pem: string;
}

/** An authorization with its challenges, in creation order. */
export interface AcmeAuthorizationWithChallenges extends AcmeAuthorization {
  challenges: AcmeChallenge[];
}

export interface AcmeOrderRepository extends Lockable<AcmeOrder> {
  /** Stores an order with its authorizations and their challenges, all or nothing. */
  create(
    order: NewAcmeOrder,
    authorizations: readonly NewAcmeAuthorization[],
  ): Promise<{ order: AcmeOrder; authorizations: AcmeAuthorizationWithChallenges[] }>;
  get(id: string): Promise<AcmeOrder | null>;
  /** The order with its authorizations and their challenges, read together (one statement in SQL). */
  getWithAuthorizations(
    id: string,
  ): Promise<{ order: AcmeOrder; authorizations: AcmeAuthorizationWithChallenges[] } | null>;
  /**
   * The order with the certificate version it issued (`null` while it has none), read together:
   * what a certificate download needs.
   */
  getWithCertificate(
    id: string,
  ): Promise<{ order: AcmeOrder; certificate: AcmeOrderCertificate | null } | null>;
  update(id: string, patch: AcmeOrderPatch): Promise<AcmeOrder>;
  /**
   * Finalize's claim (RFC 8555 §7.4): the order becomes `valid` with this certificate, only if
   * it has no certificate yet and is `processing`, or `ready` and not expired at `now`. Returns
   * the order as stored, or `null` when it was not in such a state (nothing changed; the
   * caller reads it to say why). Run it inside the issuing transaction.
   */
  markIssued(
    id: string,
    issued: { certificate_id: string; version_id: string },
    now: Date,
  ): Promise<AcmeOrder | null>;
  /** The order that issued a managed certificate (revocation by account key). */
  findByCertificate(certificateId: string): Promise<AcmeOrder | null>;
  /** Ids of an account's orders, newest first (the account's `orders` list). */
  listIdsForAccount(accountId: string, page?: PageRequest): Promise<PageResult<string>>;
  list(
    query?: PageRequest & { profile_id?: string; account_id?: string; status?: AcmeOrder['status'] },
  ): Promise<PageResult<AcmeOrder>>;
  /** Every `pending` order of the account becomes `invalid`; returns how many. */
  invalidatePendingOfAccount(accountId: string): Promise<number>;
}

export interface AcmeAuthorizationRepository extends Lockable<AcmeAuthorization> {
  get(id: string): Promise<AcmeAuthorizationWithChallenges | null>;
  /** The authorizations of an order with their challenges, in creation order. */
  listForOrder(orderId: string): Promise<AcmeAuthorizationWithChallenges[]>;
  update(id: string, patch: Partial<Pick<AcmeAuthorization, 'status'>>): Promise<AcmeAuthorization>;
  /** Every `pending` authorization of the account's orders becomes `deactivated`; returns how many. */
  deactivatePendingOfAccount(accountId: string): Promise<number>;
}

export interface AcmeChallengeRepository extends Lockable<AcmeChallenge> {
  get(id: string): Promise<AcmeChallenge | null>;
  update(
    id: string,
    patch: Partial<Pick<AcmeChallenge, 'status' | 'validated_at' | 'error'>>,
  ): Promise<AcmeChallenge>;
}

export interface NewAcmeEabKey {
  id?: string;
  profile_id: string;
  name: string;
  /** The HMAC key; sealed before it is stored. */
  hmac_key: Uint8Array;
}

export interface AcmeEabKeyRepository {
  create(input: NewAcmeEabKey): Promise<AcmeEabKey>;
  get(id: string): Promise<AcmeEabKey | null>;
  /** Opens the HMAC key; for verifying a binding only. */
  getWithKey(id: string): Promise<{ key: AcmeEabKey; hmac_key: Uint8Array } | null>;
  /**
   * Binds an unbound key to an account. Exactly once: among concurrent binders one gets
   * `true`; a key already bound gives `false` and changes nothing.
   */
  bind(id: string, accountId: string, at: Date): Promise<boolean>;
  list(query?: PageRequest & { profile_id?: string }): Promise<PageResult<AcmeEabKey>>;
  delete(id: string): Promise<void>;
}

/** The ACME repositories, part of {@link Storage}. */
export interface AcmeStorage {
  readonly acmeAccounts: AcmeAccountRepository;
  readonly acmeOrders: AcmeOrderRepository;
  readonly acmeAuthorizations: AcmeAuthorizationRepository;
  readonly acmeChallenges: AcmeChallengeRepository;
  readonly acmeEabKeys: AcmeEabKeyRepository;
}
