/**
 * SCEP (RFC 8894) against micromdm's scepclient 2.1 (Debian package `scep`) over a real HTTPS
 * listener on 127.0.0.1 (TLS 1.3 only, as the server runs it) serving the composed handler over
 * real services on PGlite. scepclient trusts the listener through SSL_CERT_FILE; every issued
 * certificate is read by openssl, not by certwright's own parsers.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SecretBox, type Services, SYSTEM_ACTOR, silentLogger, systemClock } from '@certwright/core';
import { createRequestListener } from '@certwright/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../packages/api/src/index.js';
import { createServices } from '../../packages/core/src/index.js';
import type { createPgliteStorage } from '../../packages/storage-pg/src/index.js';
import { createMigratedPgliteStorage } from '../../packages/storage-pg/src/testing.js';
import { createTestTls, serverTlsOptions, type TestTls } from './support/tls.js';

const KEY = 'scep-interop-key-0123456789abcdef';
const CHALLENGE = 'scep interop challenge';

let tls: TestTls;
let server: Server;
let origin: string;
let services: Services;
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let dir: string;
let handler: ReturnType<typeof createHandler> | undefined;

const path = (name: string) => join(dir, name);

function run(
  cmd: string,
  args: string[],
  cwd = dir,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, out: stdout, err: stderr });
    });
  });
}

async function ok(cmd: string, args: string[], cwd = dir): Promise<string> {
  const result = await run(cmd, args, cwd);
  expect(result.code, `${cmd} ${args.join(' ')}\n${result.err}`).toBe(0);
  return result.out;
}

/**
 * scepclient in `workdir` (fresh unless renewing: it reuses a leftover csr.pem). scepclient 2.1
 * encrypts to every certificate of GetCACert unless -ca-fingerprint selects one, and the CA
 * here is ECDSA: the fingerprint names the RA, as for Microsoft NDES.
 */
async function scepclient(workdir: string, args: string[], url = `${origin}/scep`) {
  const ra = (await fetchBinary('/scep?operation=GetCACert')).body;
  writeFileSync(path('ra-fetch.der'), ra);
  const pem = await ok('openssl', ['pkcs7', '-inform', 'DER', '-in', path('ra-fetch.der'), '-print_certs']);
  writeFileSync(path('ra-fetch.pem'), pem.slice(pem.lastIndexOf('-----BEGIN CERTIFICATE-----')));
  const fingerprint = (
    await ok('openssl', ['x509', '-in', path('ra-fetch.pem'), '-noout', '-fingerprint', '-sha256'])
  )
    .split('=')[1]!
    .replace(/[:\s]/g, '')
    .toLowerCase();
  return run(
    'scepclient',
    [
      '-server-url',
      url,
      '-private-key',
      'key.pem',
      '-certificate',
      'cert.pem',
      '-ca-fingerprint',
      fingerprint,
      ...args,
    ],
    workdir,
    { ...process.env, SSL_CERT_FILE: path('tls-ca.pem') },
  );
}

function freshDir(name: string): string {
  const d = path(name);
  mkdirSync(d);
  return d;
}

async function fetchBinary(url: string): Promise<{ status: number; type: string | null; body: Buffer }> {
  const out = path(`fetch-${randomBytes(4).toString('hex')}`);
  const res = await run('curl', [
    '--silent',
    '--show-error',
    '--tlsv1.3',
    '--cacert',
    path('tls-ca.pem'),
    '--output',
    out,
    '--write-out',
    '%{http_code} %{content_type}',
    `${origin}${url}`,
  ]);
  expect(res.code, res.err).toBe(0);
  const [status, type] = res.out.split(' ');
  return { status: Number(status), type: type ?? null, body: readFileSync(out) };
}

