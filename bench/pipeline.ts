/**
 * Issuance pipeline benchmark (not a test; no thresholds): `services.pki.enrollment.enroll` —
 * CSR checks, signature, certificate + version, policy evaluation and audit event in one
 * transaction — driven with N enrollments in flight, on PGlite and PostgreSQL. Prints
 * certificates/s, CPU ms per issuance of this process (the PostgreSQL server's own CPU is not
 * included) and SQL statements per issuance, next to an anchor measured in the same run: the raw
 * node:crypto P-256 sign rate, so figures taken while the shared machine is busy can be compared
 * by their ratio.
 *
 *   pnpm bench pipeline
 *   node --conditions=source --import tsx bench/pipeline.ts
 *
 * Knobs: BENCH_N (enrollments measured per engine and concurrency, default 1000),
 * BENCH_ENGINES (default pglite,postgres), BENCH_CONCURRENCY (comma list of in-flight counts,
 * default 1,16), BENCH_POOL (PostgreSQL pool size, default the storage default),
 * BENCH_TX (empty transactions measured per engine, default 2000: the Node CPU of a transaction
 * whose body only takes the four repositories an enrollment uses — begin, commit and building
 * its storage — printed before the enrollments),
 * BENCH_RENEW=1 (also measure re-enrollment of existing certificates), BENCH_PROFILE=<dir>
 * (writes a V8 CPU profile of each measured phase only — no start-up, CSR generation or anchor —
 * to <dir>/pipeline-<engine>-<in flight>.cpuprofile, for Chrome DevTools or a script).
 */

import { sign } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import {
  createServices,
  type Storage,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
} from '../packages/core/src/index.js';
import { createCertificationRequest, generateKeyPair } from '../packages/core/src/pki/index.js';
import { openBenchStorage } from './support/engines.js';

const N = Number(process.env.BENCH_N ?? '1000');
const engines = (process.env.BENCH_ENGINES ?? 'pglite,postgres').split(',');
const concurrencies = (process.env.BENCH_CONCURRENCY ?? '1,16').split(',').map(Number);
const pool = process.env.BENCH_POOL ? Number(process.env.BENCH_POOL) : undefined;
const renew = process.env.BENCH_RENEW === '1';
const emptyTransactions = Number(process.env.BENCH_TX ?? '2000');
const profileDir = process.env.BENCH_PROFILE;

/** Runs `body` under the V8 CPU profiler when BENCH_PROFILE is set, writing the profile as `name`. */
async function profiled<T>(name: string, body: () => Promise<T>): Promise<T> {
  if (!profileDir) return body();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await body();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(profileDir, { recursive: true });
    writeFileSync(`${profileDir}/${name}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  }
}

const rows: [string, string][] = [];
const report = (name: string, value: string) => {
  rows.push([name, value]);
  console.error(`${name}: ${value}`);
};
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
/** Kernel CPU of this process (ms): socket writes to PostgreSQL run the loopback's receive path here. */
const systemMs = () => process.cpuUsage().system / 1000;

// Statements per issuance: count what reaches pg (PostgreSQL) and PGlite.
let statements = 0;
const req = createRequire(new URL('../packages/storage-pg/package.json', import.meta.url));
const pg = req('pg') as {
  Client: {
    new (o: {
      connectionString: string;
    }): {
      connect(): Promise<unknown>;
      query(q: string): Promise<unknown>;
      end(): Promise<void>;
    };
    prototype: { query: (...a: unknown[]) => unknown };
  };
};
const PG_URL = process.env.SVC_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pgQuery = pg.Client.prototype.query;
const trace = process.env.BENCH_TRACE === '1';
pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  statements++;
  if (trace) console.error('SQL', String((args[0] as { text?: string }).text ?? args[0]).slice(0, 160));
  return pgQuery.apply(this, args);
};
// The ESM build, the copy the storage package imports.
const { PGlite } = (await import(
  pathToFileURL(req.resolve('@electric-sql/pglite').replace(/\.cjs$/, '.js')).href
)) as { PGlite: { prototype: { query: (...a: unknown[]) => unknown } } };
const pgliteQuery = PGlite.prototype.query;
PGlite.prototype.query = function (this: unknown, ...args: unknown[]) {
  statements++;
  return pgliteQuery.apply(this, args);
};

/** The anchor: raw P-256 signatures of a leaf-sized message, single thread. */
async function anchor(): Promise<number> {
  const message = Buffer.alloc(400, 7);
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  for (let i = 0; i < 200; i++) sign('sha256', message, privateKey);
  const t = performance.now();
  let n = 0;
  while (performance.now() - t < 1000) {
    for (let i = 0; i < 50; i++) sign('sha256', message, privateKey);
    n += 50;
  }
  return (n / (performance.now() - t)) * 1000;
}

/**
 * CPU time (user + system, ms) the PostgreSQL backends serving `database` used: read from
 * /proc by backend pid, so only when the server runs on this machine (else null).
 */
const serverTicks = 100; // USER_HZ on Linux
async function serverCpuMs(database: string): Promise<Map<number, number> | null> {
  const url = new URL(PG_URL);
  url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const res = (await client.query(
      `select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
    )) as { rows: { pid: number }[] };
    const now = new Map<number, number>();
    for (const { pid } of res.rows) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        now.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / serverTicks);
      } catch {
        return null; // not on this machine, or not readable
      }
    }
    return now;
  } finally {
    await client.end();
  }
}

