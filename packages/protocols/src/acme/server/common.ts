import type {
  AcmeAccount,
  AcmeAuthorization,
  AcmeAuthorizationStatus,
  AcmeAuthorizationWithChallenges,
  AcmeChallenge,
  AcmeOrder,
  AcmeOrderStatus,
  Actor,
  EnrollmentService,
} from '@certwright/core';
import { fail } from '@certwright/core';

/**
 * How long a new order and its authorizations stay usable (RFC 8555 §7.1.3 `expires`). A week
 * leaves room for DNS propagation and manual dns-01 without keeping stale proofs around.
 */
export const ACME_ORDER_LIFETIME_MS = 7 * 24 * 60 * 60_000;

/**
 * `Retry-After` for objects whose state the server is about to change (a processing challenge,
 * a pending or processing order). Validation and local issuance take about a second; clients
 * that find nothing in the header wait 5 s or more (lego).
 */
export const ACME_RETRY_AFTER_SECONDS = 1;

/** The managed-certificate side of finalize: `services.pki.enrollment`, the one issuance path. */
export type AcmeEnrollment = Pick<EnrollmentService, 'enroll'>;

/** The actor an account's requests are audited as. */
export const acmeActor = (account: Pick<AcmeAccount, 'id'>): Actor => ({ type: 'anonymous', id: account.id });

/**
 * An object of another account answers exactly like one that does not exist (`not_found`):
 * ids are random, and a client learns nothing about other accounts' orders by probing them.
 */
export function ownedBy<T extends { account_id: string }>(
  record: T | null,
  account: Pick<AcmeAccount, 'id'>,
  what: string,
  id: string,
): T {
  if (!record || record.account_id !== account.id) throw fail('not_found', `${what} '${id}' does not exist`);
  return record;
}

/** RFC 8555 §7.1.6: a pending or ready order past `expires` is invalid. */
export function effectiveOrderStatus(order: AcmeOrder, now: Date): AcmeOrderStatus {
  if ((order.status === 'pending' || order.status === 'ready') && now.getTime() >= order.expires.getTime())
    return 'invalid';
  return order.status;
}

/** RFC 8555 §7.1.6: a pending or valid authorization past `expires` is expired. */
export function effectiveAuthorizationStatus(authz: AcmeAuthorization, now: Date): AcmeAuthorizationStatus {
  if ((authz.status === 'pending' || authz.status === 'valid') && now.getTime() >= authz.expires.getTime())
    return 'expired';
  return authz.status;
}

/** An authorization as a client sees it now (status after expiry). */
export function authorizationView(
  authz: AcmeAuthorizationWithChallenges,
  now: Date,
): AcmeAuthorizationWithChallenges {
  return { ...authz, status: effectiveAuthorizationStatus(authz, now) };
}

/** An order as a client sees it, with what the wire layer needs beside the record. */
export interface AcmeOrderView {
  order: AcmeOrder;
  /** The order's authorizations (their ids make the order's `authorizations` list). */
  authorizations: AcmeAuthorizationWithChallenges[];
  /** Set while the server is about to change the order: the client polls after it. */
  retryAfterSeconds?: number;
}

export function orderView(
  order: AcmeOrder,
  authorizations: AcmeAuthorizationWithChallenges[],
  now: Date,
): AcmeOrderView {
  const status = effectiveOrderStatus(order, now);
  const view: AcmeOrderView = {
    order: { ...order, status },
    authorizations: authorizations.map((a) => authorizationView(a, now)),
  };
  if (status === 'pending' || status === 'processing') view.retryAfterSeconds = ACME_RETRY_AFTER_SECONDS;
  return view;
}

/** A challenge as a client sees it, with its authorization (for the `up` link). */
export interface AcmeChallengeView {
  challenge: AcmeChallenge;
  authorization: AcmeAuthorization;
  retryAfterSeconds?: number;
}

export function challengeView(challenge: AcmeChallenge, authorization: AcmeAuthorization): AcmeChallengeView {
  const view: AcmeChallengeView = { challenge, authorization };
  if (challenge.status === 'processing') view.retryAfterSeconds = ACME_RETRY_AFTER_SECONDS;
  return view;
}
