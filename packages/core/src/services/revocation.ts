import type { ManagedCertificate, RevocationReason } from '../domain/certificate.js';
import type { Storage } from '../ports/storage.js';
import type { AuditService } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import type { NotificationService } from './notifications.js';
import { reportOutcome } from './outcomes.js';
import { refuseShortLivedRevocation } from './short-lived-revocation.js';

/** Told after a revocation commits, e.g. to rebuild the CRL and OCSP cache of those issuers. */
export type RevocationListener = (event: RevocationEvent) => void | Promise<void>;

export interface RevocationEvent {
  /** Issuers whose revoked-certificate set changed; each listed once. */
  issuer_ids: string[];
  /** How many certificates became Revoked. */
  revoked: number;
  reason: RevocationReason;
  /**
   * The certificates revoked, when the caller knows them; with `version_id` when only that
   * version was (an ACME revocation of a replaced version). Remote CAs are told through these
   * (services/issuance/remote-revocation.ts).
   */
  certificate_ids?: string[];
  version_id?: string;
}

export interface RevokeOutcome {
  /** Certificates that became Revoked (ids that were already revoked or unknown are left out). */
  revoked: string[];
  issuer_ids: string[];
  /** How many of `revoked` each issuer signed (the revocation counters). */
  revoked_by_issuer: Record<string, number>;
}

/** Rows per statement; also the page limit of `certificates.list`. */
export const REVOCATION_BATCH = 500;

/** Certificates listed by name in one Revocation notification; the rest are counted. */
export const REVOCATION_NOTICE_LIST_LIMIT = 50;

type Revoked = Pick<ManagedCertificate, 'id' | 'name' | 'owner_id'>;

/**
 * Who must hear about the certificates one revocation call revoked: grouped by owner, so a
 * call raises ONE `Revocation` notification per owner (docs/api/notifications.md) — a bulk
 * revocation of 10,000 certificates of three owners stores three events, not 10,000.
 */
export class RevocationNotices {
  readonly #byOwner = new Map<string, { count: number; listed: Revoked[] }>();

  add(certificates: readonly Revoked[]): void {
    for (const c of certificates) {
      let group = this.#byOwner.get(c.owner_id);
      if (!group) {
        group = { count: 0, listed: [] };
        this.#byOwner.set(c.owner_id, group);
      }
      group.count += 1;
      if (group.listed.length < REVOCATION_NOTICE_LIST_LIMIT) group.listed.push(c);
    }
  }

  get owners(): ReadonlyMap<string, { count: number; listed: readonly Revoked[] }> {
    return this.#byOwner;
  }
}

/**
 * Revocation of certificates, shared by single, bulk, EST and ACME revocation. Certificates
 * become Revoked and every unrevoked version of them records the time and reason; listeners
 * run only after the change has committed, so they never act on a rolled-back revocation.
 */