/** CPU ms the backends used since `before` (a backend that appeared meanwhile counts whole). */
function serverCpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

async function csrs(count: number, prefix: string): Promise<Buffer[]> {
  // One key for all: the pipeline's cost does not depend on which key the CSR carries.
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const cn = `${prefix}${i}.pipeline.bench.test`;
    out.push(
      createCertificationRequest({
        subject: `CN=${cn}`,
        privateKey,
        subjectAltNames: [{ type: 'dns', value: cn }],
      }),
    );
  }
  return out;
}

async function run(engine: string, signRate: number) {
  let opened: Awaited<ReturnType<typeof openBenchStorage>>;
  try {
    opened = await openBenchStorage(engine, 'cw-bench-pipe', pool ? { maxConnections: pool } : {});
  } catch (error) {
    report(`${engine}`, `skipped (${(error as Error).message})`);
    return;
  }
  const { s: storage, cleanup } = opened;
  try {
    await storage.migrate();
    const services = createServices({ storage, clock: systemClock, logger: silentLogger });
    await services.pki.lifecycle.caChain('iss-local'); // provision the CA outside the measurement
    const enroll = (csrDer: Buffer, renewsCertificateId?: string) =>
      services.pki.enrollment.enroll(SYSTEM_ACTOR, {
        profileId: 'prof-default',
        csrDer,
        source: 'EST',
        ...(renewsCertificateId ? { renewsCertificateId } : {}),
      });
    if (emptyTransactions > 0) {
      const body = async (tx: Storage) => {
        void [tx.versions, tx.audit, tx.violations, tx.certificates];
      };
      for (let i = 0; i < 200; i++) await storage.transaction(body);
      const c = cpuMs();
      for (let i = 0; i < emptyTransactions; i++) await storage.transaction(body);
      report(
        `${engine}: empty transaction (begin, commit, its storage)`,
        `${(((cpuMs() - c) / emptyTransactions) * 1000).toFixed(0)} µs CPU each`,
      );
    }
    const warm = await csrs(50, 'warm');
    const ids: string[] = [];
    for (const csr of warm) ids.push((await enroll(csr)).certificate.id);

    const drive = async (list: Buffer[], inFlight: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (next < list.length) await enroll(list[next++]!);
        }),
      );
    };
    let best = { rate: 0, inFlight: 0 };
    for (const inFlight of concurrencies) {
      const list = await csrs(N, `c${inFlight}-`);
      await drive(await csrs(2 * inFlight, `w${inFlight}-`), inFlight); // opens the pool's connections
      const server0 = opened.database ? await serverCpuMs(opened.database) : null;
      const t = performance.now();
      const c = cpuMs();
      const sys = systemMs();
      const s0 = statements;
      await profiled(`pipeline-${engine}-${inFlight}`, () => drive(list, inFlight));
      const ms = performance.now() - t;
      const rate = (N / ms) * 1000;
      const client = (cpuMs() - c) / N;
      const kernel = (systemMs() - sys) / N;
      const server1 = server0 ? await serverCpuMs(opened.database!) : null;
      const server = server0 && server1 ? serverCpuSince(server0, server1) / N : null;
      report(
        `${engine}: enroll(), new certificate, ${inFlight} in flight`,
        `${rate.toFixed(0)} /s, ${client.toFixed(2)} ms CPU each (${kernel.toFixed(2)} in the kernel)${server === null ? '' : ` (+ ${server.toFixed(2)} ms in PostgreSQL's backends)`}, ${((statements - s0) / N).toFixed(1)} statements each, ${(rate / signRate).toFixed(3)} × anchor`,
      );
      if (rate > best.rate) best = { rate, inFlight };
    }
    // The scale targets: the full pipeline at ≥500 /s on PostgreSQL, ≥200 /s on PGlite (P-256).
    const target = engine === 'pglite' ? 200 : 500;
    report(
      `${engine}: target ≥ ${target} issuances/s`,
      `${best.rate >= target ? 'met' : 'not met'}: best ${best.rate.toFixed(0)} /s at ${best.inFlight} in flight`,
    );
    if (renew) {
      const list = await csrs(ids.length, 'warm');
      const t = performance.now();
      const c = cpuMs();
      const s0 = statements;
      for (let i = 0; i < ids.length; i++) await enroll(list[i]!, ids[i]);
      const ms = performance.now() - t;
      report(
        `${engine}: enroll(), re-enrollment, 1 in flight`,
        `${((ids.length / ms) * 1000).toFixed(0)} /s, ${((cpuMs() - c) / ids.length).toFixed(2)} ms CPU each, ${((statements - s0) / ids.length).toFixed(1)} statements each`,
      );
    }
    const chain = await services.audit.verifyChain();
    report(
      `${engine}: audit chain after the run`,
      chain.ok ? `verifies (${chain.checked} events)` : `BROKEN: ${chain.reason}`,
    );
  } finally {
    await storage.close();
    await cleanup();
  }
}

const signRate = await anchor();
report('anchor: raw node:crypto sign, ECDSA P-256, 1 thread', `${signRate.toFixed(0)} /s`);
for (const engine of engines) await run(engine, signRate);
console.log(
  `\npipeline benchmark — node ${process.version}, ${cpus()[0]?.model ?? 'cpu'} ×${cpus().length}, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, n = ${N}${pool ? `, pool ${pool}` : ''}\n`,
);
console.log('| measurement | result |\n|---|---|');
for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
