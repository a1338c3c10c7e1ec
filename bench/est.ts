/**
 * EST benchmark (not a test; no thresholds): simpleenroll over TLS 1.3 with keep-alive (P-256
 * CSRs, HTTP Basic) next to the raw enrollment pipeline (`services.pki.enrollment.enroll`)
 * measured in the same run, on PGlite and PostgreSQL.
 *
 *   pnpm bench est                      (or node --conditions=source --import tsx bench/est.ts [n=300] [engines=pglite,postgres])
 *
 * CPU per enrollment is the process's user+system time over the run divided by the
 * enrollments; the HTTPS client runs in the same process, so it is an upper bound for the
 * server. Figures go to docs/protocols/est.md.
 */
import { Agent, createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createHandler } from '../packages/api/src/index.js';
import { createServices, SYSTEM_ACTOR, silentLogger, systemClock } from '../packages/core/src/index.js';
import {
  certificateToPem,
  createCertificationRequest,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
} from '../packages/core/src/pki/index.js';
import { createRequestListener } from '../packages/server/src/index.js';
import { openBenchStorage } from './support/engines.js';
import { listenTls } from './support/tls-listener.js';

const n = Number(process.argv[2] ?? '300');
const engines = (process.argv[3] ?? 'pglite,postgres').split(',');
const CONCURRENCY = 4;
const PASSWORD = 'bench device password';

const rows: [string, string][] = [];
const report = (name: string, value: string) => {
  rows.push([name, value]);
  console.error(`${name}: ${value}`);
};
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function csrs(count: number, prefix: string): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const { privateKey } = await generateKeyPair('ECDSA-P256');
    const cn = `${prefix}${i}.est.bench.test`;
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

async function run(engine: string) {
  let opened: Awaited<ReturnType<typeof openBenchStorage>>;
  try {
    opened = await openBenchStorage(engine, 'cw-bench-est');
  } catch (error) {
    report(`${engine}`, `skipped (${(error as Error).message})`);
    return;
  }
  const { s: storage, cleanup } = opened;
  try {
    await storage.migrate();
    const services = createServices({ storage, clock: systemClock, logger: silentLogger });
    await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
      est: { enabled: true, basic_credentials: [{ username: 'device', password: PASSWORD }] },
    });
    await services.pki.lifecycle.caChain('iss-local'); // provision the CA outside the measurement

    // The raw pipeline: what every protocol's issuance costs (CSR checks, signature, storage, audit).
    const raw = await csrs(n, 'raw');
    for (let i = 0; i < 10; i++) {
      await services.pki.enrollment.enroll(SYSTEM_ACTOR, {
        profileId: 'prof-default',
        csrDer: raw[i]!,
        source: 'EST',
      });
    }
    let t = performance.now();
    let c = cpuMs();
    for (let i = 10; i < n; i++) {
      await services.pki.enrollment.enroll(SYSTEM_ACTOR, {
        profileId: 'prof-default',
        csrDer: raw[i]!,
        source: 'EST',
      });
    }
    const rawMs = performance.now() - t;
    report(
      `${engine}: raw enrollment pipeline (enroll(), no HTTP)`,
      `${(((n - 10) / rawMs) * 1000).toFixed(0)} /s, ${((cpuMs() - c) / (n - 10)).toFixed(2)} ms CPU each`,
    );

    // simpleenroll over TLS 1.3, keep-alive, Basic (the credential check is cached after the first).
    const handler = createHandler({
      auth: { type: 'none' },
      services,
      est: { rateLimit: null },
      rateLimits: { enrollment: 0 },
    });
    const { port, agent, close } = await listenTls(handler, CONCURRENCY);
    const authorization = `Basic ${Buffer.from(`device:${PASSWORD}`).toString('base64')}`;
    const post = (csr: Buffer) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/.well-known/est/simpleenroll',
            agent,
            headers: { authorization, 'content-type': 'application/pkcs10' },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(csr.toString('base64'));
      });
    const wire = await csrs(n, 'wire');
    for (let i = 0; i < 10; i++) {
      const status = await post(wire[i]!);
      if (status !== 200) throw new Error(`simpleenroll answered ${status}`);
    }
    let next = 10;
    t = performance.now();
    c = cpuMs();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < n) {
          const status = await post(wire[next++]!);
          if (status !== 200) throw new Error(`simpleenroll answered ${status}`);
        }
      }),
    );
    const wireMs = performance.now() - t;
    report(
      `${engine}: EST simpleenroll over TLS 1.3 keep-alive, Basic, P-256 CSR, ${CONCURRENCY} connections`,
      `${(((n - 10) / wireMs) * 1000).toFixed(0)} /s, ${((cpuMs() - c) / (n - 10)).toFixed(2)} ms CPU each (server + client)`,
    );
    await close();
  } finally {
    await storage.close();
    await cleanup();
  }
}

for (const engine of engines) await run(engine);
console.log(`\n| measurement (n = ${n}) | result |\n|---|---|`);
for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
