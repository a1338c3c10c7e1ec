/**
 * Discovery benchmark: a network scan of 256 loopback endpoints (live TLS, closed and hanging
 * ports) at the default concurrency and per-endpoint timeout — wall time and handshakes/s —
 * and one endpoint-health tick over 1,000 checks per engine (every check due, served by 16
 * TLS listeners). Run: pnpm bench discovery [engines=pglite,postgres]. Figures: docs/api/discovery.md.
 */
import net from 'node:net';
import tls from 'node:tls';
import {
  createServices,
  DEFAULT_SCAN_CONCURRENCY,
  DEFAULT_SCAN_TIMEOUT_MS,
  fingerprintOf,
  type HealthTickReport,
  type ScanEndpoint,
  scanEndpoints,
  silentLogger,
  systemClock,
} from '../packages/core/src/index.js';
import { createOutboundClient } from '../packages/core/src/net/index.js';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
} from '../packages/core/src/pki/index.js';
import { openBenchStorage } from './support/engines.js';

const LIVE = 160;
const CLOSED = 64;
const HANGING = 32;
const CHECKS = 1000;

const keys = await generateKeyPair('ECDSA-P256');
const der = createSelfSignedCertificate(
  {
    subject: 'CN=bench.discovery.test',
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
  },
  keys.privateKey,
).der;
const cert = certificateToPem(der);
const key = exportPkcs8Pem(keys.privateKey);

const servers: net.Server[] = [];
const sockets = new Set<net.Socket>();
async function listen(server: net.Server): Promise<number> {
  servers.push(server);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}
const tlsServer = () => {
  const s = tls.createServer({ cert, key }, (c) => c.end());
  s.on('tlsClientError', () => {});
  return s;
};

const live: number[] = [];
for (let i = 0; i < LIVE; i++) live.push(await listen(tlsServer()));
const hanging: number[] = [];
for (let i = 0; i < HANGING; i++) hanging.push(await listen(net.createServer(() => {})));
const closed: number[] = [];
for (let i = 0; i < CLOSED; i++) {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closed.push((probe.address() as net.AddressInfo).port);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

const client = createOutboundClient({ operatorConfigured: true });
const policy = { allowLoopback: true };
const endpoints: ScanEndpoint[] = [...live, ...closed, ...hanging].map((port) => ({
  address: '127.0.0.1',
  port,
  sni: null,
}));
const outcome = { tls: 0, refused: 0, timedOut: 0, other: 0 };
const start = performance.now();
await scanEndpoints(endpoints, { client, policy }, (o) => {
  if (o.ok) outcome.tls++;
  else if (o.reason === 'connection_failed') outcome.refused++;
  else if (o.reason === 'timed_out') outcome.timedOut++;
  else outcome.other++;
});
const scanMs = performance.now() - start;
// Handshake throughput alone: the live endpoints, no hang to wait out.
let liveOk = 0;
const liveStart = performance.now();
await scanEndpoints(
  live.map((port) => ({ address: '127.0.0.1', port, sni: null })),
  { client, policy },
  (o) => {
    if (o.ok) liveOk++;
  },
);
const liveMs = performance.now() - liveStart;

// One health tick over 1,000 due checks, per storage engine.
const engines = (process.argv.find((a) => a.startsWith('engines='))?.slice(8) ?? 'pglite,postgres').split(
  ',',
);
const ticks: [string, number, HealthTickReport][] = [];
for (const engine of engines) {
  const { s: storage, cleanup } = await openBenchStorage(engine, 'cw-bench-disc');
  try {
    await storage.migrate();
    const services = createServices(
      { storage, clock: systemClock, logger: silentLogger },
      { healthChecks: { client, policy, timeoutMs: 2000 } },
    );
    for (let i = 0; i < CHECKS; i++) {
      await storage.healthChecks.create({
        name: `bench ${i}`,
        host: '127.0.0.1',
        port: live[i % 16]!,
        sni: null,
        expected_fingerprint: fingerprintOf(der),
        certificate_id: null,
        interval_seconds: 60,
        deployment_window_seconds: 0,
        enabled: true,
        next_check_at: new Date(),
      });
    }
    const tickStart = performance.now();
    const report = await services.healthChecks.tick();
    ticks.push([engine, performance.now() - tickStart, report]);
  } finally {
    await storage.close();
    await cleanup();
  }
}

for (const s of sockets) s.destroy();
for (const s of servers) s.close();

const rows: [string, string][] = [
  [
    `scan ${endpoints.length} loopback endpoints (${LIVE} TLS, ${CLOSED} closed, ${HANGING} hanging), concurrency ${DEFAULT_SCAN_CONCURRENCY}, timeout ${DEFAULT_SCAN_TIMEOUT_MS} ms`,
    `${(scanMs / 1000).toFixed(2)} s wall; ${outcome.tls} handshakes, ${Math.round((outcome.tls / scanMs) * 1000)} handshakes/s over the wall time; ${outcome.refused} refused, ${outcome.timedOut} timed out, ${outcome.other} other`,
  ],
  [
    `scan of the ${LIVE} live TLS endpoints alone`,
    `${(liveMs / 1000).toFixed(2)} s; ${liveOk} handshakes, ${Math.round((liveOk / liveMs) * 1000)} handshakes/s`,
  ],
  ...ticks.map(([engine, ms, report]): [string, string] => [
    `health tick over ${CHECKS} due checks (${engine}, concurrency 64)`,
    `${(ms / 1000).toFixed(2)} s; ${report.checked} checked, ${report.errors} errors (${Math.round((report.checked / ms) * 1000)} checks/s)`,
  ]),
];
console.log('| measurement | result |\n|---|---|');
for (const [a, b] of rows) console.log(`| ${a} | ${b} |`);
