/**
 * The certwright ACME server for `bench/acme.ts`, run as its own process so that the
 * benchmark can read this process's CPU time from /proc (the load generator's work is not in
 * it): `node --conditions=source --import tsx bench/support/acme-server.ts <pglite|postgres>`.
 *
 * It opens a fresh storage (see engines.ts), enables the default profile's ACME block in
 * `trust_authenticated` mode with the per-profile limits off, provisions the CA, serves the
 * reference handler over TLS 1.3 on 127.0.0.1 and prints one JSON line `{port, ca, database?}`.
 *
 * Then it reads commands, one a line, on its standard input: `start` opens a measurement
 * (and, with `BENCH_ACME_PROFILE=<dir>`, a V8 CPU profile), `stop` closes it and prints one
 * JSON line (see {@link Measurement}). It stops, removing its storage, when its standard
 * input closes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createHandler } from '../../packages/api/src/index.js';
import { createServices, SYSTEM_ACTOR, silentLogger, systemClock } from '../../packages/core/src/index.js';
import { openBenchStorage } from './engines.js';
import { listenTls } from './tls-listener.js';

/** What one `start` … `stop` window measured in this process. */
export interface Measurement {
  /** SQL statements sent (PostgreSQL only, with BENCH_ACME_STATEMENTS; PGlite runs the same ones), by their first words. */
  statements: Record<string, number>;
  statementsTotal: number;
  /**
   * Of them, the ones sent while `services.pki.enrollment.enroll` ran: exact with one order in
   * flight, an upper bound with more (told by a count of enrollments under way, not by
   * AsyncLocalStorage, whose promise hooks would slow every request of the server measured).
   */
  enrollStatements: number;
  /** `enroll` calls and the process CPU (user + system) spent while one ran, in ms: exact with one order in flight, an upper bound with more (other requests' work interleaves). */
  enrolls: number;
  enrollCpuMs: number;
  /** The CPU profile written, with `BENCH_ACME_PROFILE`. */
  profile?: string;
}

const engine = process.argv[2] ?? 'pglite';
const PROFILE_DIR = process.env.BENCH_ACME_PROFILE;
const {
  s: storage,
  cleanup,
  database,
} = await openBenchStorage(
  engine,
  // Another prefix keeps concurrent runs' databases apart by owner (the suffix is random).
  process.env.BENCH_ACME_DB_PREFIX ?? 'cw-bench-acme',
);
let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  await storage.close().catch(() => {});
  await cleanup().catch(() => {});
  process.exit(code);
};

// Statement counting: every query the storage package's `pg` sends passes Client#query. Only
// with BENCH_ACME_STATEMENTS: the wrapper's work on every query is billed to the server measured.
const COUNT_STATEMENTS = Boolean(process.env.BENCH_ACME_STATEMENTS);
let enrolling = 0;
let counting = false;
const statements = new Map<string, number>();
let enrollStatements = 0;
if (engine === 'postgres' && COUNT_STATEMENTS) {
  const pg = createRequire(new URL('../../packages/storage-pg/package.json', import.meta.url))('pg') as {
    Client: { prototype: { query: (...args: unknown[]) => unknown } };
  };
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    if (counting) {
      const first = args[0];
      const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
      if (text) {
        // Only the start names a statement: normalizing the whole text would bill the server
        // measured for the harness's work on every query.
        const key = text
          .slice(0, 120)
          .replace(/\s+/g, ' ')
          .trim()
          .split(' ')
          .slice(0, 4)
          .join(' ')
          .slice(0, 60);
        statements.set(key, (statements.get(key) ?? 0) + 1);
        if (enrolling > 0) enrollStatements++;
      }
    }
    return query.apply(this, args);
  };
}

try {
  await storage.migrate();
  const services = createServices({ storage, clock: systemClock, logger: silentLogger });
  await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
    acme: {
      enabled: true,
      auth_mode: 'trust_authenticated',
      rate_limits: { orders_per_account_per_hour: null, accounts_per_ip_per_hour: null },
    },
  });
  await services.pki.lifecycle.caChain('iss-local');

  // The split between the shared enrollment pipeline and ACME's own work.
  let enrolls = 0;
  let enrollCpuUs = 0;
  const enrollment = services.pki.enrollment;
  const enroll = enrollment.enroll.bind(enrollment);
  // The CPU split is exact only with one order in flight, so only then is it taken: two
  // getrusage calls per enrollment are the harness's own cost, billed to the server measured.
  const split = process.env.BENCH_ACME_ENROLL_SPLIT === '1';
  // Without the split or the statement count nothing needs the wrapper (an async frame and a
  // promise more per enrollment, also billed to the server measured).
  if (split || COUNT_STATEMENTS)
    enrollment.enroll = (async (...args: Parameters<typeof enroll>) => {
      if (!counting) return enroll(...args);
      const before = split ? process.cpuUsage() : undefined;
      enrolling++;
      try {
        return await enroll(...args);
      } finally {
        enrolling--;
        enrolls++;
        if (before) {
          const used = process.cpuUsage(before);
          enrollCpuUs += used.user + used.system;
        }
      }
    }) as typeof enrollment.enroll;

  const handler = createHandler({ auth: { type: 'none' }, services, rateLimits: { enrollment: 0 } });
  const listener = await listenTls(handler, 1);
  let session: Session | undefined;
  const commands = createInterface({ input: process.stdin });
  commands.on('line', (line) => {
    void (async () => {
      if (line === 'start') {
        statements.clear();
        enrollStatements = 0;
        enrolls = 0;
        enrollCpuUs = 0;
        if (PROFILE_DIR) {
          session = new Session();
          session.connect();
          await session.post('Profiler.enable');
          await session.post('Profiler.setSamplingInterval', { interval: 200 });
          await session.post('Profiler.start');
        }
        counting = true;
        process.stdout.write('{}\n');
      } else if (line === 'stop') {
        counting = false;
        let profile: string | undefined;
        if (session) {
          const { profile: data } = await session.post('Profiler.stop');
          session.disconnect();
          session = undefined;
          mkdirSync(PROFILE_DIR!, { recursive: true });
          profile = join(PROFILE_DIR!, `acme-${engine}-${process.pid}.cpuprofile`);
          writeFileSync(profile, JSON.stringify(data));
        }
        const m: Measurement = {
          statements: Object.fromEntries([...statements].sort((a, b) => b[1] - a[1])),
          statementsTotal: [...statements.values()].reduce((a, b) => a + b, 0),
          enrollStatements,
          enrolls,
          enrollCpuMs: enrollCpuUs / 1000,
          ...(profile ? { profile } : {}),
        };
        process.stdout.write(`${JSON.stringify(m)}\n`);
      }
    })();
  });
  commands.on('close', () => void listener.close().finally(() => stop(0)));
  process.stdout.write(`${JSON.stringify({ port: listener.port, ca: listener.ca, database })}\n`);
} catch (error) {
  console.error(error);
  await stop(1);
}
