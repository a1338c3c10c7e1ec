import { notFound } from '../../errors.js';
import type { IssuerConnector, IssuerConnectorRegistry } from '../../issuers/connector.js';
import type { ServiceDeps } from '../context.js';
import { hasIssued, issuedCertificateOf } from '../issued-certificates.js';

/**
 * Connectors per issuer, built once and reused while the issuer record is unchanged. The
 * record's updated_at is re-read at most every `recheckMs`, so a config change made by another
 * instance is picked up within that time.
 */
export class IssuerConnectorCache {
  readonly #entries = new Map<
    string,
    { stamp: number; checkedAt: number; connector: Promise<IssuerConnector> }
  >();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly registry: IssuerConnectorRegistry,
    private readonly publicBaseUrl: string | undefined,
    private readonly recheckMs = 5_000,
  ) {}

  /** The issuer's connector; null when there is no such issuer. Unsupported types throw. */
  async get(issuerId: string): Promise<IssuerConnector | null> {
    const cached = this.#entries.get(issuerId);
    const nowMs = this.deps.clock.now().getTime();
    if (cached && nowMs - cached.checkedAt < this.recheckMs) return cached.connector;
    const issuer = await this.deps.storage.issuers.get(issuerId);
    if (!issuer) {
      this.#entries.delete(issuerId);
      return null;
    }
    const stamp = issuer.updated_at.getTime();
    if (cached && cached.stamp === stamp) {
      cached.checkedAt = nowMs;
      return cached.connector;
    }
    const connector = (async () => {
      const withConfig = await this.deps.storage.issuers.getWithConfig(issuerId);
      if (!withConfig) throw notFound('issuer', issuerId);
      return this.registry.create({
        issuer: withConfig,
        now: () => this.deps.clock.now(),
        persistConfig: (mutate) => this.persistConfig(issuerId, mutate),
        hasIssued: () => hasIssued(this.deps.storage, issuerId),
        issuedCertificate: () => issuedCertificateOf(this.deps.storage, issuerId),
        issuedCertificateBySerial: async (serial) => {
          const version = await this.deps.storage.versions.findBySerial(issuerId, serial);
          return version ? { serialNumber: version.serial_number, certificatePem: version.cert_pem } : null;
        },
        issuedVersion: async (versionId) => {
          const version = await this.deps.storage.versions.get(versionId);
          return version?.issuer_id === issuerId
            ? { serialNumber: version.serial_number, certificatePem: version.cert_pem }
            : null;
        },
        ...(this.publicBaseUrl ? { publicBaseUrl: this.publicBaseUrl } : {}),
        ...(this.deps.keyCustody ? { keyCustody: this.deps.keyCustody } : {}),
      });
    })();
    this.#entries.set(issuerId, { stamp, checkedAt: nowMs, connector });
    connector.catch(() => this.#entries.delete(issuerId));
    return connector;
  }

  /** Connector that must exist: a missing issuer is not_found. */
  async require(issuerId: string): Promise<IssuerConnector> {
    const connector = await this.get(issuerId);
    if (!connector) throw notFound('issuer', issuerId);
    return connector;
  }

  /**
   * Read-modify-write of an issuer's sealed config under the issuer's row lock; `mutate`
   * returning null writes nothing. The cached connector stays valid (it holds what it needs)
   * but its stamp is refreshed so the write does not force a rebuild.
   */
  async persistConfig(
    issuerId: string,
    mutate: (config: Record<string, unknown>) => Record<string, unknown> | null,
  ): Promise<void> {
    const updated = await this.deps.storage.transaction(async (tx) => {
      await tx.issuers.lockForUpdate(issuerId); // concurrent writers serialize here
      const current = await tx.issuers.getWithConfig(issuerId);
      if (!current) throw notFound('issuer', issuerId);
      const next = mutate({ ...current.config });
      return next ? tx.issuers.update(issuerId, { config: next }) : null;
    });
    const entry = this.#entries.get(issuerId);
    if (updated && entry) entry.stamp = updated.updated_at.getTime();
  }

  /** Forgets every connector (after an issuer's config was replaced through the API). */
  invalidate(issuerId?: string): void {
    if (issuerId) this.#entries.delete(issuerId);
    else this.#entries.clear();
  }
}
