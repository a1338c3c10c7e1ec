/**
 * ACME issuer benchmark (not a test; no thresholds): certwright as the ACME *client* of
 * Debian's pebble (every challenge valid at once, so the figures are the connector's and the
 * pipeline's work, not a validation's). Each run is one managed certificate issued through an
 * ACME issuer: server-side key generation, new-order, the authorization with its http-01 answer
 * published and removed, finalize with the generated CSR, polling, chain download, the version
 * stored — on in-memory PGlite, one after another.
 *
 *   pnpm bench acme-issuer
 *   BENCH_ACME_ISSUER_RUNS=50 pnpm bench acme-issuer
 *
 * Figures go to docs/api/issuers.md.
 */
import { createServices, SYSTEM_ACTOR, silentLogger, systemClock } from '../packages/core/src/index.js';
import { openBenchStorage } from './support/engines.js';
import { startPebble } from './support/pebble.js';
import { measure } from './support/timing.js';

const RUNS = Number(process.env.BENCH_ACME_ISSUER_RUNS ?? 30);
const WARMUP = 3;

const pebble = await startPebble();
const { s: storage, cleanup } = await openBenchStorage('pglite', 'cw-bench-acme-issuer');
try {
  await storage.migrate();
  // Pebble's polls answer at once; a short poll interval keeps the figures about the work.
  const services = createServices(
    { storage, clock: systemClock, logger: silentLogger },
    { acmeIssuer: { pollIntervalMs: 20 } },
  );
  const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'bench', email: 'bench@example.test' });
  const team = await services.teams.create(SYSTEM_ACTOR, { name: 'bench' });
  const issuer = await services.issuers.create(SYSTEM_ACTOR, {
    name: 'pebble',
    type: 'ACME',
    config: { directory_url: pebble.directoryUrl, ca_bundle_pem: pebble.ca },
  });
  const issueOne = async (i: number, prefix: string) => {
    const name = `${prefix}${i}.bench.test`;
    const cert = await services.certificates.create(SYSTEM_ACTOR, {
      name,
      common_name: name,
      sans: [name],
      renewal_policy_id: 'rp-default',
      issuer_id: issuer.id,
      owner_id: owner.id,
      team_id: team.id,
    });
    const outcome = await services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id);
    if (!outcome.version) throw new Error(`run ${i} stored no version`);
  };
  // The first issuance also registers the account; warm-up runs take it and the JIT out.
  for (let i = 0; i < WARMUP; i++) await issueOne(i, 'warm');
  const started = performance.now();
  const times = await measure(RUNS, (i) => issueOne(i, 'run'));
  const seconds = (performance.now() - started) / 1000;
  console.log(`ACME issuer → pebble (always-valid), PGlite, ${RUNS} issuances one after another`);
  console.log(
    `  per issuance: p50 ${times.p50.toFixed(1)} ms, p99 ${times.p99.toFixed(1)} ms (min ${times.min.toFixed(1)}, max ${times.max.toFixed(1)}); ${(RUNS / seconds).toFixed(1)} issuances/s`,
  );
} finally {
  await storage.close().catch(() => {});
  await cleanup().catch(() => {});
  await pebble.stop();
}
