/**
 * ACME benchmark (not a test; no thresholds): the same load generator — N accounts, M orders
 * in flight, each order the full RFC 8555 flow new-nonce → new-order → authorization (→
 * challenge for a server that asks for one) → finalize → poll → certificate download — against
 * Debian's pebble (every challenge valid at once) and certwright (a `trust_authenticated`
 * profile) on PGlite and PostgreSQL, in one run.
 *
 *   pnpm bench acme
 *   BENCH_ACME_ORDERS=200 BENCH_ACME_ACCOUNTS=20 BENCH_ACME_CONCURRENCY=8 BENCH_ACME_ENGINES=pglite,postgres pnpm bench acme
 *
 * Every server runs in its own process; its CPU time (user + system, all threads) comes from
 * /proc/<pid>/stat before and after the timed orders, so the load generator's own work is not
 * counted. On PostgreSQL the database backends' CPU is read the same way and shown next to it.
 * Account and certificate keys (P-256) and the CSRs are made before the clock starts.
 * BENCH_ACME_STATEMENTS=1 counts certwright's SQL statements, BENCH_ACME_THREADS=1 splits each
 * server's CPU by thread, BENCH_ACME_PROFILE=<dir> writes a V8 CPU profile (docs/protocols/acme.md).
 * Figures go to docs/protocols/acme.md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Agent } from 'node:https';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createCertificationRequest, generateKeyPair } from '../packages/core/src/pki/index.js';
import { type AcmeAccountKey, AcmeBenchClient } from './support/acme-client.js';
import type { Measurement } from './support/acme-server.js';
import { startPebble } from './support/pebble.js';
import { postgresBackendsCpuMs } from './support/postgres-backends.js';
import { processCpuMs, threadCpuMs } from './support/proc-cpu.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ORDERS = env('BENCH_ACME_ORDERS', 200);
const ACCOUNTS = env('BENCH_ACME_ACCOUNTS', 20);
const CONCURRENCY = env('BENCH_ACME_CONCURRENCY', 8);
// A server runs for days: until V8 has compiled its hot paths certwright's figure is mostly the
// compiler's, while pebble is compiled ahead of time (docs/protocols/acme.md, "Warm servers").
const WARMUP = env('BENCH_ACME_WARMUP', 2000);
const POLL_MS = env('BENCH_ACME_POLL_MS', 20);
const ENGINES = (process.env.BENCH_ACME_ENGINES ?? 'pglite,postgres').split(',').filter(Boolean);
const PEBBLE = process.env.BENCH_ACME_PEBBLE ?? '/usr/bin/pebble';
/** `BENCH_ACME_THREADS=1`: each server's CPU per issuance split by thread name too. */
const THREADS = Boolean(process.env.BENCH_ACME_THREADS);

interface Result {
  server: string;
  perSecond: number;
  cpuMsEach: number;
  /** Database backends' CPU per issuance (PostgreSQL), when known. */
  dbCpuMsEach?: number;
  requestsEach: number;
  /** What the certwright server measured in itself over the timed orders. */
  inside?: Measurement;
}

/** The certwright server's own measurement window (see acme-server.ts). */
interface Inside {
  start(): Promise<void>;
  stop(): Promise<Measurement>;
}
const results: Result[] = [];

/** Keys and CSRs for the warm-up and timed orders of one server, made before any clock runs. */
interface Material {
  accountKeys: KeyObject[];
  orders: { name: string; csr: Buffer }[];
}

async function material(prefix: string): Promise<Material> {
  const accountKeys: KeyObject[] = [];
  for (let i = 0; i < ACCOUNTS; i++) accountKeys.push((await generateKeyPair('ECDSA-P256')).privateKey);
  const orders: Material['orders'] = [];
  for (let i = 0; i < WARMUP + ORDERS; i++) {
    const { privateKey } = await generateKeyPair('ECDSA-P256');
    const name = `${prefix}${i}.acme.bench.example.com`;
    orders.push({
      name,
      csr: createCertificationRequest({
        subject: `CN=${name}`,
        privateKey,
        subjectAltNames: [{ type: 'dns', value: name }],
      }),
    });
  }
  return { accountKeys, orders };
}

/**
 * Runs the accounts and orders against one server and returns the timed part's figures.
 * `backendCpuMs` reads the database's share, when the server has one outside its process.
 */
