/**
 * Storage benchmark (not a test): loads N certificates, each with one version, then times the
 * inventory's typical queries and the renewal scan. Usage:
 *   node --import tsx bench/storage.ts [count=1000000] [engines=pglite,postgres]
 * (run after `pnpm build`, or add `--conditions=source` to use the TypeScript sources.)
 * PostgreSQL runs in a throw-away database on SVC_BENCH_POSTGRES_URL (default the local test
 * server) that is dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox } from '@certwright/core';
import { createPgliteStorage, createPostgresStorage } from '../packages/storage-pg/src/index.js';
import type { SqlStorage } from '../packages/storage-sql/src/index.js';

// The root package does not depend on the storage packages; borrow their pg.
const pg = createRequire(new URL('../packages/storage-pg/package.json', import.meta.url))('pg') as {
  Client: new (o: {
    connectionString: string;
  }) => { connect(): Promise<unknown>; query(q: string): Promise<unknown>; end(): Promise<void> };
};

const COUNT = Number(process.argv[2] ?? 1_000_000);
const ENGINES = (process.argv[3] ?? 'pglite,postgres').split(',');
const PG_URL = process.env.SVC_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DAY = 86_400_000;
const box = new SecretBox(SecretBox.generateKey());

async function load(s: SqlStorage, now: Date) {
  const owners = [];
  const issuers = [];
  for (let i = 0; i < 20; i++) owners.push(await s.owners.create({ name: `owner ${i}` }));
  for (let i = 0; i < 5; i++) issuers.push(await s.issuers.create({ name: `issuer ${i}`, type: 'Local' }));
  const team = await s.teams.create({ name: 'bench' });
  const statuses = ['Active', 'Active', 'Active', 'Expiring', 'Pending', 'Revoked', 'Archived'] as const;
  const batch = 1000;
  const started = performance.now();
  for (let i = 0; i < COUNT; i += batch) {
    const certs: Record<string, unknown>[] = [];
    const versions: Record<string, unknown>[] = [];
    for (let j = i; j < Math.min(COUNT, i + batch); j++) {
      const id = `mc-${j.toString().padStart(8, '0')}`;
      const notAfter = new Date(now.getTime() + ((j * 7919) % 400) * DAY);
      const name = `svc-${j}.example.test`;
      const sans = [name, `alt-${j}.example.test`];
      certs.push({
        id,
        name,
        common_name: name,
        sans: JSON.stringify(sans),
        status: statuses[j % statuses.length] as string,
        source: 'API',
        issuer_id: issuers[j % issuers.length]!.id,
        owner_id: owners[j % owners.length]!.id,
        team_id: team.id,
        renewal_policy_id: 'rp-default',
        profile_id: null,
        environment: null,
        metadata: '{}',
        tags: '[]',
        search_text: [name, name, ...sans].join('\n'),
        current_version_id: `cv-${j}`,
        expires_at: notAfter,
        last_renewal_at: null,
        created_at: now,
        updated_at: now,
      });
      versions.push({
        id: `cv-${j}`,
        certificate_id: id,
        issuer_id: issuers[j % issuers.length]!.id,
        serial_number: j.toString(16),
        fingerprint_sha256: randomBytes(32).toString('hex'),
        key_algorithm: 'ECDSA',
        key_size: 256,
        subject: `CN=${name}`,
        issued_at: now,
        not_before: now,
        not_after: notAfter,
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
    // Bulk load through the same Kysely instance the repositories use: this measures the
    // engine's insert throughput, which is what an import or a migration from another tool hits.
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
  const seconds = (performance.now() - started) / 1000;
  return { owners, issuers, seconds };
}

async function time(label: string, runs: number, fn: () => Promise<unknown>) {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  const q = (p: number) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))]!.toFixed(1);
  console.log(`  ${label.padEnd(42)} p50 ${q(0.5).padStart(8)} ms   p99 ${q(0.99).padStart(8)} ms`);
}

async function run(engine: string) {
  const now = new Date();
  let s: SqlStorage;
  let cleanup: () => Promise<void>;
  if (engine === 'pglite') {
    const dir = await mkdtemp(join(tmpdir(), 'cw-bench-'));
    s = await createPgliteStorage({ dataDir: dir }, { secretBox: box });
    cleanup = () => rm(dir, { recursive: true, force: true });
  } else {
    const name = `cw_bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(PG_URL);
    url.pathname = `/${name}`;
    s = createPostgresStorage(url.toString(), { secretBox: box });
    cleanup = async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  }
  try {
    await s.migrate();
    const { owners, issuers, seconds } = await load(s, now);
    console.log(
      `${engine}: loaded ${COUNT} certificates + ${COUNT} versions in ${seconds.toFixed(1)} s (${Math.round((2 * COUNT) / seconds)} rows/s)`,
    );
    const runs = 30;
    await time('status=Active, page 1', runs, () => s.certificates.list({ status: 'Active' }));
    await time('issuer filter, page 1', runs, () => s.certificates.list({ issuer_id: issuers[1]!.id }));
    await time('owner filter, page 1', runs, () => s.certificates.list({ owner_id: owners[3]!.id }));
    await time('owner filter, page 200', runs, () =>
      s.certificates.list({ owner_id: owners[3]!.id, page: 200 }),
    );
    await time('expiring before now+30d, by expiry', runs, () =>
      s.certificates.list({ expiresBefore: new Date(now.getTime() + 30 * DAY), sort: 'expires_at' }),
    );
    await time('name search "svc-4242", page 1', runs, () => s.certificates.list({ search: 'svc-4242' }));
    await time('no filter, page 1 (newest)', runs, () => s.certificates.list({}));
    await time('no filter, page 200 (newest)', runs, () => s.certificates.list({ page: 200 }));
    await time('renewal scan (limit 500)', runs, () => s.certificates.renewalDue({ now, limit: 500 }));
  } finally {
    await s.close();
    await cleanup();
  }
}

for (const engine of ENGINES) await run(engine);
