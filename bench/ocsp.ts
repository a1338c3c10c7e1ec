/**
 * OCSP responder throughput and bulk-revoke timing (not a test; no thresholds). Prints:
 *   - OCSP over TLS 1.3 keep-alive through the server's own listener, cached answers and
 *     freshly signed ones (a nonce per request), with the load generator in a separate process
 *     sharing the machine's cores with the server (unpinned): wrk (Debian package `wrk`, see
 *     support/wrk.ts) when installed, else the Node generator support/ocsp-load.mjs (a printed
 *     note says so; it takes about a core itself). BENCH_OCSP_GENERATOR=node forces the latter;
 *   - the same over the real server (certwright-server's CLI on PostgreSQL + a private Redis)
 *     with SVC_SERVER_WORKERS=1 and 2 (BENCH_OCSP_WORKERS, default "1,2"): answers/s, the CPU
 *     per answer of the server (primary + workers, from /proc) and of the generator, and the
 *     targets (25,000 /s cached, 5,000 /s fresh) met or not. BENCH_OCSP_PROFILE=<dir> runs those
 *     servers under `node --cpu-prof` (one profile per process, written at exit);
 *     BENCH_OCSP_KINDS=cached (or fresh) runs one of the two loads only;
 *   - the floor: a bare node:https listener answering fixed bytes, same TLS setup, same generator;
 *   - the anchor in the same run: `openssl ocsp -port` answering for its own CA of the same key type
 *     from an index file, over plain HTTP (it may close after each answer; the generator reconnects);
 *   - POST /api/v1/certificates/bulk-revoke of 10,000 certificates through the handler, end to
 *     end (revocation, CRL regeneration, OCSP cache refresh), on PGlite and PostgreSQL.
 * Run: node --conditions=source --import tsx bench/ocsp.ts [seconds=5] [engines=pglite,postgres]
 * (also `pnpm bench ocsp`; engines `none` skips the bulk revoke). Figures go to docs/api/lifecycle.md.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
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
import { type PrivateRedis, startPrivateRedis } from '../packages/server/test/support/private-services.js';
import { createPgliteStorage } from '../packages/storage-pg/src/index.js';
import { openBenchStorage } from './support/engines.js';
import { loadCertificates } from './support/load.js';
import { issueOcspFixture } from './support/ocsp-fixture.js';
import { processCpuMs } from './support/proc-cpu.js';
import { startCliServer } from './support/server-cli.js';
import { listenTls } from './support/tls-listener.js';
import { runWrk, wrkAvailable } from './support/wrk.js';

const SECONDS = Number(process.argv[2] ?? 5);
const ENGINES = (process.argv[3] ?? 'pglite,postgres').split(',');
const CONNECTIONS = Number(process.env.BENCH_OCSP_CONNECTIONS ?? 32);
const WRK_THREADS = Number(process.env.BENCH_OCSP_WRK_THREADS ?? 2);
const WRK = process.env.BENCH_OCSP_GENERATOR !== 'node' && wrkAvailable();
const WORKERS = (process.env.BENCH_OCSP_WORKERS ?? '1,2').split(',').filter(Boolean).map(Number);
const PROFILE_DIR = process.env.BENCH_OCSP_PROFILE;
/** Which loads the server cases run: `cached`, `fresh` or both (a profile of one alone reads clearer). */
const KINDS = (process.env.BENCH_OCSP_KINDS ?? 'cached,fresh').split(',');
const TARGET_CACHED = 25_000;
const TARGET_FRESH = 5_000;
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
  /** The DER OCSPRequest without nonce (the cached case's body). */
  body: Uint8Array;
  /** The CertID inside it, for requests with a nonce. */
  certId: Uint8Array;
  fresh: boolean;
}

/** One load run: answers/s and CPU per answer of the server and of the generator. */
interface Measured {
  perSecond: number;
  serverUs: number;
  generatorUs: number;
  /** The server's share of one core over the run. */
  serverCores: number;
  failed: number;
  /** CPU per answer of a helper process the server needs (Redis), when one is named. */
  helperUs?: number;
  /** Bytes per answer, head included (wrk only): a signed OCSP answer is hundreds, an error a few. */
  bytesPerAnswer?: number;
}