const serialOf = (pemPath: string) => ok('openssl', ['x509', '-in', pemPath, '-noout', '-serial']);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cw-scep-interop-'));
  tls = createTestTls();
  writeFileSync(path('tls-ca.pem'), tls.caPem);
  server = createServer(
    serverTlsOptions(tls),
    createRequestListener((req, t) => handler!(req, t)),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(randomBytes(32)),
    clock: systemClock,
  });
  services = createServices(
    { storage, clock: systemClock, logger: silentLogger },
    { pki: { publicBaseUrl: origin } },
  );
  handler = createHandler({ auth: { type: 'api-key', secret: KEY }, services });
  await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
    scep: { enabled: true, challenge_password: CHALLENGE },
  });
  const chain = await services.pki.lifecycle.caChain('iss-local');
  writeFileSync(path('ca-chain.pem'), chain.join(''));
  writeFileSync(path('ca-root.pem'), chain[chain.length - 1]!);
}, 120_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await storage?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('SCEP with micromdm scepclient over TLS 1.3', () => {
  it('GetCACaps lists what is implemented; GetCACert is the CA chain and the RA as certs-only CMS', async () => {
    const caps = await fetchBinary('/scep?operation=GetCACaps');
    expect(caps.status).toBe(200);
    expect(caps.body.toString('utf8').trim().split('\n').sort()).toEqual(
      ['AES', 'POSTPKIOperation', 'Renewal', 'SCEPStandard', 'SHA-256', 'SHA-512'].sort(),
    );
    const ca = await fetchBinary('/scep/?operation=GetCACert');
    expect(ca.status).toBe(200);
    expect(ca.type).toBe('application/x-x509-ca-ra-cert');
    writeFileSync(path('cacert.der'), ca.body);
    const pem = await ok('openssl', ['pkcs7', '-inform', 'DER', '-in', path('cacert.der'), '-print_certs']);
    expect(pem).toContain('subject=O = certwright, CN = SCEP RA prof-default');
    writeFileSync(path('getcacert.pem'), pem);
    // The RA certificate chains to the CA and may receive key transport.
    const ra = pem.slice(pem.lastIndexOf('-----BEGIN CERTIFICATE-----'));
    writeFileSync(path('ra.pem'), ra);
    const text = await ok('openssl', ['x509', '-in', path('ra.pem'), '-noout', '-text']);
    expect(text).toMatch(/Digital Signature, Key Encipherment/);
    expect(text).toMatch(/Public-Key: \(2048 bit\)/);
    await ok('openssl', [
      'verify',
      '-CAfile',
      path('ca-root.pem'),
      '-untrusted',
      path('ca-chain.pem'),
      path('ra.pem'),
    ]);
  });

  it('PKCSReq with the right challenge: a certificate openssl verifies, for the key and CN asked', async () => {
    const work = freshDir('enroll');
    const result = await scepclient(work, ['-challenge', CHALLENGE, '-cn', 'device-1.scep.test']);
    expect(result.code, `${result.err}${result.out}`).toBe(0);
    const cert = join(work, 'cert.pem');
    await ok('openssl', ['verify', '-CAfile', path('ca-root.pem'), '-untrusted', path('ca-chain.pem'), cert]);
    const subject = await ok('openssl', ['x509', '-in', cert, '-noout', '-subject']);
    expect(subject.trim()).toBe('subject=CN = device-1.scep.test');
    const certKey = await ok('openssl', ['x509', '-in', cert, '-noout', '-pubkey']);
    const ownKey = await ok('openssl', ['pkey', '-in', join(work, 'key.pem'), '-pubout']);
    expect(certKey).toBe(ownKey);
    const page = await services.certificates.list({ source: 'SCEP', per_page: 50 });
    expect(page.data.map((c) => c.common_name)).toContain('device-1.scep.test');
    const audit = await storage.audit.list({ action: 'scep_pkcsreq', page: 1, perPage: 10 });
    expect(audit.items.some((e) => (e.details as { outcome?: string }).outcome === 'success')).toBe(true);
  });

  it('refuses a wrong challenge: scepclient reports the FAILURE and nothing is issued', async () => {
    const work = freshDir('wrong');
    const before = (await services.certificates.list({ source: 'SCEP', per_page: 1 })).total;
    const result = await scepclient(work, ['-challenge', 'not the challenge', '-cn', 'device-2.scep.test']);
    expect(result.code).not.toBe(0);
    expect(`${result.out}${result.err}`).toMatch(/badRequest|failInfo|FAILURE/i);
    expect(existsSync(join(work, 'cert.pem'))).toBe(false);
    expect((await services.certificates.list({ source: 'SCEP', per_page: 1 })).total).toBe(before);
  });

  it('RenewalReq signed by the current certificate: a new serial, a new version of the same certificate', async () => {
    const work = freshDir('renew');
    const first = await scepclient(work, ['-challenge', CHALLENGE, '-cn', 'device-3.scep.test']);
    expect(first.code, first.err).toBe(0);
    const cert = join(work, 'cert.pem');
    const before = await serialOf(cert);
    writeFileSync(join(work, 'old.pem'), readFileSync(cert));
    // With cert.pem present scepclient sends a RenewalReq signed by it (and no challenge).
    const renewed = await scepclient(work, ['-cn', 'device-3.scep.test']);
    expect(renewed.code, renewed.err).toBe(0);
    const after = await serialOf(cert);
    expect(after).not.toBe(before);
    await ok('openssl', ['verify', '-CAfile', path('ca-root.pem'), '-untrusted', path('ca-chain.pem'), cert]);
    const page = await services.certificates.list({ source: 'SCEP', per_page: 50 });
    const managed = page.data.filter((c) => c.common_name === 'device-3.scep.test');
    expect(managed).toHaveLength(1);
    const versions = await storage.versions.listForCertificate(managed[0]!.id);
    expect(versions.total).toBe(2);
    const audit = await storage.audit.list({ action: 'scep_renewalreq', page: 1, perPage: 10 });
    expect(audit.items.some((e) => (e.details as { outcome?: string }).outcome === 'success')).toBe(true);
    expect(createHash('sha256').update(readFileSync(cert)).digest('hex')).not.toBe(
      createHash('sha256')
        .update(readFileSync(join(work, 'old.pem')))
        .digest('hex'),
    );
  });
});

