import type { AcmeAuthorizationWithChallenges, AcmeOrder } from '@certwright/core';

/**
 * Records this process wrote moments ago, kept for the request an ACME client sends next: the
 * authorization read and the finalize after a new-order, the certificate download after a
 * finalize (RFC 8555 §7.4). A caller keeps here only what it may use without reading it again
 * ({@link AcmeRecent} says why for each); `ttlMs` bounds how long, `max` how many (the oldest
 * written goes first).
 */
export class RecentRecords<V> {
  readonly #entries = new Map<string, { value: V; at: number }>();

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = 60_000,
    private readonly max = 1000,
  ) {}

  add(id: string, value: V): void {
    this.#entries.delete(id);
    if (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(id, { value, at: this.now() });
  }

  get(id: string): V | undefined {
    const hit = this.#entries.get(id);
    if (!hit) return undefined;
    if (this.now() - hit.at < this.ttlMs) return hit.value;
    this.#entries.delete(id);
    return undefined;
  }

  /** The entry, removed: for a record that is used once. */
  take(id: string): V | undefined {
    const value = this.get(id);
    this.#entries.delete(id);
    return value;
  }
}

/** What the ACME order services remember between a client's requests; shared by them. */
export class AcmeRecent {
  /**
   * Orders this process created `ready` (trust_authenticated), for the finalize that follows.
   * Everything finalize checks before the signature is fixed at creation (account, identifiers,
   * validity, replaces, expiry) except the status, which the issuing transaction's claim checks
   * again (`markIssued`): an order that moved on meanwhile (finalized, invalidated) stores
   * nothing, as when it moves on while the CA signs.
   */
  readonly readyOrders: RecentRecords<{
    order: AcmeOrder;
    authorizations: AcmeAuthorizationWithChallenges[];
  }>;
  /**
   * Authorizations this process created `valid` (trust_authenticated), for the client's read of
   * them after the new-order (used once). Only a deactivation changes such an authorization
   * (expiry is computed when it is shown): one through this process forgets it; one through
   * another instance is seen once the entry's second is over, as with the account cache.
   */
  readonly validAuthorizations: RecentRecords<AcmeAuthorizationWithChallenges>;
  /**
   * Certificates this process's finalizes issued, for the download that follows: an order gets
   * its version once and a version's certificate and chain never change, so an entry is stale
   * only if the order was deleted since (within the entries' minute).
   */
  readonly issued: RecentRecords<IssuedChain>;

  constructor(now: () => number) {
    this.readyOrders = new RecentRecords(now);
    this.validAuthorizations = new RecentRecords(now, 1_000);
    this.issued = new RecentRecords(now);
  }

  /** After a deactivation of `authorizationId` through this process. */
  forgetAuthorization(authorizationId: string, orderId: string): void {
    this.validAuthorizations.take(authorizationId);
    this.readyOrders.take(orderId);
  }
}

/** An issued order's certificate as the download answers it. */
export interface IssuedChain {
  accountId: string;
  versionId: string;
  issuerId: string;
  certPem: string;
  chainPem: string;
}
