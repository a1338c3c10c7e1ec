import type { Insertable, Kysely } from 'kysely';
import type { CertificatesTable, CertificateVersionsTable, Database, Flavor } from './schema.js';

/** Certificate + version pairs per statement: 39 parameters a pair, far below every engine's limit. */
const PAIRS_PER_STATEMENT = 200;

/**
 * New certificates with their first version (versions.createWithCertificate) written inside a
 * transaction opened by `Storage.transaction` wait here and go to the database together, in
 * multi-row inserts: a group commit of many enrollments (core/services/issuance/group-commit.ts)
 * then costs one statement for all its certificates instead of one each, on the client and in the
 * database (one parse and plan).
 *
 * Nothing in the transaction can tell: the transaction's storage writes what waits here before
 * any other storage call runs (sql-storage.ts), and before the commit. So a read, an update, a
 * row that refers to a new certificate (violation, job, ACME order) all see it, in order. What
 * changes is only where a failure of these rows (a taken serial) surfaces: at that next call or
 * at the commit, instead of at `createWithCertificate` itself.
 */
export class DeferredInserts {
  #certificates: Insertable<CertificatesTable>[] = [];
  #versions: Insertable<CertificateVersionsTable>[] = [];

  constructor(
    private readonly db: Kysely<Database>,
    private readonly flavor: Flavor,
  ) {}

  get pending(): boolean {
    return this.#certificates.length > 0;
  }

  add(certificate: Insertable<CertificatesTable>, version: Insertable<CertificateVersionsTable>): void {
    this.#certificates.push(certificate);
    this.#versions.push(version);
  }

  /**
   * On PostgreSQL/PGlite, hands what waits to a caller that writes it in its own statement (a
   * data-modifying `WITH` ahead of the caller's write, see `acmeOrders.markIssued`), and forgets
   * it: one statement instead of two. `null` when nothing waits, on MariaDB/MySQL, or when more
   * waits than one statement takes; the caller then writes it with `flush` first.
   */
  take(): {
    certificates: Insertable<CertificatesTable>[];
    versions: Insertable<CertificateVersionsTable>[];
  } | null {
    if (!this.pending || this.flavor !== 'postgres' || this.#certificates.length > PAIRS_PER_STATEMENT)
      return null;
    const taken = { certificates: this.#certificates, versions: this.#versions };
    this.#certificates = [];
    this.#versions = [];
    return taken;
  }

  /** Writes what waits, certificates before the versions that refer to them. */
  async flush(): Promise<void> {
    if (!this.pending) return;
    const certificates = this.#certificates;
    const versions = this.#versions;
    this.#certificates = [];
    this.#versions = [];
    for (let i = 0; i < certificates.length; i += PAIRS_PER_STATEMENT) {
      const c = certificates.slice(i, i + PAIRS_PER_STATEMENT);
      const v = versions.slice(i, i + PAIRS_PER_STATEMENT);
      if (this.flavor === 'postgres') {
        // One statement: the certificates, already pointing at their versions, and the versions.
        await this.db
          .with('created', (db) => db.insertInto('certificates').values(c))
          .insertInto('certificate_versions')
          .values(v)
          .execute();
      } else {
        await this.db.insertInto('certificates').values(c).execute();
        await this.db.insertInto('certificate_versions').values(v).execute();
      }
    }
  }
}