/**
 * Device-management challenges (docs/protocols/scep-mdm.md): the root profile switches to
 * signed challenges minted by `certwright-mint-scep-challenge` (run from source) with an MDM
 * key and certificate made by the openssl CLI; scepclient sends each as its -challenge.
 */
describe('SCEP with device-management challenges and micromdm scepclient', () => {
  const AUDIENCE = 'urn:certwright:scep:prof-default';
  const REPO = fileURLToPath(new URL('../../', import.meta.url));

  /** A challenge from the command, as an operator would mint one. */
  async function mint(cn: string, extra: string[] = []): Promise<string> {
    const result = await run(
      process.execPath,
      [
        '--conditions=source',
        '--import',
        'tsx',
        join(REPO, 'packages/server/src/mint-scep-challenge.ts'),
        '--key',
        path('mdm.key'),
        '--cert',
        path('mdm.pem'),
        '--audience',
        AUDIENCE,
        '--issuer',
        'interop-mdm',
        '--cn',
        cn,
        ...extra,
      ],
      REPO,
    );
    expect(result.code, result.err).toBe(0);
    return result.out.trim();
  }

  const counters = () => handler!.servers!.scep.mdm.verifier.counters('prof-default');

  beforeAll(async () => {
    await ok('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', path('mdm.key')]);
    await ok('openssl', [
      'req',
      '-new',
      '-x509',
      '-key',
      path('mdm.key'),
      '-subj',
      '/CN=interop mdm signer',
      '-days',
      '30',
      '-addext',
      'keyUsage=digitalSignature',
      '-out',
      path('mdm.pem'),
    ]);
    await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
      scep: { mdm: { enabled: true, trust_bundle_path: path('mdm.pem') } },
    });
  });

  it('PKCSReq with a minted challenge: a certificate openssl verifies for the CN the challenge names, audited scep_pkcsreq_mdm', async () => {
    const work = freshDir('mdm-enroll');
    const token = await mint('mdm-1.scep.test');
    const result = await scepclient(work, ['-challenge', token, '-cn', 'mdm-1.scep.test']);
    expect(result.code, `${result.err}${result.out}`).toBe(0);
    const cert = join(work, 'cert.pem');
    await ok('openssl', ['verify', '-CAfile', path('ca-root.pem'), '-untrusted', path('ca-chain.pem'), cert]);
    expect((await ok('openssl', ['x509', '-in', cert, '-noout', '-subject'])).trim()).toBe(
      'subject=CN = mdm-1.scep.test',
    );
    expect((await counters()).success).toBe(1);
    const audit = await storage.audit.list({ action: 'scep_pkcsreq_mdm', page: 1, perPage: 10 });
    expect(audit.items.some((e) => (e.details as { outcome?: string }).outcome === 'success')).toBe(true);

    // The same challenge from another device: single use, a FAILURE, nothing issued.
    const again = freshDir('mdm-again');
    const replay = await scepclient(again, ['-challenge', token, '-cn', 'mdm-1.scep.test']);
    expect(replay.code).not.toBe(0);
    expect(existsSync(join(again, 'cert.pem'))).toBe(false);
    expect((await counters()).replay).toBe(1);
  });

  it('refuses the static password, a CN the challenge does not name and a non-compliant device', async () => {
    const before = (await services.certificates.list({ source: 'SCEP', per_page: 1 })).total;
    const cases: [string, string, keyof Awaited<ReturnType<typeof counters>>][] = [
      ['mdm-static', CHALLENGE, 'malformed'],
      ['mdm-name', await mint('someone-else.scep.test'), 'claim_mismatch'],
      ['mdm-noncompliant', await mint('mdm-2.scep.test', ['--compliant', 'false']), 'compliance_failed'],
    ];
    for (const [name, challenge, status] of cases) {
      const work = freshDir(name);
      const start = (await counters())[status];
      const result = await scepclient(work, ['-challenge', challenge, '-cn', 'mdm-2.scep.test']);
      expect(result.code, name).not.toBe(0);
      expect(existsSync(join(work, 'cert.pem'))).toBe(false);
      expect((await counters())[status], name).toBe(start + 1);
    }
    expect((await services.certificates.list({ source: 'SCEP', per_page: 1 })).total).toBe(before);
  });
});