const tlv = (tag: number, ...parts: Uint8Array[]): Uint8Array => {
  const body = Buffer.concat(parts);
  const n = body.length;
  const len = n < 128 ? [n] : n < 256 ? [0x81, n] : [0x82, n >> 8, n & 255];
  return Buffer.concat([Buffer.from([tag, ...len]), body]);
};
/** The OCSPRequest with a nonce extension (RFC 8954) whose 16 bytes end the encoding. */
function withNonce(certId: Uint8Array, nonce: Uint8Array): Uint8Array {
  const oid = Buffer.from('06092b0601050507300102', 'hex');
  const ext = tlv(0x30, oid, tlv(0x04, tlv(0x04, nonce)));
  return tlv(0x30, tlv(0x30, tlv(0x30, tlv(0x30, certId)), tlv(0xa2, tlv(0x30, ext))));
}

/** Drives `load` with wrk (or the Node generator); `serverCpuMs` reads the server's CPU so far. */
async function drive(load: Load, serverCpuMs: () => number, helperCpuMs?: () => number): Promise<Measured> {
  if (!WRK) return driveNode(load, serverCpuMs);
  const wrkLoad = {
    url: `${load.tls ? 'https' : 'http'}://${load.host}:${load.port}${load.path}`,
    body: load.fresh ? withNonce(load.certId, new Uint8Array(16)) : load.body,
    nonceTail: load.fresh,
    connections: CONNECTIONS,
    threads: WRK_THREADS,
  };
  // Warm-up: connections, TLS sessions, the answer cache, the JIT.
  await runWrk({ ...wrkLoad, seconds: 1 });
  let cpu0 = 0;
  let helper0 = 0;
  let t0 = 0;
  const r = await runWrk({ ...wrkLoad, seconds: SECONDS }, () => {
    cpu0 = serverCpuMs();
    helper0 = helperCpuMs?.() ?? 0;
    t0 = Date.now();
  });
  const serverCpu = serverCpuMs() - cpu0;
  const helperCpu = helperCpuMs ? helperCpuMs() - helper0 : undefined;
  const wallMs = Date.now() - t0;
  if (r.requests === 0) throw new Error('wrk: no answers');
  return {
    perSecond: r.requests / r.seconds,
    serverUs: (serverCpu * 1000) / r.requests,
    generatorUs: (r.cpuMs * 1000) / r.requests,
    serverCores: serverCpu / wallMs,
    failed: r.failed,
    ...(helperCpu !== undefined ? { helperUs: (helperCpu * 1000) / r.requests } : {}),
    bytesPerAnswer: r.bytesRead / r.requests,
  };
}

/** The Node generator (support/ocsp-load.mjs) in its own process. */
async function driveNode(load: Load, serverCpuMs: () => number): Promise<Measured> {
  const args = {
    ...load,
    der: Buffer.from(load.body).toString('base64'),
    certId: Buffer.from(load.certId).toString('base64'),
    body: undefined,
    connections: CONNECTIONS,
    seconds: SECONDS,
    warmup: 1,
  };
  const child = spawn(process.execPath, [LOADER, JSON.stringify(args)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c) => {
    out += c;
  });
  const cpu0 = serverCpuMs();
  const t0 = Date.now();
  await new Promise<void>((resolve, reject) => {
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`load generator exited ${code}`))));
  });
  const wallMs = Date.now() - t0;
  const serverCpu = serverCpuMs() - cpu0;
  const r = JSON.parse(out) as { ok: number; failed: number; ms: number; cpuMs: number };
  if (r.ok === 0) throw new Error(`load: ${r.ok} ok, ${r.failed} failed`);
  const perSecond = (r.ok / r.ms) * 1000;
  // Server CPU over the whole run (warm-up included, at the measured rate): the figure that
  // does not depend on how much of the cores the other processes left to the server.
  return {
    perSecond,
    serverUs: (serverCpu * 1000) / ((perSecond * wallMs) / 1000),
    generatorUs: (r.cpuMs * 1000) / r.ok,
    serverCores: serverCpu / wallMs,
    failed: r.failed,
  };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const describe = (m: Measured) =>
  `${fmt(m.perSecond)} /s (${CONNECTIONS} connections; server ≈${fmt(m.serverUs)} µs CPU per answer, ` +
  `${(m.serverCores * 100).toFixed(0)}% of one core; generator ≈${fmt(m.generatorUs)} µs per answer` +
  `${m.helperUs !== undefined ? `; Redis ≈${m.helperUs.toFixed(1)} µs per answer` : ''}` +
  `${m.bytesPerAnswer !== undefined ? `; ≈${fmt(m.bytesPerAnswer)} bytes per answer` : ''}` +
  `${m.failed > 0 ? `; ${m.failed} failed` : ''})`;