export class RevocationService {
  readonly #listeners = new Set<RevocationListener>();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly notifications: NotificationService,
    listeners: readonly RevocationListener[] = [],
  ) {
    for (const listener of listeners) this.#listeners.add(listener);
  }

  /** Counts committed revocations, per issuer (call after the transaction committed). */
  reportRevoked(byIssuer: Readonly<Record<string, number>>): void {
    for (const [issuerId, count] of Object.entries(byIssuer)) {
      reportOutcome(this.deps, { kind: 'revocation', issuerId, outcome: 'success', count });
    }
  }

  /** Registers a listener; returns the function that removes it. */
  onRevoked(listener: RevocationListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Revokes the given certificates in one transaction with one audit event
   * (`certificates_revoked`), then tells the listeners.
   */
  async revokeCertificates(
    ids: readonly string[],
    reason: RevocationReason,
    actor: Actor,
  ): Promise<RevokeOutcome> {
    const outcome = await this.deps.storage.transaction(async (tx) => {
      const result = await this.revokeWithin(tx, ids, reason);
      if (result.revoked.length > 0) {
        await this.audit.record(
          actor,
          {
            action: 'certificates_revoked',
            category: 'cert_lifecycle',
            resource_type: 'certificate',
            resource_id: result.revoked.length === 1 ? (result.revoked[0] as string) : 'bulk',
            details: { reason, certificate_ids: result.revoked },
          },
          tx,
        );
      }
      return result;
    });
    this.reportRevoked(outcome.revoked_by_issuer);
    await this.notify({
      issuer_ids: outcome.issuer_ids,
      revoked: outcome.revoked.length,
      reason,
      certificate_ids: outcome.revoked,
    });
    return outcome;
  }

  /**
   * The writes of a revocation inside the caller's transaction, `REVOCATION_BATCH` ids per
   * statement, and the owners' Revocation notifications. No audit event and no listener call:
   * the caller records its own single event and calls `notify` once its transaction has
   * committed.
   */
  async revokeWithin(tx: Storage, ids: readonly string[], reason: RevocationReason): Promise<RevokeOutcome> {
    const revoked: string[] = [];
    const issuers = new Set<string>();
    const byIssuer: Record<string, number> = {};
    const notices = new RevocationNotices();
    const at = this.deps.clock.now();
    const unique = [...new Set(ids)];
    for (let i = 0; i < unique.length; i += REVOCATION_BATCH) {
      const chunk = unique.slice(i, i + REVOCATION_BATCH);
      const page = await tx.certificates.list({
        ids: chunk,
        notStatus: ['Revoked'],
        perPage: REVOCATION_BATCH,
      });
      if (page.items.length === 0) continue;
      await refuseShortLivedRevocation(tx, page.items, at);
      const batch = page.items.map((c) => c.id);
      for (const c of page.items) {
        issuers.add(c.issuer_id);
        byIssuer[c.issuer_id] = (byIssuer[c.issuer_id] ?? 0) + 1;
      }
      notices.add(page.items);
      await this.revokeSelected(tx, batch, reason, at);
      revoked.push(...batch);
    }
    await this.raiseNotices(tx, notices, reason);
    return { revoked, issuer_ids: [...issuers].sort(), revoked_by_issuer: byIssuer };
  }

  /**
   * One `Revocation` notification per owner of the collected certificates, inside `tx` (so it
   * exists exactly when the revocation committed). About one certificate it names it
   * (`certificate_id`); about several it gives the count and lists the first
   * `REVOCATION_NOTICE_LIST_LIMIT` by name.
   */
  async raiseNotices(tx: Storage, notices: RevocationNotices, reason: RevocationReason): Promise<void> {
    for (const [ownerId, group] of notices.owners) {
      const [first] = group.listed;
      if (group.count === 1 && first) {
        await this.notifications.raiseForCertificate(
          tx,
          first,
          'Revocation',
          `Certificate ${first.name} revoked`,
          [`Certificate ${first.name} (${first.id}) was revoked.`, `Reason: ${reason}`],
        );
        continue;
      }
      const more = group.count - group.listed.length;
      await this.notifications.raiseForOwner(
        tx,
        { owner_id: ownerId, certificate_id: null },
        'Revocation',
        `${group.count} certificates revoked`,
        [
          `${group.count} of your certificates were revoked.`,
          `Reason: ${reason}`,
          ...group.listed.map((c) => `- ${c.name} (${c.id})`),
          ...(more > 0 ? [`… and ${more} more`] : []),
        ],
      );
    }
  }

  /**
   * The two statements of a revocation for ids the caller already knows to be unrevoked
   * certificates (bulk revocation selects them with its filter): one UPDATE of the certificates,
   * one of their versions.
   */
  async revokeSelected(
    tx: Storage,
    ids: readonly string[],
    reason: RevocationReason,
    at: Date,
  ): Promise<void> {
    await tx.certificates.updateMany(ids, { status: 'Revoked' });
    await tx.versions.revokeForCertificates(ids, { revoked_at: at, reason });
  }

  /**
   * Calls every listener. A failing listener is logged and does not stop the others: the
   * revocation itself has already committed and must not be reported as failed.
   */
  async notify(event: RevocationEvent): Promise<void> {
    if (event.revoked === 0) return;
    for (const listener of this.#listeners) {
      try {
        await listener(event);
      } catch (error) {
        this.deps.logger.error({ err: error, issuer_ids: event.issuer_ids }, 'revocation listener failed');
      }
    }
  }
}
