/**
 * The certwright side of `pnpm bench scep`, in its own process so that its CPU time is the
 * server's alone: SCEP on the default profile (static challenge) behind the server's request
 * listener on 127.0.0.1, plain HTTP like micromdm scepserver. Prints `{port, raFingerprint}`
 * as one JSON line once it answers, then serves until killed.
 *
 *   node --conditions=source --import tsx bench/support/scep-server.ts <engine> <challenge>
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { createHandler } from '../../packages/api/src/index.js';
import { createServices, SYSTEM_ACTOR, silentLogger, systemClock } from '../../packages/core/src/index.js';
import { createRequestListener } from '../../packages/server/src/index.js';
import { openBenchStorage } from './engines.js';

const engine = process.argv[2] ?? 'pglite';
const challenge = process.argv[3] ?? 'bench challenge';

// Statements sent to PostgreSQL, counted at the driver (the storage package's copy of pg): each
// SIGUSR2 prints the count since the previous one to stderr as `statements <n>`.
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
process.on('SIGUSR2', () => {
  process.stderr.write(`statements ${statements} pipeline_us ${pipelineUs}\n`);
  statements = 0;
  pipelineUs = 0;
});

const { s: storage, cleanup } = await openBenchStorage(engine, 'cw-bench-scep');
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
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
// The CA and the RA exist before the measurement starts.
const { ra } = await services.scep.caCertificates(null);
process.stdout.write(
  `${JSON.stringify({
    port: (server.address() as AddressInfo).port,
    raFingerprint: createHash('sha256').update(ra).digest('hex'),
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