/** CPU of this process (the in-process responders and the floor run here). */
const selfCpuMs = () => processCpuMs(process.pid);

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** The handler behind the server's own listener in this process, on in-memory PGlite. */
async function ocspThroughput() {
  const storage = await createPgliteStorage(
    { memory: true },
    { secretBox: new SecretBox(randomBytes(32)), clock: systemClock },
  );
  await storage.migrate();
  const services = createServices({ storage, clock: systemClock, logger: silentLogger });
  const { issuerId, certId, body } = await issueOcspFixture(services);
  // One client address drives the whole load: the per-client PKI rate limit (100 per 10 s by
  // default) is switched off, or every answer after the 100th would be tryLater.
  const handler = createHandler({ auth: { type: 'none' }, services, rateLimits: { pki: 0 } });
  const listener = await listenTls(handler, 1);
  const load = {
    host: '127.0.0.1',
    port: listener.port,
    tls: true,
    ca: listener.ca,
    path: `/.well-known/pki/ocsp/${issuerId}`,
    body,
    certId,
  };
  // The server runs in this process; its CPU is read from /proc/self.
  report(
    'in-process listener (PGlite): cached answer (no nonce)',
    describe(await drive({ ...load, fresh: false }, selfCpuMs)),
  );
  report(
    'in-process listener (PGlite): fresh signing (nonce per request)',
    describe(await drive({ ...load, fresh: true }, selfCpuMs)),
  );
  await listener.close();
  await storage.close();
}

/** "met" or "not met" with the figure, and what two idle cores would carry at the CPU measured. */
function target(name: string, goal: number, m: Measured) {
  const serverUs = m.serverUs + (m.helperUs ?? 0);
  const bothCores = 2_000_000 / (serverUs + m.generatorUs);
  const serverOnly = 2_000_000 / serverUs;
  report(
    `target: ${name} >= ${fmt(goal)} /s`,
    `${m.perSecond >= goal ? 'met' : 'not met'}: ${fmt(m.perSecond)} /s observed; at the CPU measured (server + Redis), ` +
      `two idle cores would carry ≈${fmt(bothCores)} /s with this generator on them, ≈${fmt(serverOnly)} /s with it elsewhere`,
  );
}

/**
 * certwright-server's CLI on PostgreSQL and a private Redis, SVC_SERVER_WORKERS=n for each n in
 * BENCH_OCSP_WORKERS: the deployment the targets are about.
 */
