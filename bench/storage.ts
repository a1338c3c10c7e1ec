/**
 * Storage benchmark (not a test): loads N certificates, each with one version, then times the
 * inventory's typical queries and the renewal scan. Usage:
 *   node --import tsx bench/storage.ts [count=1000000] [engines=pglite,postgres]
 * (run after `pnpm build`, or add `--conditions=source` to use the TypeScript sources.)
 * PostgreSQL runs in a throw-away database on SVC_BENCH_POSTGRES_URL (default the local test
 * server) that is dropped afterwards.
 */
import type { Issuer, Owner } from '../packages/core/src/index.js';
import type { SqlStorage } from '../packages/storage-sql/src/index.js';
import { openBenchStorage } from './support/engines.js';
import { loadCertificates } from './support/load.js';
import { measure } from './support/timing.js';

const COUNT = Number(process.argv[2] ?? 1_000_000);
const ENGINES = (process.argv[3] ?? 'pglite,postgres').split(',');
const DAY = 86_400_000;

async function load(s: SqlStorage, now: Date) {
  const owners: Owner[] = [];
  const issuers: Issuer[] = [];
  for (let i = 0; i < 20; i++) owners.push(await s.owners.create({ name: `owner ${i}` }));
  for (let i = 0; i < 5; i++) issuers.push(await s.issuers.create({ name: `issuer ${i}`, type: 'Local' }));
  const team = await s.teams.create({ name: 'bench' });
  const statuses = ['Active', 'Active', 'Active', 'Expiring', 'Pending', 'Revoked', 'Archived'] as const;
  const started = performance.now();
  await loadCertificates(s, COUNT, now, (j) => {
    const name = `svc-${j}.example.test`;
    return {
      id: `mc-${j.toString().padStart(8, '0')}`,
      serial: j,
      name,
      sans: [name, `alt-${j}.example.test`],
      status: statuses[j % statuses.length] as string,
      source: 'API',
      issuer_id: issuers[j % issuers.length]!.id,
      owner_id: owners[j % owners.length]!.id,
      team_id: team.id,
      expires_at: new Date(now.getTime() + ((j * 7919) % 400) * DAY),
    };
  });
  const seconds = (performance.now() - started) / 1000;
  return { owners, issuers, seconds };
}

async function time(label: string, runs: number, fn: () => Promise<unknown>) {
  const { p50, p99 } = await measure(runs, fn);
  console.log(
    `  ${label.padEnd(42)} p50 ${p50.toFixed(1).padStart(8)} ms   p99 ${p99.toFixed(1).padStart(8)} ms`,
  );
}

async function run(engine: string) {
  const now = new Date();
  const { s, cleanup } = await openBenchStorage(engine, 'cw-bench');
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
