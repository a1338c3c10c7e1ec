/**
 * Server-level PKI benchmark (not a test; no thresholds): the issuing pipeline, OCSP over TLS
 * 1.3 with keep-alive and CRL generation from storage, next to the raw node:crypto signing
 * limit measured in the same run. Run: node --conditions=source --import tsx bench/pki-server.ts
 * Figures go to docs/api/lifecycle.md.
 */
import { randomBytes, sign } from 'node:crypto';
import { Agent, createServer, request } from 'node:https';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
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
  type KeyAlgorithm,
  readCertificate,
} from '../packages/core/src/pki/index.js';
import { createRequestListener } from '../packages/server/src/index.js';
import { createPgliteStorage } from '../packages/storage-pg/src/index.js';
import { listenTls } from './support/tls-listener.js';

// kysely is storage-sql's dependency, not the workspace root's: resolve it from there.
const { sql } = (await import(
  pathToFileURL(
    createRequire(new URL('../packages/storage-sql/package.json', import.meta.url)).resolve('kysely'),
  ).href
)) as typeof import('../packages/storage-sql/node_modules/kysely/dist/esm/index.js');

const rows: [string, string][] = [];
const report = (name: string, value: string) => {
  rows.push([name, value]);
  console.error(`${name}: ${value}`);
};
const rate = (n: number, ms: number) => `${((n / ms) * 1000).toFixed(0)} /s (${(ms / n).toFixed(3)} ms each)`;

async function rawSigning() {
  for (const [name, alg] of [
    ['raw node:crypto sign, ECDSA P-256', 'ECDSA-P256'],
    ['raw node:crypto sign, RSA-2048', 'RSA-2048'],
  ] as const) {
    const { privateKey } = await generateKeyPair(alg);
    const data = randomBytes(400); // about a leaf TBSCertificate
    for (let i = 0; i < 50; i++) sign('sha256', data, privateKey);
    const n = alg === 'RSA-2048' ? 2000 : 10000;
    const t = performance.now();
    for (let i = 0; i < n; i++) sign('sha256', data, privateKey);
    report(name, rate(n, performance.now() - t));
  }
}

async function open(caAlgorithm: KeyAlgorithm) {
  const storage = await createPgliteStorage(
    { memory: true },
    { secretBox: new SecretBox(randomBytes(32)), clock: systemClock },
  );
  await storage.migrate();
  const services = createServices({ storage, clock: systemClock, logger: silentLogger });
  const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'bench' });
  const team = await services.teams.create(SYSTEM_ACTOR, { name: 'bench' });
  const issuer = await services.issuers.create(SYSTEM_ACTOR, {
    name: `bench ${caAlgorithm}`,
    type: 'Local',
    config: { key_algorithm: caAlgorithm },
  });
  await services.pki.lifecycle.caChain(issuer.id); // provision the CA outside the measurement
  return { storage, services, issuerId: issuer.id, owner: owner.id, team: team.id };
}

async function pipelineIssuance(caAlgorithm: KeyAlgorithm, n: number) {
  const ctx = await open(caAlgorithm);
  const ids: string[] = [];
  for (let i = 0; i < n + 10; i++) {
    const c = await ctx.services.certificates.create(SYSTEM_ACTOR, {
      name: `b-${i}`,
      common_name: `host${i}.bench.test`,
      renewal_policy_id: 'rp-default',
      issuer_id: ctx.issuerId,
      owner_id: ctx.owner,
      team_id: ctx.team,
    });
    ids.push(c.id);
  }
  // Leaf keys come from CSRs made beforehand: the figure is the CA's pipeline, not key generation.
  const { certificationRequestToPem, createCertificationRequest } = await import(
    '../packages/core/src/pki/index.js'
  );
  const leafKey = await generateKeyPair('ECDSA-P256');
  const csr = (i: number) =>
    certificationRequestToPem(
      createCertificationRequest({
        subject: [{ type: 'CN', value: `host${i}.bench.test` }],
        privateKey: leafKey.privateKey,
      }),
    );
  const csrs = ids.map((_, i) => csr(i));
  // The connector alone (what the CA does per issuance: template, DER, signature).
  const connector = await ctx.services.pki.lifecycle.connectors.require(ctx.issuerId);
  const request = {
    subject: [{ type: 'CN', value: 'host.bench.test' }],
    subjectAltNames: [{ type: 'dns' as const, value: 'host.bench.test' }],
    publicKey: leafKey.publicKey,
    notBefore: new Date(),
    notAfter: new Date(Date.now() + 90 * 86_400_000),
    extendedKeyUsage: ['serverAuth' as const],
    mustStaple: false,
  };
  for (let i = 0; i < 50; i++) await connector.issue(request);
  const count = caAlgorithm === 'RSA-2048' ? 2000 : 10000;
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await connector.issue(request);
  report(
    `leaf issuance, Local CA connector (no storage), ${caAlgorithm} CA`,
    rate(count, performance.now() - t0),
  );
  for (let i = 0; i < 10; i++)
    await ctx.services.pki.lifecycle.issue(SYSTEM_ACTOR, ids[i]!, { csr_pem: csrs[i] });
  const t = performance.now();
  for (let i = 10; i < ids.length; i++)
    await ctx.services.pki.lifecycle.issue(SYSTEM_ACTOR, ids[i]!, { csr_pem: csrs[i] });
  report(
    `leaf issuance, full pipeline on PGlite (CSR → stored version, job, audit), ${caAlgorithm} CA`,
    rate(n, performance.now() - t),
  );
  await ctx.storage.close();
}