async function cliServerCases() {
  let redis: PrivateRedis;
  let opened: Awaited<ReturnType<typeof openBenchStorage>>;
  const key = randomBytes(32);
  try {
    redis = await startPrivateRedis();
  } catch (error) {
    report('certwright-server (CLI) cases', `skipped (${(error as Error).message})`);
    return;
  }
  try {
    opened = await openBenchStorage('postgres', 'cw-bench-ocsp-cli', { encryptionKey: key });
  } catch (error) {
    await redis.stop();
    report('certwright-server (CLI) cases', `skipped (${(error as Error).message})`);
    return;
  }
  const best: { cached?: Measured; fresh?: Measured } = {};
  try {
    await opened.s.migrate();
    const services = createServices({ storage: opened.s, clock: systemClock, logger: silentLogger });
    const { issuerId, certId, body } = await issueOcspFixture(services);
    await opened.s.close();
    for (const workers of WORKERS) {
      const server = await startCliServer(
        {
          SVC_AUTH_SECRET: randomBytes(24).toString('base64url'),
          SVC_ENCRYPTION_KEY: key.toString('base64'),
          SVC_DATABASE_URL: opened.url!,
          SVC_REDIS_URL: redis.url,
          // One client address sends everything (see ocspThroughput).
          SVC_RATE_LIMIT_PKI: '0',
        },
        {
          port: await freePort(),
          workers,
          ...(PROFILE_DIR ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] } : {}),
        },
      );
      try {
        const load = {
          host: '127.0.0.1',
          port: server.port,
          tls: true,
          ca: server.ca,
          path: `/.well-known/pki/ocsp/${issuerId}`,
          body,
          certId,
        };
        const label = `certwright-server, SVC_SERVER_WORKERS=${workers} (${server.pids().length} processes), PostgreSQL + Redis, TLS 1.3 keep-alive`;
        const redisCpuMs = () => (redis.pid ? processCpuMs(redis.pid) : 0);
        const primary0 = processCpuMs(server.child.pid!);
        const all0 = server.cpuMs();
        let cached: Measured | undefined;
        let fresh: Measured | undefined;
        if (KINDS.includes('cached')) {
          cached = await drive({ ...load, fresh: false }, server.cpuMs, redisCpuMs);
          report(`${label}: cached answer (no nonce)`, describe(cached));
        }
        if (KINDS.includes('fresh')) {
          fresh = await drive({ ...load, fresh: true }, server.cpuMs, redisCpuMs);
          report(`${label}: fresh signing (nonce per request)`, describe(fresh));
        }
        if (workers > 1) {
          const primary = processCpuMs(server.child.pid!) - primary0;
          report(
            `${label}: the primary's share of the server CPU over both runs`,
            `${((primary / (server.cpuMs() - all0)) * 100).toFixed(1)}% (${fmt(primary)} ms)`,
          );
        }
        if (cached && (!best.cached || cached.perSecond > best.cached.perSecond)) best.cached = cached;
        if (fresh && (!best.fresh || fresh.perSecond > best.fresh.perSecond)) best.fresh = fresh;
      } finally {
        const code = await server.stop();
        if (code !== 0) console.error(`server exited ${code}:\n${server.output().slice(-2000)}`);
      }
    }
  } finally {
    await opened.s.close().catch(() => {});
    await opened.cleanup();
    await redis.stop();
  }
  if (best.cached) target('cached OCSP (certwright-server, best worker count)', TARGET_CACHED, best.cached);
  if (best.fresh)
    target('fresh-signed OCSP (certwright-server, best worker count)', TARGET_FRESH, best.fresh);
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
    'floor: bare node:https listener (this process) over TLS 1.3 keep-alive, fixed 480-byte answer',
    describe(
      await drive(
        {
          host: '127.0.0.1',
          port: floor.port,
          tls: true,
          ca: floor.ca,
          path: '/',
          body: Uint8Array.from([0x30, 0]),
          certId: Uint8Array.from([0x30, 0]),
          fresh: false,
        },
        selfCpuMs,
      ),
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
      ['anchor: openssl ocsp -port (one process), plain HTTP, no nonce, Node generator', false],
      ['anchor: openssl ocsp -port (one process), plain HTTP, nonce per request, Node generator', true],
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
        const load = { host: '127.0.0.1', port, tls: false, path: '/', body, certId };
        // openssl signs every answer (it keeps no cache): "no nonce" is not a cache hit there.
        // Always the Node generator: wrk counts no answer from openssl's responder (it answers
        // and closes each connection; wrk 4.1 finished 0 requests against it).
        report(label, describe(await driveNode({ ...load, fresh }, () => processCpuMs(responder.pid!))));
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
  `ocsp benchmark, node ${process.version}, ${SECONDS} s per load run, ${availableParallelism()} CPUs, ` +
    `every process unpinned (the OS shares the cores among server, generator and anything else)\n` +
    `uptime before: ${uptime()}`,
);
if (WRK) {
  const version = spawnSync('wrk', ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0];
  report(
    'load generator',
    `wrk (${(version ?? '').trim()}), ${WRK_THREADS} threads, ${CONNECTIONS} connections, one request in flight each`,
  );
} else {
  report(
    'load generator',
    `Node (bench/support/ocsp-load.mjs), ${CONNECTIONS} connections${process.env.BENCH_OCSP_GENERATOR === 'node' ? '' : ' — wrk is not installed (apt-get install -y wrk); the Node generator takes about a core itself'}`,
  );
}
const CASES = (process.env.BENCH_OCSP_CASES ?? 'inprocess,cli,floor,openssl').split(',');
if (CASES.includes('inprocess')) await ocspThroughput();
if (CASES.includes('cli')) await cliServerCases();
if (CASES.includes('floor')) await nodeHttpsFloor();
if (CASES.includes('openssl')) await opensslAnchor();
console.error(`uptime after OCSP runs: ${uptime()}`);
for (const engine of ENGINES.filter((e) => e !== 'none')) await bulkRevoke(engine);

console.log('\n| measure | result |\n| --- | --- |');
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
console.log(`\nuptime: ${uptime()}`);