async function drive(
  server: string,
  directoryUrl: string,
  ca: string,
  pid: number,
  backendCpuMs?: () => Promise<number>,
  inside?: Inside,
): Promise<void> {
  const m = await material(server.replace(/[^a-z]/g, '').slice(0, 8));
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca });
  const client = new AcmeBenchClient({ directoryUrl, agent, pollMs: POLL_MS });
  try {
    const accounts: AcmeAccountKey[] = [];
    for (const key of m.accountKeys) accounts.push(await client.newAccount(key));
    const run = async (from: number, to: number) => {
      let next = from;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < to) {
            const i = next++;
            const order = m.orders[i]!;
            const pem = await client.issue(accounts[i % accounts.length]!, order.name, order.csr);
            if (!pem.includes('-----BEGIN CERTIFICATE-----'))
              throw new Error(`${server}: the certificate download is not a PEM chain`);
          }
        }),
      );
    };
    await run(0, WARMUP);
    const requests0 = client.requests;
    const db0 = backendCpuMs ? await backendCpuMs() : 0;
    await inside?.start();
    const threads0 = THREADS ? threadCpuMs(pid) : undefined;
    const cpu0 = processCpuMs(pid);
    const t0 = performance.now();
    await run(WARMUP, WARMUP + ORDERS);
    const ms = performance.now() - t0;
    const cpu = processCpuMs(pid) - cpu0;
    if (threads0) {
      const split = [...threadCpuMs(pid)]
        .map(([name, used]) => [name, (used - (threads0.get(name) ?? 0)) / ORDERS] as const)
        .filter(([, each]) => each > 0)
        .sort((a, b) => b[1] - a[1]);
      console.error(
        `${server}: CPU ms / issuance by thread: ${split.map(([n, e]) => `${n} ${e.toFixed(2)}`).join(', ')}`,
      );
    }
    const db = backendCpuMs ? (await backendCpuMs()) - db0 : undefined;
    const measured = await inside?.stop();
    const result: Result = {
      server,
      perSecond: (ORDERS / ms) * 1000,
      cpuMsEach: cpu / ORDERS,
      requestsEach: (client.requests - requests0) / ORDERS,
      ...(db !== undefined ? { dbCpuMsEach: db / ORDERS } : {}),
      ...(measured ? { inside: measured } : {}),
    };
    results.push(result);
    console.error(
      `${server}: ${result.perSecond.toFixed(1)} issuances/s, ${result.cpuMsEach.toFixed(2)} ms server CPU each` +
        (result.dbCpuMsEach !== undefined ? ` (+ ${result.dbCpuMsEach.toFixed(2)} ms PostgreSQL)` : '') +
        `, ${result.requestsEach.toFixed(1)} requests each`,
    );
    if (measured && (CONCURRENCY === 1 || measured.statementsTotal > 0)) {
      const each = (n: number) => (n / ORDERS).toFixed(2);
      console.error(
        `${server}: enrollment pipeline (services.pki.enrollment.enroll) ` +
          (CONCURRENCY === 1
            ? `${each(measured.enrollCpuMs)} ms CPU each`
            : 'CPU not split (BENCH_ACME_CONCURRENCY=1 measures it exactly)') +
          (measured.statementsTotal > 0
            ? `; ${each(measured.statementsTotal)} SQL statements each, ${each(measured.enrollStatements)} of them while an enrollment ran`
            : ''),
      );
      for (const [text, n] of Object.entries(measured.statements)) console.error(`  ${each(n)}  ${text}`);
    }
    if (measured?.profile) console.error(`${server}: CPU profile ${measured.profile}`);
  } finally {
    agent.destroy();
  }
}

async function pebble(): Promise<void> {
  if (!existsSync(PEBBLE)) {
    console.error(`pebble: skipped (${PEBBLE} is not installed: apt-get install pebble)`);
    return;
  }
  const p = await startPebble({ binary: PEBBLE });
  try {
    await drive('pebble', p.directoryUrl, p.ca, p.child.pid!);
  } finally {
    await p.stop();
  }
}

const SERVER = fileURLToPath(new URL('./support/acme-server.ts', import.meta.url));

async function certwright(engine: string): Promise<void> {
  const extra = process.env.BENCH_ACME_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child: ChildProcess = spawn(
    process.execPath,
    [...extra, '--conditions=source', '--import', 'tsx', SERVER, engine],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_ACME_ENROLL_SPLIT: CONCURRENCY === 1 ? '1' : '0' },
    },
  );
  const exited = new Promise((r) => child.once('exit', r));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const died = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the certwright bench server exited with ${code}`))),
  );
  died.catch(() => {});
  const line = async (): Promise<string> => {
    const next = await Promise.race([lines.next(), died]);
    if (next.done) throw new Error('the certwright bench server exited');
    return next.value;
  };
  const inside: Inside = {
    start: async () => {
      child.stdin!.write('start\n');
      await line();
    },
    stop: async () => {
      child.stdin!.write('stop\n');
      return JSON.parse(await line()) as Measurement;
    },
  };
  try {
    const first = await line();
    const { port, ca, database } = JSON.parse(first) as { port: number; ca: string; database?: string };
    const backendCpuMs = database ? postgresBackendsCpuMs(database) : undefined;
    await drive(
      `certwright (${engine})`,
      `https://127.0.0.1:${port}/acme/directory`,
      ca,
      child.pid!,
      backendCpuMs,
      inside,
    );
  } catch (error) {
    if (engine === 'postgres' && /ECONNREFUSED|exited/.test(String(error))) {
      console.error(`certwright (${engine}): skipped (${(error as Error).message})`);
      return;
    }
    throw error;
  } finally {
    child.stdin?.end();
    await exited;
  }
}

console.error(
  `ACME: ${ACCOUNTS} accounts, ${CONCURRENCY} orders in flight, ${WARMUP} warm-up + ${ORDERS} timed orders, polls every ${POLL_MS} ms`,
);
await pebble();
for (const engine of ENGINES) await certwright(engine);

const base = results.find((r) => r.server === 'pebble');
console.log(
  `\n| server (${ORDERS} issuances, ${CONCURRENCY} in flight, ${ACCOUNTS} accounts) | issuances/s | server CPU ms / issuance | requests / issuance | CPU / pebble's CPU |\n|---|---|---|---|---|`,
);
for (const r of results) {
  const cpu =
    r.dbCpuMsEach !== undefined
      ? `${r.cpuMsEach.toFixed(2)} (+ ${r.dbCpuMsEach.toFixed(2)} PostgreSQL = ${(r.cpuMsEach + r.dbCpuMsEach).toFixed(2)})`
      : r.cpuMsEach.toFixed(2);
  const total = r.cpuMsEach + (r.dbCpuMsEach ?? 0);
  // Above 1: certwright spends more CPU per issuance than pebble (with its database's share).
  const ratio = base && r !== base ? `${(total / base.cpuMsEach).toFixed(2)}` : '—';
  console.log(
    `| ${r.server} | ${r.perSecond.toFixed(1)} | ${cpu} | ${r.requestsEach.toFixed(1)} | ${ratio} |`,
  );
}
