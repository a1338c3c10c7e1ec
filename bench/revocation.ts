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
import { processCpuMs } from './support/proc-cpu.js';

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

/** PostgreSQL backends serving the bench's database (their CPU is the server's share); none on PGlite. */
async function serverPids(engine: string, storage: Awaited<ReturnType<typeof openBenchStorage>>['s']) {
  if (engine !== 'postgres') return [];
  const { rows } = await sql<{
    pid: number;
  }>`select pid from pg_stat_activity where datname = current_database()`.execute(storage.db);
  return rows.map((r) => Number(r.pid));
}

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
    const pgPids = await serverPids(engine, storage);
    const cpu = () => {
      const own = process.cpuUsage();
      return {
        node: (own.user + own.system) / 1000,
        server: pgPids.reduce((n, p) => n + processCpuMs(p), 0),
      };
    };
    // The rows were inserted without their stored entry DER, like rows revoked before migration
    // 0018: the first build encodes and stores every entry (once per version, ever).
    const tFirst = performance.now();
    await services.pki.revocationStatus.refresh([issuer.id]);
    report(
      `${engine}: first build after migration 0018 (encodes and stores ${entries.toLocaleString('en-US')} entries once)`,
      `${((performance.now() - tFirst) / 1000).toFixed(1)} s`,
    );
    // What autovacuum does after a bulk write (PGlite has none): sets the visibility map, so
    // the CRL pages are index-only scans again.
    const tVacuum = performance.now();
    await sql`vacuum analyze certificate_versions`.execute(storage.db);
    console.error(`  ${engine}: vacuum analyze ${((performance.now() - tVacuum) / 1000).toFixed(1)} s`);
    const times: number[] = [];
    const cpus: { node: number; server: number }[] = [];
    let size = 0;
    for (let i = 0; i < RUNS; i++) {
      const c0 = cpu();
      const t = performance.now();
      await services.pki.revocationStatus.refresh([issuer.id]);
      times.push(performance.now() - t);
      const c1 = cpu();
      cpus.push({ node: c1.node - c0.node, server: c1.server - c0.server });
      const crl = await services.pki.revocationStatus.currentCrl(issuer.id);
      size = crl!.der.length;
    }
    report(
      `${engine}: CRL regenerated from storage, ${entries.toLocaleString('en-US')} revoked of ${total.toLocaleString('en-US')} versions`,
      `${times.map((t) => t.toFixed(0)).join(' / ')} ms wall (${RUNS} runs; ${(size / 1048576).toFixed(1)} MiB); CPU ${cpus
        .map((c) =>
          engine === 'postgres' ? `${c.node.toFixed(0)}+${c.server.toFixed(0)}` : c.node.toFixed(0),
        )
        .join(' / ')} ms${engine === 'postgres' ? ' (node + PostgreSQL backends)' : ''}`,
    );
    // The scale target: a CRL regenerated from storage at 1,000,000 revoked entries in ≤ 3 s
    // (PostgreSQL). The median run counts; a smaller N says only how far it is from the bar.
    const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
    report(
      `${engine}: target ≤ 3 s at 1,000,000 revoked entries${engine === 'postgres' ? '' : ' (set for PostgreSQL; shown for reference)'}`,
      entries >= 1_000_000
        ? `${median <= 3000 ? 'met' : 'not met'}: median ${median.toFixed(0)} ms`
        : `not shown by this run (${entries.toLocaleString('en-US')} entries): median ${median.toFixed(0)} ms`,
    );
    // Where a rebuild's time goes: the read alone (in a transaction, as the build does it), then
    // building and signing the CRL from those blocks.
    const c0 = cpu();
    const tRead = performance.now();
    const blocks: Uint8Array[] = [];
    await storage.transaction(async (tx) => {
      for await (const b of tx.versions.streamCrlEntryBlocks(issuer.id, 50_000)) blocks.push(b);
    });
    const readMs = performance.now() - tRead;
    const c1 = cpu();
    const connector = await services.pki.lifecycle.connectors.get(issuer.id);
    const now = new Date();
    const tSign = performance.now();
    connector!.revocationSigner!.signCrl({
      thisUpdate: now,
      nextUpdate: new Date(now.getTime() + 86_400_000),
      crlNumber: 1n,
      encodedEntries: blocks,
    });
    const signMs = performance.now() - tSign;
    report(
      `${engine}: of which reading the stored entries / building and signing`,
      `${readMs.toFixed(0)} ms (CPU ${(c1.node - c0.node).toFixed(0)}${engine === 'postgres' ? `+${(c1.server - c0.server).toFixed(0)}` : ''} ms) / ${signMs.toFixed(0)} ms`,
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
  const c = process.cpuUsage();
  const t = performance.now();
  const der = buildCrl({
    issuerCert: ca.certificate,
    issuerKey: ca.privateKey,
    thisUpdate: now,
    nextUpdate: new Date(now.getTime() + 86_400_000),
    crlNumber: 1,
    entries: list,
  });
  const used = process.cpuUsage(c);
  report(
    `anchor: CRL build + sign from memory, ${entries.toLocaleString('en-US')} entries (no storage)`,
    `${(performance.now() - t).toFixed(0)} ms wall, CPU ${((used.user + used.system) / 1000).toFixed(0)} ms (${(der.length / 1048576).toFixed(1)} MiB)`,
  );
}

await crlFromMemory(ENTRIES);
for (const engine of ENGINES) await crlFromStorage(engine, ENTRIES);

console.log('\n| measure | result |\n| --- | --- |');
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
