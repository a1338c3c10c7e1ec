/**
 * OCSP responder throughput and bulk-revoke timing (not a test; no thresholds). Prints:
 *   - OCSP over TLS 1.3 keep-alive through the server's own listener, cached answers and
 *     freshly signed ones (a nonce per request), with the load generator in a separate process
 *     (bench/support/ocsp-load.mjs) sharing the machine's cores with the server;
 *   - the anchor in the same run: `openssl ocsp -port` answering for its own CA of the same key type
 *     from an index file, over plain HTTP (it may close after each answer; the generator reconnects);
 *   - POST /api/v1/certificates/bulk-revoke of 10,000 certificates through the handler, end to
 *     end (revocation, CRL regeneration, OCSP cache refresh), on PGlite and PostgreSQL.
 * Run: node --conditions=source --import tsx bench/ocsp.ts [seconds=5] [engines=pglite,postgres]
 * (also `pnpm bench ocsp`). Figures go to docs/api/lifecycle.md.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHandler } from '../packages/api/src/index.js';
import {
  createServices,
  SecretBox,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
} from '../packages/core/src/index.js';
import {
  buildCertId,
  certificateToPem,
  createSelfSignedCertificate,
  der,
  exportPkcs8Pem,
  generateKeyPair,
  readCertificate,
} from '../packages/core/src/pki/index.js';
import { createPgliteStorage } from '../packages/storage-pg/src/index.js';
import { openBenchStorage } from './support/engines.js';
import { loadCertificates } from './support/load.js';
import { processCpuMs } from './support/proc-cpu.js';
import { listenTls } from './support/tls-listener.js';

const SECONDS = Number(process.argv[2] ?? 5);
const ENGINES = (process.argv[3] ?? 'pglite,postgres').split(',');
const CONNECTIONS = Number(process.env.BENCH_OCSP_CONNECTIONS ?? 32);
const LOADER = fileURLToPath(new URL('./support/ocsp-load.mjs', import.meta.url));

const rows: [string, string][] = [];
const report = (name: string, value: string) => {
  rows.push([name, value]);
  console.error(`${name}: ${value}`);
};
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();

interface Load {
  host: string;
  port: number;
  tls: boolean;
  ca?: string;
  path: string;
  der: string;
  certId: string;
  fresh: boolean;
}

/** Runs the load generator process; returns answers/s, and the CPU the server process used per answer. */
async function drive(load: Load, serverPid: number): Promise<string> {
  const args = { ...load, connections: CONNECTIONS, seconds: SECONDS, warmup: 1 };
  const child = spawn(process.execPath, [LOADER, JSON.stringify(args)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c) => {
    out += c;
  });
  const cpu0 = processCpuMs(serverPid);
  const cpuLoad0 = Date.now();
  await new Promise<void>((resolve, reject) => {
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`load generator exited ${code}`))));
  });
  const wallMs = Date.now() - cpuLoad0;
  const serverCpu = processCpuMs(serverPid) - cpu0;
  const r = JSON.parse(out) as { ok: number; failed: number; ms: number };
  if (r.failed > 0 || r.ok === 0) throw new Error(`load: ${r.ok} ok, ${r.failed} failed`);
  const perSecond = (r.ok / r.ms) * 1000;
  // CPU per answer over the whole run (warm-up included, at the measured rate): the figure that
  // does not depend on how much of the cores the other processes left to the server.
  const cpuPerAnswerUs = (serverCpu * 1000) / ((perSecond * wallMs) / 1000);
  return `${perSecond.toFixed(0)} /s (${CONNECTIONS} connections; server CPU ${((serverCpu / wallMs) * 100).toFixed(0)}% of one core over the run, ≈${cpuPerAnswerUs.toFixed(0)} µs per answer)`;
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

