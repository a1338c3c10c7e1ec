/**
 * Revocation-status benchmark (not a test; no thresholds): a CRL regenerated from storage with
 * N revoked entries, on PostgreSQL and PGlite. Usage:
 *   node --conditions=source --import tsx bench/revocation.ts [entries=1000000] [engines=postgres,pglite]
 * (also `pnpm bench revocation`). PostgreSQL runs in a throw-away database on
 * SVC_BENCH_POSTGRES_URL (default the local test server) that is dropped afterwards.
 * Figures go to docs/api/lifecycle.md.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { createServices, SYSTEM_ACTOR, silentLogger, systemClock } from '../packages/core/src/index.js';
import {
  buildCrl,
  type CrlEntry,
  createSelfSignedCertificate,
  generateKeyPair,
  prepareIssuer,
} from '../packages/core/src/pki/index.js';
import { openBenchStorage } from './support/engines.js';

// kysely is storage-sql's dependency, not the workspace root's: resolve it from there.
const { sql } = (await import(
  pathToFileURL(
    createRequire(new URL('../packages/storage-sql/package.json', import.meta.url)).resolve('kysely'),
  ).href
)) as typeof import('../packages/storage-sql/node_modules/kysely/dist/esm/index.js');

const ENTRIES = Number(process.argv[2] ?? 1_000_000);
const ENGINES = (process.argv[3] ?? 'postgres,pglite').split(',');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const rows: [string, string][] = [];
const report = (name: string, value: string) => {
  rows.push([name, value]);
  console.error(`${name}: ${value}`);
};

async function crlFromStorage(engine: string, entries: number) {
  const { s: storage, cleanup } = await openBenchStorage(engine, 'cw-bench-rev');
  try {
    await storage.migrate();
    const services = createServices({ storage, clock: systemClock, logger: silentLogger });
    const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'bench' });
    const team = await services.teams.create(SYSTEM_ACTOR, { name: 'bench' });
    const issuer = await services.issuers.create(SYSTEM_ACTOR, {
      name: 'bench ECDSA-P256',
      type: 'Local',
      config: { key_algorithm: 'ECDSA-P256' },
    });
    await services.pki.lifecycle.caChain(issuer.id);
    const cert = await services.certificates.create(SYSTEM_ACTOR, {
      name: 'crl',
      common_name: 'crl.bench.test',
      renewal_policy_id: 'rp-default',
      issuer_id: issuer.id,
      owner_id: owner.id,
      team_id: team.id,
    });
    // Rows straight into the table: the figure is CRL generation, not a million revocations.
    // Every fourth row is not revoked, so the scan has to skip live versions too.
    const reasons = ['keyCompromise', 'superseded', 'cessationOfOperation', 'unspecified'];
    const total = Math.round(entries * 1.25);
    const chunk = 250_000;
    const tInsert = performance.now();
    for (let from = 1; from <= total; from += chunk) {
      const to = Math.min(total, from + chunk - 1);
      await sql`
        insert into certificate_versions (id, certificate_id, issuer_id, serial_number, fingerprint_sha256, key_algorithm,
          key_size, subject, issued_at, not_before, not_after, cert_pem, chain_pem, revoked_at, revocation_reason, created_at)
        select 'bv-' || g, ${cert.id}, ${issuer.id}, to_hex(g + 4096) || md5(g::text), md5(g::text) || md5((g + 1)::text),
          'ECDSA', 256, 'CN=bench', now(), now(), now() + interval '90 days', repeat('x', 800), '',
          case when g % 5 = 0 then null else now() - (g || ' seconds')::interval end,
          case when g % 5 = 0 then null else (${sql.lit(`{${reasons.join(',')}}`)}::text[])[1 + g % 4] end, now()
        from generate_series(${from}::int, ${to}::int) g`.execute(storage.db);
    }
    await sql`analyze certificate_versions`.execute(storage.db);
    console.error(
      `  ${engine}: inserted ${total} versions in ${((performance.now() - tInsert) / 1000).toFixed(0)} s`,
    );
    const times: number[] = [];
    let size = 0;
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      await services.pki.revocationStatus.refresh([issuer.id]);
      times.push(performance.now() - t);
      const crl = await services.pki.revocationStatus.currentCrl(issuer.id);
      size = crl!.der.length;
    }
    report(
      `${engine}: CRL regenerated from storage, ${entries.toLocaleString('en-US')} revoked of ${total.toLocaleString('en-US')} versions`,
      `${times.map((t) => t.toFixed(0)).join(' / ')} ms (${RUNS} runs; ${(size / 1048576).toFixed(1)} MiB)`,
    );
  } finally {
    await storage.close();
    await cleanup();
  }
}

/** Anchor: the same number of entries built and signed from memory, no storage involved. */
async function crlFromMemory(entries: number) {
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  const now = new Date();
  const root = createSelfSignedCertificate(
    {
      subject: 'CN=bench',
      notBefore: now,
      notAfter: new Date(now.getTime() + 1e10),
      basicConstraints: { ca: true },
    },
    privateKey,
  );
  const ca = prepareIssuer(root.der, privateKey);
  const reasons = ['keyCompromise', 'superseded', 'cessationOfOperation', 'unspecified'] as const;
  const list: CrlEntry[] = Array.from({ length: entries }, (_, i) => ({
    serial: `${(i + 4096).toString(16)}a1b2c3d4e5f60718293a4b5c6d7e8f90`,
    revokedAt: new Date(now.getTime() - i * 1000),
    reason: reasons[i % 4],
  }));
  const t = performance.now();
  const der = buildCrl({
    issuerCert: ca.certificate,
    issuerKey: ca.privateKey,
    thisUpdate: now,
    nextUpdate: new Date(now.getTime() + 86_400_000),
    crlNumber: 1,
    entries: list,
  });
  report(
    `anchor: CRL build + sign from memory, ${entries.toLocaleString('en-US')} entries (no storage)`,
    `${(performance.now() - t).toFixed(0)} ms (${(der.length / 1048576).toFixed(1)} MiB)`,
  );
}

await crlFromMemory(ENTRIES);
for (const engine of ENGINES) await crlFromStorage(engine, ENTRIES);

console.log('\n| measure | result |\n| --- | --- |');
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
