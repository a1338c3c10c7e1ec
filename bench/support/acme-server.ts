/**
 * The certwright ACME server for `bench/acme.ts`, run as its own process so that the
 * benchmark can read this process's CPU time from /proc (the load generator's work is not in
 * it): `node --conditions=source --import tsx bench/support/acme-server.ts <pglite|postgres>`.
 *
 * It opens a fresh storage (see engines.ts), enables the default profile's ACME block in
 * `trust_authenticated` mode with the per-profile limits off, provisions the CA, serves the
 * reference handler over TLS 1.3 on 127.0.0.1 and prints one JSON line `{port, ca, database?}`. It stops,
 * removing its storage, when its standard input closes.
 */
import { createHandler } from '../../packages/api/src/index.js';
import { createServices, SYSTEM_ACTOR, silentLogger, systemClock } from '../../packages/core/src/index.js';
import { openBenchStorage } from './engines.js';
import { listenTls } from './tls-listener.js';

const engine = process.argv[2] ?? 'pglite';
const { s: storage, cleanup, database } = await openBenchStorage(engine, 'cw-bench-acme');
let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  await storage.close().catch(() => {});
  await cleanup().catch(() => {});
  process.exit(code);
};
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
  const handler = createHandler({ auth: { type: 'none' }, services, rateLimits: { enrollment: 0 } });
  const listener = await listenTls(handler, 1);
  process.stdin.on('end', () => void listener.close().finally(() => stop(0)));
  process.stdin.resume();
  process.stdout.write(`${JSON.stringify({ port: listener.port, ca: listener.ca, database })}\n`);
} catch (error) {
  console.error(error);
  await stop(1);
}