async function ocspThroughput() {
  const storage = await createPgliteStorage(
    { memory: true },
    { secretBox: new SecretBox(randomBytes(32)), clock: systemClock },
  );
  await storage.migrate();
  const services = createServices({ storage, clock: systemClock, logger: silentLogger });
  const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'bench' });
  const team = await services.teams.create(SYSTEM_ACTOR, { name: 'bench' });
  const issuer = await services.issuers.create(SYSTEM_ACTOR, {
    name: 'bench ocsp',
    type: 'Local',
    config: { key_algorithm: 'ECDSA-P256' },
  });
  const cert = await services.certificates.create(SYSTEM_ACTOR, {
    name: 'ocsp',
    common_name: 'ocsp.bench.test',
    renewal_policy_id: 'rp-default',
    issuer_id: issuer.id,
    owner_id: owner.id,
    team_id: team.id,
  });
  const issued = await services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id, {});
  const [issuingPem] = await services.pki.lifecycle.caChain(issuer.id);
  const certId = buildCertId(readCertificate(issuingPem!), issued.version!.serial_number, 'sha1').der;
  const body = der.sequence(der.sequence(der.sequence(der.sequence(certId))));
  // One client address drives the whole load: the per-client PKI rate limit (100 per 10 s by
  // default) is switched off, or every answer after the 100th would be tryLater.
  const handler = createHandler({ auth: { type: 'none' }, services, rateLimits: { pki: 0 } });
  const listener = await listenTls(handler, 1);
  const load = {
    host: '127.0.0.1',
    port: listener.port,
    tls: true,
    ca: listener.ca,
    path: `/.well-known/pki/ocsp/${issuer.id}`,
    der: Buffer.from(body).toString('base64'),
    certId: Buffer.from(certId).toString('base64'),
  };
  // The server runs in this process; its CPU is read from /proc/self.
  report(
    'certwright OCSP over TLS 1.3 keep-alive, cached answer (no nonce)',
    await drive({ ...load, fresh: false }, process.pid),
  );
  report(
    'certwright OCSP over TLS 1.3 keep-alive, fresh signing (nonce per request)',
    await drive({ ...load, fresh: true }, process.pid),
  );
  await listener.close();
  await storage.close();
}

/**
 * The floor under any Node responder on this machine: node:https over the same TLS 1.3 setup
 * answering every POST with fixed bytes of an OCSP answer's size, no parsing or lookup. What
 * certwright spends above this is its own.
 */
async function nodeHttpsFloor() {
  const fixed = randomBytes(480);
  const floor = await listenTls(async (request) => {
    await request.arrayBuffer();
    return new Response(fixed);
  }, 1);
  // Replace the Web handler by a bare node:http listener on the same TLS server.
  floor.server.removeAllListeners('request');
  floor.server.on('request', (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, {
        'content-type': 'application/ocsp-response',
        'content-length': String(fixed.length),
      });
      res.end(fixed);
    });
  });
  report(
    'floor: bare node:https listener over TLS 1.3 keep-alive, fixed 480-byte answer',
    await drive(
      {
        host: '127.0.0.1',
        port: floor.port,
        tls: true,
        ca: floor.ca,
        path: '/',
        der: Buffer.from([0x30, 0]).toString('base64'),
        certId: Buffer.from([0x30, 0]).toString('base64'),
        fresh: false,
      },
      process.pid,
    ),
  );
  await floor.close();
}

