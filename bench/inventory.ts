/**
 * Inventory benchmark (not a test; no thresholds). Times, through the services an embedder
 * calls in-process:
 *   - bulk revoke of 10,000 certificates (each with one version),
 *   - bulk reassign of 10,000 listed certificates,
 *   - a filtered list page over 1,000,000 certificates, also through the REST handler (p50/p99).
 * Usage:
 *   node --import tsx --conditions=source bench/inventory.ts [inventory=1000000] [engines=pglite,postgres]
 * PostgreSQL runs in a database created for the run on SVC_BENCH_POSTGRES_URL (default the local
 * test server) and dropped afterwards; it is skipped when unreachable. Figures: docs/api/inventory.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHandler } from '../packages/api/src/index.js';
import {
  createServices,
  SecretBox,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
} from '../packages/core/src/index.js';
import { createPgliteStorage, createPostgresStorage } from '../packages/storage-pg/src/index.js';

type Storage = Awaited<ReturnType<typeof createPgliteStorage>>;

// The root package does not depend on pg; borrow the storage package's copy.
const pg = createRequire(new URL('../packages/storage-pg/package.json', import.meta.url))('pg') as {
  Client: new (o: {
    connectionString: string;
  }) => {
    connect(): Promise<unknown>;
    query(q: string): Promise<unknown>;
    end(): Promise<void>;
  };
};

const INVENTORY = Number(process.argv[2] ?? 1_000_000);
const ENGINES = (process.argv[3] ?? 'pglite,postgres').split(',');
const PG_URL = process.env.SVC_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BULK = 10_000;
const DAY = 86_400_000;
const box = new SecretBox(SecretBox.generateKey());
const STATUSES = ['Active', 'Active', 'Active', 'Expiring', 'Pending', 'Failed', 'Archived'] as const;

interface Refs {
  owners: string[];
  issuers: string[];
  team: string;
}

let loaded = 0;

/** Inserts `count` certificates (one version each) for the given owner, 1,000 rows per statement. */
async function load(s: Storage, refs: Refs, count: number, owner?: string): Promise<string[]> {
  const now = new Date();
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1000) {
    const certs: Record<string, unknown>[] = [];
    const versions: Record<string, unknown>[] = [];
    for (let j = i; j < Math.min(count, i + 1000); j++) {
      const n = loaded++;
      const id = `mc-${n.toString().padStart(9, '0')}`;
      const name = `host-${n}.bench.test`;
      const notAfter = new Date(now.getTime() + ((n * 7919) % 400) * DAY);
      const issuer = refs.issuers[n % refs.issuers.length] as string;
      ids.push(id);
      certs.push({
        id,
        name,
        common_name: name,
        sans: JSON.stringify([name]),
        status: STATUSES[n % STATUSES.length],
        source: n % 3 === 0 ? 'EST' : 'API',
        issuer_id: issuer,
        owner_id: owner ?? refs.owners[n % refs.owners.length],
        team_id: refs.team,
        renewal_policy_id: 'rp-default',
        profile_id: null,
        environment: null,
        metadata: '{}',
        tags: '[]',
        search_text: `${name}\n${name}\n${name}`,
        current_version_id: `cv-${n}`,
        expires_at: notAfter,
        last_renewal_at: null,
        created_at: now,
        updated_at: now,
      });
      versions.push({
        id: `cv-${n}`,
        certificate_id: id,
        issuer_id: issuer,
        serial_number: n.toString(16),
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
    // Rows go in through the storage's own Kysely instance: the benchmark is about the bulk
    // operations and list queries, not about 1,000,000 single-row creates.
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

function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
  return { p50: q(0.5), p99: q(0.99), min: sorted[0] as number, max: sorted[sorted.length - 1] as number };
}

async function timed(label: string, runs: number, fn: (run: number) => Promise<unknown>) {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn(i);
    samples.push(performance.now() - t);
  }
  const s = stats(samples);
  console.log(
    `  ${label.padEnd(58)} p50 ${s.p50.toFixed(1).padStart(8)} ms   p99 ${s.p99.toFixed(1).padStart(8)} ms   (n=${runs})`,
  );
}

async function open(engine: string): Promise<{ s: Storage; cleanup: () => Promise<void> } | null> {
  if (engine === 'pglite') {
    const dir = await mkdtemp(join(tmpdir(), 'cw-bench-inv-'));
    const s = await createPgliteStorage({ dataDir: dir }, { secretBox: box });
    return { s, cleanup: () => rm(dir, { recursive: true, force: true }) };
  }
  const name = `cw_bench_inv_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  try {
    await admin.connect();
    await admin.query(`create database ${name}`);
  } catch (error) {
    console.log(`postgres: skipped (${(error as Error).message})`);
    return null;
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  const s = createPostgresStorage(url.toString(), { secretBox: box });
  return {
    s,
    cleanup: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

async function run(engine: string) {
  const opened = await open(engine);
  if (!opened) return;
  const { s, cleanup } = opened;
  loaded = 0;
  try {
    await s.migrate();
    const services = createServices({ storage: s, clock: systemClock, logger: silentLogger });
    const owners: string[] = [];
    for (let i = 0; i < 20; i++) owners.push((await s.owners.create({ name: `owner ${i}` })).id);
    const issuers: string[] = [];
    for (let i = 0; i < 5; i++)
      issuers.push((await s.issuers.create({ name: `issuer ${i}`, type: 'Local' })).id);
    const refs: Refs = { owners, issuers, team: (await s.teams.create({ name: 'bench' })).id };

    console.log(`${engine}:`);
    const runs = 5;
    // Bulk revoke: each run selects a fresh owner holding exactly 10,000 certificates.
    const revokeOwners: string[] = [];
    for (let r = 0; r < runs; r++) {
      const owner = (await s.owners.create({ name: `revoke owner ${r}` })).id;
      await load(s, refs, BULK, owner);
      revokeOwners.push(owner);
    }
    await timed(`bulk revoke, 10,000 certificates + versions`, runs, async (r) => {
      const res = await services.bulk.revoke(
        { owner_id: revokeOwners[r], reason: 'superseded' },
        SYSTEM_ACTOR,
      );
      if (res.total_revoked !== BULK) throw new Error(`revoked ${res.total_revoked}`);
    });
    // Bulk reassign: 10,000 listed ids each run.
    const lists: string[][] = [];
    for (let r = 0; r < runs; r++) lists.push(await load(s, refs, BULK));
    const target = (await s.owners.create({ name: 'new owner' })).id;
    await timed(`bulk reassign, 10,000 listed certificates`, runs, async (r) => {
      const res = await services.bulk.reassign({ certificate_ids: lists[r], owner_id: target }, SYSTEM_ACTOR);
      if (res.total_reassigned !== BULK) throw new Error(`reassigned ${res.total_reassigned}`);
    });

    // Fill up to the inventory size, then time list pages.
    const started = performance.now();
    await load(s, refs, Math.max(0, INVENTORY - loaded));
    console.log(
      `  loaded ${loaded} certificates in total (${((performance.now() - started) / 1000).toFixed(0)} s)`,
    );
    const handler = createHandler({ auth: { type: 'none' }, services });
    const get = async (path: string) => {
      const res = await handler(new Request(`https://localhost${path}`), { remoteAddress: '127.0.0.1' });
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
      await res.arrayBuffer();
    };
    const list = 50;
    const soon = new Date(Date.now() + 30 * DAY).toISOString();
    await timed('service: owner + status=Active, page 1', list, () =>
      services.certificates.list({ owner_id: owners[3], status: ['Active'] }),
    );
    await timed('service: issuer + expires_before now+30d, by expiry', list, () =>
      services.certificates.list({ issuer_id: issuers[1], expires_before: soon, sort: 'expires_at' }),
    );
    await timed('service: search "host-4242", page 1', list, () =>
      services.certificates.list({ search: 'host-4242' }),
    );
    await timed('HTTP: GET ?owner_id&status=Active&per_page=50', list, () =>
      get(`/api/v1/certificates?owner_id=${owners[3]}&status=Active&per_page=50`),
    );
    await timed('HTTP: GET ?team_id&status=Active,Expiring&page=100', list, () =>
      get(`/api/v1/certificates?team_id=${refs.team}&status=Active,Expiring&page=100`),
    );
  } finally {
    await s.close();
    await cleanup();
  }
}

console.log(`inventory benchmark: ${INVENTORY} certificates, bulk size ${BULK}, node ${process.version}`);
for (const engine of ENGINES) await run(engine);
