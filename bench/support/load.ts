import { randomBytes } from 'node:crypto';
import type { SqlStorage } from '../../packages/storage-sql/src/index.js';

/** What a benchmark chooses for one certificate; every other column is what an API create leaves. */
export interface BenchCertificate {
  id: string;
  /** Names the version (`cv-<serial>`, serial number in hex); unique across a whole run. */
  serial: number;
  name: string;
  sans: string[];
  status: string;
  source: string;
  issuer_id: string;
  owner_id: string;
  team_id: string;
  expires_at: Date;
}

/**
 * Inserts `count` certificates, each with one current version, 1,000 rows per statement.
 * `certificate(n)` describes the n-th (0-based) of this call. Returns the certificate ids in order.
 */
export async function loadCertificates(
  s: SqlStorage,
  count: number,
  now: Date,
  certificate: (n: number) => BenchCertificate,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1000) {
    const certs: Record<string, unknown>[] = [];
    const versions: Record<string, unknown>[] = [];
    for (let j = i; j < Math.min(count, i + 1000); j++) {
      const c = certificate(j);
      ids.push(c.id);
      certs.push({
        id: c.id,
        name: c.name,
        common_name: c.name,
        sans: JSON.stringify(c.sans),
        status: c.status,
        source: c.source,
        issuer_id: c.issuer_id,
        owner_id: c.owner_id,
        team_id: c.team_id,
        renewal_policy_id: 'rp-default',
        profile_id: null,
        environment: null,
        metadata: '{}',
        tags: '[]',
        // name, common name, then the SANs: the layout the repository's search text has.
        search_text: [c.name, c.name, ...c.sans].join('\n'),
        current_version_id: `cv-${c.serial}`,
        expires_at: c.expires_at,
        last_renewal_at: null,
        created_at: now,
        updated_at: now,
      });
      versions.push({
        id: `cv-${c.serial}`,
        certificate_id: c.id,
        issuer_id: c.issuer_id,
        serial_number: c.serial.toString(16),
        fingerprint_sha256: randomBytes(32).toString('hex'),
        key_algorithm: 'ECDSA',
        key_size: 256,
        subject: `CN=${c.name}`,
        issued_at: now,
        not_before: now,
        not_after: c.expires_at,
        csr_pem: null,
        cert_pem: 'x',
        chain_pem: '',
        private_key_sealed: null,
        revoked_at: null,
        revocation_reason: null,
        invalidity_date: null,
        created_at: now,
      });
    }
    // Rows go in through the storage's own Kysely instance: that measures the engine's insert
    // throughput (what an import hits) and spares the benchmarks 1,000,000 single-row creates.
    await s.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('certificates')
        .values(certs as never)
        .execute();
      await trx
        .insertInto('certificate_versions')
        .values(versions as never)
        .execute();
    });
  }
  return ids;
}