/** `openssl ocsp -port` over its own ECDSA P-256 CA and a one-line index: the anchor. */
async function opensslAnchor() {
  const dir = mkdtempSync(join(tmpdir(), 'cw-bench-ocsp-'));
  try {
    const key = await generateKeyPair('ECDSA-P256');
    const ca = createSelfSignedCertificate(
      {
        subject: 'CN=bench openssl anchor CA',
        notBefore: new Date(Date.now() - 60_000),
        notAfter: new Date(Date.now() + 86_400_000),
        basicConstraints: { ca: true },
      },
      key.privateKey,
    );
    const caPem = certificateToPem(ca.der);
    writeFileSync(join(dir, 'ca.pem'), caPem);
    writeFileSync(join(dir, 'key.pem'), exportPkcs8Pem(key.privateKey));
    const serial = '1A2B3C4D5E6F';
    writeFileSync(join(dir, 'index.txt'), `V\t301231235959Z\t\t${serial}\tunknown\t/CN=anchor.bench.test\n`);
    const certId = buildCertId(readCertificate(caPem), serial.toLowerCase(), 'sha1').der;
    const body = der.sequence(der.sequence(der.sequence(der.sequence(certId))));
    // A fresh responder per case: one left behind by the previous generator can stall openssl.
    for (const [label, fresh] of [
      ['anchor: openssl ocsp -port (one process), plain HTTP, no nonce', false],
      ['anchor: openssl ocsp -port (one process), plain HTTP, nonce per request', true],
    ] as const) {
      const port = await freePort();
      const responder = spawn(
        'openssl',
        ['ocsp', '-index', 'index.txt', '-CA', 'ca.pem', '-rsigner', 'ca.pem', '-rkey', 'key.pem'].concat([
          '-port',
          String(port),
          '-ignore_err',
          '-nmin',
          '60',
        ]),
        { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let err = '';
      responder.stderr.on('data', (c) => {
        err += c;
      });
      await new Promise((r) => setTimeout(r, 500));
      try {
        const load = {
          host: '127.0.0.1',
          port,
          tls: false,
          path: '/',
          der: Buffer.from(body).toString('base64'),
          certId: Buffer.from(certId).toString('base64'),
        };
        // openssl signs every answer (it keeps no cache): "no nonce" is not a cache hit there.
        report(label, await drive({ ...load, fresh }, responder.pid!));
      } catch (error) {
        report(label, `failed: ${(error as Error).message} ${err.slice(-200).replace(/\s+/g, ' ')}`);
      } finally {
        responder.kill();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** POST /api/v1/certificates/bulk-revoke of 10,000 certificates through the handler, CRL and OCSP included. */
async function bulkRevoke(engine: string) {
  let opened: Awaited<ReturnType<typeof openBenchStorage>>;
  try {
    opened = await openBenchStorage(engine, 'cw-bench-ocsp');
  } catch (error) {
    report(`bulk revoke 10,000 on ${engine}`, `skipped (${(error as Error).message})`);
    return;
  }
  const { s, cleanup } = opened;
  try {
    await s.migrate();
    const services = createServices({ storage: s, clock: systemClock, logger: silentLogger });
    const issuer = await services.issuers.create(SYSTEM_ACTOR, {
      name: 'bench bulk',
      type: 'Local',
      config: { key_algorithm: 'ECDSA-P256' },
    });
    const [issuingPem] = await services.pki.lifecycle.caChain(issuer.id);
    const owner = (await s.owners.create({ name: 'bulk owner' })).id;
    const team = (await s.teams.create({ name: 'bulk team' })).id;
    const now = new Date();
    const N = 10_000;
    const first = 0x100000;
    await loadCertificates(s, N, now, (i) => ({
      id: `bc-${first + i}`,
      serial: first + i,
      name: `bulk-${i}.bench.test`,
      sans: [`bulk-${i}.bench.test`],
      status: 'Active',
      source: 'API',
      issuer_id: issuer.id,
      owner_id: owner,
      team_id: team,
      expires_at: new Date(now.getTime() + 90 * 86_400_000),
    }));
    const handler = createHandler({ auth: { type: 'none' }, services });
    // Warm: a CRL and a cached OCSP answer for a certificate about to be revoked.
    const probe = buildCertId(readCertificate(issuingPem!), (first + 7).toString(16), 'sha1');
    const ocspStatus = async () => {
      const r = await services.pki.revocationStatus.serialStatus(issuer.id, (first + 7).toString(16));
      return r?.status;
    };
    await services.pki.revocationStatus.respond(issuer.id, {
      certIds: [probe],
      nonce: undefined,
      signed: false,
      extensions: [],
    });
    await services.pki.revocationStatus.currentCrl(issuer.id);
    const t = performance.now();
    const res = await handler(
      new Request('http://bench.test/api/v1/certificates/bulk-revoke', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ owner_id: owner, reason: 'superseded' }),
      }),
      { remoteAddress: '127.0.0.1' },
    );
    const json = (await res.json()) as { total_revoked?: number };
    const ms = performance.now() - t;
    if (res.status !== 200 || json.total_revoked !== N)
      throw new Error(`bulk revoke: ${res.status} ${JSON.stringify(json)}`);
    // Visible as soon as the call returned: the CRL lists every entry, OCSP says revoked.
    const crl = await services.pki.revocationStatus.currentCrl(issuer.id);
    const status = await ocspStatus();
    const cachedAnswer = await services.pki.revocationStatus.respond(issuer.id, {
      certIds: [probe],
      nonce: undefined,
      signed: false,
      extensions: [],
    });
    report(
      `bulk revoke 10,000 through POST /api/v1/certificates/bulk-revoke (revoke + CRL + OCSP refresh), ${engine}`,
      `${ms.toFixed(0)} ms (CRL ${(crl!.der.length / 1024).toFixed(0)} KiB after; OCSP status ${status}; OCSP answer for a revoked certificate ${cachedAnswer!.producedAt.getTime() >= now.getTime() ? 'rebuilt' : 'stale'})`,
    );
  } finally {
    await s.close();
    await cleanup();
  }
}

console.error(
  `ocsp benchmark, node ${process.version}, ${SECONDS} s per load run\nuptime before: ${uptime()}`,
);
await ocspThroughput();
await nodeHttpsFloor();
await opensslAnchor();
console.error(`uptime after OCSP runs: ${uptime()}`);
for (const engine of ENGINES) await bulkRevoke(engine);

console.log('\n| measure | result |\n| --- | --- |');
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
console.log(`\nuptime: ${uptime()}`);
