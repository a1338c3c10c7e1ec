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
import { createHandler } from '../packages/api/src/index.js';
import { createServices, SYSTEM_ACTOR, silentLogger, systemClock } from '../packages/core/src/index.js';
import type { SqlStorage } from '../packages/storage-sql/src/index.js';
import { openBenchStorage } from './support/engines.js';
import { loadCertificates } from './support/load.js';
import { measure } from './support/timing.js';

const INVENTORY = Number(process.argv[2] ?? 1_000_000);
const ENGINES = (process.argv[3] ?? 'pglite,postgres').split(',');
const BULK = 10_000;
const DAY = 86_400_000;
const STATUSES = ['Active', 'Active', 'Active', 'Expiring', 'Pending', 'Failed', 'Archived'] as const;

interface Refs {
  owners: string[];
  issuers: string[];
  team: string;
}

let loaded = 0;

/** Inserts `count` certificates (one version each) for the given owner, numbered on from earlier loads. */
function load(s: SqlStorage, refs: Refs, count: number, owner?: string): Promise<string[]> {
  const first = loaded;
  loaded += count;
  const now = new Date();
  return loadCertificates(s, count, now, (i) => {
    const n = first + i;
    const name = `host-${n}.bench.test`;
    return {
      id: `mc-${n.toString().padStart(9, '0')}`,
      serial: n,
      name,
      sans: [name],
      status: STATUSES[n % STATUSES.length] as string,
      source: n % 3 === 0 ? 'EST' : 'API',
      issuer_id: refs.issuers[n % refs.issuers.length] as string,
      owner_id: owner ?? (refs.owners[n % refs.owners.length] as string),
      team_id: refs.team,
      expires_at: new Date(now.getTime() + ((n * 7919) % 400) * DAY),
    };
  });
}

async function timed(label: string, runs: number, fn: (run: number) => Promise<unknown>) {
  const s = await measure(runs, fn);
  console.log(
    `  ${label.padEnd(58)} p50 ${s.p50.toFixed(1).padStart(8)} ms   p99 ${s.p99.toFixed(1).padStart(8)} ms   (n=${runs})`,
  );
}

/** PostgreSQL is optional here: an unreachable server skips that engine instead of failing the run. */
async function open(engine: string) {
  try {
    return await openBenchStorage(engine, 'cw-bench-inv');
  } catch (error) {
    if (engine === 'pglite') throw error;
    console.log(`postgres: skipped (${(error as Error).message})`);
    return null;
  }
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
      const res = await services.bulk.revoke(SYSTEM_ACTOR, {
        owner_id: revokeOwners[r],
        reason: 'superseded',
      });
      if (res.total_revoked !== BULK) throw new Error(`revoked ${res.total_revoked}`);
    });
    // Bulk reassign: 10,000 listed ids each run.
    const lists: string[][] = [];
    for (let r = 0; r < runs; r++) lists.push(await load(s, refs, BULK));
    const target = (await s.owners.create({ name: 'new owner' })).id;
    await timed(`bulk reassign, 10,000 listed certificates`, runs, async (r) => {
      const res = await services.bulk.reassign(SYSTEM_ACTOR, {
        certificate_ids: lists[r] as string[],
        owner_id: target,
      });
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