async function ocspOverTls(n: number, concurrency: number) {
  const ctx = await open('ECDSA-P256');
  const cert = await ctx.services.certificates.create(SYSTEM_ACTOR, {
    name: 'ocsp',
    common_name: 'ocsp.bench.test',
    renewal_policy_id: 'rp-default',
    issuer_id: ctx.issuerId,
    owner_id: ctx.owner,
    team_id: ctx.team,
  });
  const issued = await ctx.services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id, {});
  const [issuingPem] = await ctx.services.pki.lifecycle.caChain(ctx.issuerId);
  const handler = createHandler({ auth: { type: 'none' }, services: ctx.services });
  const { port, agent, close } = await listenTls(handler, concurrency);
  const certId = buildCertId(readCertificate(issuingPem!), issued.version!.serial_number, 'sha1').der;
  const body = (nonce: boolean) => {
    const tbs = nonce
      ? der.sequence(
          der.sequence(der.sequence(certId)),
          der.explicit(
            2,
            der.sequence(der.extension('1.3.6.1.5.5.7.48.1.2', false, der.octetString(randomBytes(16)))),
          ),
        )
      : der.sequence(der.sequence(der.sequence(certId)));
    return der.sequence(tbs);
  };
  const post = (payload: Buffer) =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: `/.well-known/pki/ocsp/${ctx.issuerId}`,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/ocsp-request', 'content-length': payload.length },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  for (const [label, nonce] of [
    ['OCSP over TLS 1.3 keep-alive, fresh signing (nonce per request)', true],
    ['OCSP over TLS 1.3 keep-alive, cached answer (no nonce)', false],
  ] as const) {
    const cached = body(false);
    const run = async (count: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next++ < count) await post(nonce ? body(true) : cached);
        }),
      );
    };
    await run(200);
    const t = performance.now();
    await run(n);
    report(`${label}, ${concurrency} concurrent`, rate(n, performance.now() - t));
  }
  await close();
  await ctx.storage.close();
}

async function crlFromStorage(entries: number) {
  const ctx = await open('ECDSA-P256');
  const cert = await ctx.services.certificates.create(SYSTEM_ACTOR, {
    name: 'crl',
    common_name: 'crl.bench.test',
    renewal_policy_id: 'rp-default',
    issuer_id: ctx.issuerId,
    owner_id: ctx.owner,
    team_id: ctx.team,
  });
  // Rows straight into the table: the figure is CRL generation, not a million revocations.
  const reasons = ['keyCompromise', 'superseded', 'cessationOfOperation', 'unspecified'];
  const chunk = 100_000;
  const tInsert = performance.now();
  for (let from = 1; from <= entries; from += chunk) {
    const to = Math.min(entries, from + chunk - 1);
    await sql`
      insert into certificate_versions (id, certificate_id, issuer_id, serial_number, fingerprint_sha256, key_algorithm,
        key_size, subject, issued_at, not_before, not_after, cert_pem, chain_pem, revoked_at, revocation_reason, created_at)
      select 'bv-' || g, ${cert.id}, ${ctx.issuerId}, to_hex(g + 4096) || md5(g::text), md5(g::text) || md5((g + 1)::text),
        'ECDSA', 256, 'CN=bench', now(), now(), now() + interval '90 days', 'x', '', now() - (g || ' seconds')::interval,
        (${sql.lit(`{${reasons.join(',')}}`)}::text[])[1 + g % 4], now()
      from generate_series(${from}::int, ${to}::int) g`.execute(ctx.storage.db);
    console.error(
      `  inserted ${to.toLocaleString('en-US')} revoked rows (${((performance.now() - tInsert) / 1000).toFixed(0)} s)`,
    );
  }
  // PGlite runs no autovacuum: without fresh statistics after a bulk insert the planner sorts
  // every page of the keyset scan instead of walking the (issuer_id, serial_number) index.
  await sql`analyze certificate_versions`.execute(ctx.storage.db);
  const t = performance.now();
  await ctx.services.pki.revocationStatus.refresh([ctx.issuerId]);
  const ms = performance.now() - t;
  const crl = await ctx.services.pki.revocationStatus.currentCrl(ctx.issuerId);
  report(
    `CRL generation from storage (stream revoked versions + build + sign), ${entries.toLocaleString('en-US')} entries`,
    `${ms.toFixed(0)} ms (${(crl!.der.length / 1048576).toFixed(1)} MiB)`,
  );
  const t2 = performance.now();
  for (let i = 0; i < 100; i++) await ctx.services.pki.revocationStatus.currentCrl(ctx.issuerId);
  if (entries === 10_000) report('CRL served from cache', rate(100, performance.now() - t2));
  await ctx.storage.close();
}

const scale = Number(process.env.BENCH_SCALE ?? '1');
// `--crl` runs only the CRL cases (the million-entry one takes minutes to set up).
const crlOnly = process.argv.includes('--crl');
await rawSigning();
if (!crlOnly) {
  await pipelineIssuance('ECDSA-P256', Math.max(50, Math.round(500 * scale)));
  await pipelineIssuance('RSA-2048', Math.max(50, Math.round(500 * scale)));
  await ocspOverTls(Math.max(500, Math.round(5000 * scale)), 16);
}
await crlFromStorage(10_000);
await crlFromStorage(Math.max(10_000, Math.round(1_000_000 * scale)));

console.log('\n| measure | result |\n| --- | --- |');
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
