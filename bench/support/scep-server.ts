/**
 * The certwright side of `pnpm bench scep`, in its own process so that its CPU time is the
 * server's alone: SCEP on the default profile (static challenge) behind the server's request
 * listener on 127.0.0.1, plain HTTP like micromdm scepserver. Prints `{port, raFingerprint,
 * database?}` as one JSON line once it answers, then serves until killed.
 *
 * The listener is composed as the server's own (direct connections first, node:http for the rest)
 * unless BENCH_SCEP_LISTENER=node-http.
 *
 * SIGUSR2 opens and closes a measurement window: the second of a pair prints what was counted
 * in between; with `BENCH_SCEP_PROFILE=<dir>` the window is also a V8 CPU profile written there
 * (start-up and warm-up left out).
 *
 *   node --conditions=source --import tsx bench/support/scep-server.ts <engine> <challenge>
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createHandler } from '../../packages/api/src/index.js';
import { createServices, SYSTEM_ACTOR, silentLogger, systemClock } from '../../packages/core/src/index.js';
import { attachDirectConnections } from '../../packages/server/src/direct-connections.js';
import { createRequestListener } from '../../packages/server/src/index.js';
import { openBenchStorage } from './engines.js';

const engine = process.argv[2] ?? 'pglite';
const challenge = process.argv[3] ?? 'bench challenge';

// Statements sent to PostgreSQL, counted at the driver (the storage package's copy of pg): each
// SIGUSR2 prints the count since the previous one to stderr as `statements <n> pipeline_us <n>`.
let statements = 0;
if (engine === 'postgres') {
  const pg = createRequire(new URL('../../packages/storage-pg/package.json', import.meta.url))('pg') as {
    Client: { prototype: { query: (...args: unknown[]) => unknown } };
  };
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    statements++;
    return query.apply(this, args);
  };
}
// CPU inside the shared enrollment pipeline (services.pki.enrollment.enroll), user + system µs:
// exact with one client at a time (BENCH_SCEP_CONCURRENCY=1), when nothing else runs meanwhile.
let pipelineUs = 0;
const PROFILE_DIR = process.env.BENCH_SCEP_PROFILE;
let session: Session | undefined;
let signals = 0;
// The process's kernel time (sockets, mostly) since the previous SIGUSR2.
let cpuMark = process.cpuUsage();
process.on('SIGUSR2', () => {
  // Read and reset at once; the line goes out once the profiler has started or been written
  // (the benchmark waits for it, and stops this process after the second).
  const cpu = process.cpuUsage(cpuMark);
  cpuMark = process.cpuUsage();
  const counted = `statements ${statements} pipeline_us ${pipelineUs} system_us ${cpu.system}\n`;
  statements = 0;
  pipelineUs = 0;
  const opening = signals++ % 2 === 0;
  void (async () => {
    if (opening && PROFILE_DIR) {
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 200 });
      await session.post('Profiler.start');
    } else if (!opening && session) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      session = undefined;
      mkdirSync(PROFILE_DIR!, { recursive: true });
      writeFileSync(join(PROFILE_DIR!, `scep-${engine}-${process.pid}.cpuprofile`), JSON.stringify(profile));
    }
    process.stderr.write(counted);
  })();
});

const { s: storage, cleanup, database } = await openBenchStorage(engine, 'cw-bench-scep');
await storage.migrate();
const services = createServices({ storage, clock: systemClock, logger: silentLogger });
await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
  scep: { enabled: true, challenge_password: challenge },
});
const enrollment = services.pki.enrollment;
const enroll = enrollment.enroll.bind(enrollment);
enrollment.enroll = async (...args: Parameters<typeof enroll>) => {
  const before = process.cpuUsage();
  try {
    return await enroll(...args);
  } finally {
    const used = process.cpuUsage(before);
    pipelineUs += used.user + used.system;
  }
};
const handler = createHandler({ auth: { type: 'none' }, services, rateLimits: { enrollment: 0 } });
const server = createServer(createRequestListener(handler));
server.keepAliveTimeout = 60_000;
// Composed as the server's own listener is (packages/server/src/tls-server.ts), without TLS:
// the direct entry's requests are read on the connection, node:http takes the rest.
// BENCH_SCEP_LISTENER=node-http leaves node:http to read every request (the composition of
// the earlier figures in docs/protocols/scep.md).
if (process.env.BENCH_SCEP_LISTENER !== 'node-http') {
  attachDirectConnections({ server, event: 'connection', direct: handler.direct });
}
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
// The CA and the RA exist before the measurement starts.
const { ra } = await handler.servers!.scep.scep.caCertificates(null);
process.stdout.write(
  `${JSON.stringify({
    port: (server.address() as AddressInfo).port,
    raFingerprint: createHash('sha256').update(ra).digest('hex'),
    database,
  })}\n`,
);
const stop = async () => {
  server.closeAllConnections();
  server.close();
  await storage.close();
  await cleanup();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
