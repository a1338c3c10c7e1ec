/**
 * The local CA, CRL and OCSP against real openssl (and keytool): a real HTTPS server on
 * 127.0.0.1 (TLS 1.3 only) serving the composed handler over real services on PGlite, with the
 * issuance worker running as the server runs it. Every check that matters is made by the
 * installed openssl 3 / Java keytool, not by our own parsers.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  MemoryEphemeralStore,
  SecretBox,
  type Services,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
} from '@certwright/core';
import { createRequestListener } from '@certwright/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../packages/api/src/index.js';
import { createServices } from '../../packages/core/src/index.js';
import type { LeasedTask } from '../../packages/server/src/schedulers/lease-runner.js';
import { startIssuanceWorker } from '../../packages/server/src/schedulers/renewal.js';
import type { createPgliteStorage } from '../../packages/storage-pg/src/index.js';
import { createMigratedPgliteStorage } from '../../packages/storage-pg/src/testing.js';
import { send } from './support/https-client.js';
import { createTestTls, serverTlsOptions, type TestTls } from './support/tls.js';

const KEY = 'pki-interop-key-0123456789abcdef';
const CERT_RE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;

let tls: TestTls;
let server: Server;
let origin: string;
let services: Services;
let worker: LeasedTask;
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let dir: string;
let issuerId: string;
let refs: { owner: string; team: string };
let chain: { issuing: string; root: string };

const file = (name: string, content: string | Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

/**
 * Runs a client asynchronously: the server under test lives in this process, so a synchronous
 * spawn would block the very event loop that must answer the client.
 */
function run(cmd: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: dir, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

async function api(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: any; raw: Buffer }> {
  const res = await send({
    url: new URL(path, origin),
    method,
    ca: tls.caPem,
    headers: {
      authorization: `Bearer ${KEY}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: Buffer.from(JSON.stringify(body)) } : {}),
  });
  const type = res.headers.get('content-type')?.[0] ?? '';
  return {
    status: res.status,
    json: /json/.test(type) ? JSON.parse(res.body.toString()) : undefined,
    raw: res.body,
  };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Creates a certificate over HTTPS and waits until the issuance worker made it Active. */
async function createIssued(fields: Record<string, unknown> = {}) {
  const created = await api('POST', '/api/v1/certificates', {
    name: `interop-${randomBytes(4).toString('hex')}`,
    common_name: 'service.interop.test',
    sans: ['127.0.0.1'],
    renewal_policy_id: 'rp-default',
    issuer_id: issuerId,
    owner_id: refs.owner,
    team_id: refs.team,
    ...fields,
  });
  expect(created.status).toBe(201);
  expect(created.json.status).toBe('Pending');
  return waitFor('issuance', async () => {
    const got = await api('GET', `/api/v1/certificates/${created.json.id}`);
    return got.json.status === 'Active' ? got.json : undefined;
  });
}

async function leafPem(id: string): Promise<string> {
  const res = await api('GET', `/api/v1/certificates/${id}/export?format=pem`);
  expect(res.status).toBe(200);
  return res.raw.toString().match(CERT_RE)![0]!;
}

async function ocsp(leaf: string, extra: string[] = []) {
  return await run('openssl', [
    'ocsp',
    '-url',
    `${origin}/.well-known/pki/ocsp/${issuerId}`,
    // One file trusts both the TLS server and the issuer chain the responder delegates from.
    '-CAfile',
    file('trust.pem', tls.caPem + chain.issuing + chain.root),
    '-issuer',
    file('issuing.pem', chain.issuing),
    '-cert',
    file('leaf.pem', leaf),
    ...extra,
  ]);
}

async function crl() {
  const res = await send({
    url: new URL(`/.well-known/pki/crl/${issuerId}`, origin),
    method: 'GET',
    ca: tls.caPem,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toEqual(['application/pkix-crl']);
  const der = file('crl.der', res.body);
  const pem = execFileSync('openssl', ['crl', '-inform', 'DER', '-in', der, '-outform', 'PEM'], {
    encoding: 'utf8',
  });
  return { der, pem: file('crl.pem', pem) };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cw-pki-interop-'));
  tls = createTestTls();
  let handler: ReturnType<typeof createHandler> | undefined;
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
  worker = startIssuanceWorker({
    services,
    ephemeral: new MemoryEphemeralStore(),
    logger: silentLogger,
    holder: 'interop',
    intervalMs: 200,
  });
  const owner = await services.owners.create(SYSTEM_ACTOR, {
    name: 'interop',
    email: 'interop@example.test',
  });
  const team = await services.teams.create(SYSTEM_ACTOR, { name: 'interop' });
  refs = { owner: owner.id, team: team.id };
  issuerId = (await services.issuers.create(SYSTEM_ACTOR, { name: 'Interop Local CA', type: 'Local' })).id;
  const chainRes = await api('GET', `/api/v1/issuers/${issuerId}/chain`);
  const [issuing, root] = chainRes.raw.toString().match(CERT_RE)!;
  chain = { issuing: issuing!, root: root! };
});

afterAll(async () => {
  await worker?.stop();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await storage?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('local CA issuance through the running server', () => {
  it('issues a created certificate that openssl verifies strictly against the chain', async () => {
    const cert = await createIssued();
    const leaf = await leafPem(cert.id);
    const v = await run('openssl', [
      'verify',
      '-x509_strict',
      '-purpose',
      'sslserver',
      '-CAfile',
      file('root.pem', chain.root),
      '-untrusted',
      file('issuing.pem', chain.issuing),
      file('leaf.pem', leaf),
    ]);
    expect(v.out).toContain('leaf.pem: OK');
    expect(v.code).toBe(0);
  });

  it('renews with a new serial', async () => {
    const cert = await createIssued();
    const before = await api('GET', `/api/v1/certificates/${cert.id}/key-data`);
    const renewed = await api('POST', `/api/v1/certificates/${cert.id}/renew`);
    expect(renewed.status).toBe(200);
    expect(renewed.json.version.serial_number).not.toBe(before.json.serial_number);
    const serial = (
      await run('openssl', ['x509', '-noout', '-serial', '-in', file('leaf.pem', await leafPem(cert.id))])
    ).out;
    expect(serial.trim().toLowerCase()).toBe(
      `serial=${renewed.json.version.serial_number.padStart(32, '0')}`,
    );
  });
});

describe('revocation seen by openssl right after the revoke call returns', () => {
  it('OCSP says good, then revoked with the reason; the CRL verifies and lists the serial', async () => {
    const cert = await createIssued();
    const leaf = await leafPem(cert.id);
    const good = await ocsp(leaf);
    expect(good.out).toContain('Response verify OK');
    expect(good.out).toMatch(/leaf\.pem: good/);

    const revoked = await api('POST', `/api/v1/certificates/${cert.id}/revoke`, { reason: 'keyCompromise' });
    expect(revoked.status).toBe(200);

    const after = await ocsp(leaf, ['-resp_text']);
    expect(after.out).toContain('Response verify OK');
    expect(after.out).toMatch(/leaf\.pem: revoked/);
    expect(after.out).toContain('Reason: keyCompromise');

    const { der, pem } = await crl();
    const check = await run('openssl', [
      'crl',
      '-inform',
      'DER',
      '-in',
      der,
      '-CAfile',
      file('issuer-chain.pem', chain.issuing + chain.root),
      '-noout',
      '-text',
    ]);
    expect(check.out).toContain('verify OK');
    expect(check.out).toContain('Key Compromise');
    const verify = await run('openssl', [
      'verify',
      '-crl_check',
      '-CAfile',
      file('ca-chain.pem', chain.root + chain.issuing),
      '-CRLfile',
      pem,
      file('leaf.pem', leaf),
    ]);
    expect(verify.out).toContain('certificate revoked');
    expect(verify.code).not.toBe(0);
  });

  it('answers OCSP GET (RFC 6960 A.1) and unknown for a certificate of another CA', async () => {
    const cert = await createIssued();
    const leaf = await leafPem(cert.id);
    await run('openssl', [
      'ocsp',
      '-issuer',
      file('issuing.pem', chain.issuing),
      '-cert',
      file('leaf.pem', leaf),
      '-no_nonce',
      '-reqout',
      'req.der',
    ]);
    const b64 = execFileSync('openssl', ['base64', '-A', '-in', join(dir, 'req.der')], {
      encoding: 'utf8',
    }).trim();
    const res = await send({
      url: new URL(`/.well-known/pki/ocsp/${issuerId}/${encodeURIComponent(b64)}`, origin),
      method: 'GET',
      ca: tls.caPem,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toEqual(['application/ocsp-response']);
    const parsed = await run('openssl', [
      'ocsp',
      '-respin',
      file('resp.der', res.body),
      '-reqin',
      'req.der',
      '-CAfile',
      file('trust.pem', tls.caPem + chain.issuing + chain.root),
      '-issuer',
      file('issuing.pem', chain.issuing),
      '-resp_text',
    ]);
    expect(parsed.out).toContain('Response verify OK');
    expect(parsed.out).toContain('Cert Status: good');

    // The TLS test CA's server certificate was never issued by this CA: `unknown`.
    const foreign = await ocsp(tls.serverCertPem);
    expect(foreign.out).toMatch(/leaf\.pem: unknown/);
  });
});

describe('exports read by openssl and keytool', () => {
  it('PKCS#12 with the caller password opens in openssl and keytool', async () => {
    const cert = await createIssued();
    const res = await api('POST', `/api/v1/certificates/${cert.id}/export`, {
      format: 'pkcs12',
      password: 'changeit-42',
    });
    expect(res.status).toBe(200);
    const p12 = file('cert.p12', res.raw);
    const info = await run('openssl', [
      'pkcs12',
      '-info',
      '-in',
      p12,
      '-passin',
      'pass:changeit-42',
      '-noenc',
    ]);
    expect(info.code).toBe(0);
    expect(info.out.match(/BEGIN CERTIFICATE/g)).toHaveLength(3);
    // PBKDF2-SHA256 for key and certificates, and a MAC key as costly to guess against.
    expect(info.out).toContain('MAC: sha256, Iteration 600000');
    expect(info.out).toContain(
      'Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration 600000, PRF hmacWithSHA256',
    );
    const keytool = await run('keytool', [
      '-list',
      '-v',
      '-keystore',
      p12,
      '-storetype',
      'PKCS12',
      '-storepass',
      'changeit-42',
    ]);
    expect(keytool.code).toBe(0);
    expect(keytool.out).toContain('PrivateKeyEntry');
    expect(keytool.out).toContain('Certificate chain length: 3');
  });
});

describe('hostile CSRs', () => {
  it('refuses a CSR with a weak RSA key and one with a bad signature; nothing is issued', async () => {
    const created = await api('POST', '/api/v1/certificates', {
      name: `hostile-${randomBytes(4).toString('hex')}`,
      common_name: 'hostile.interop.test',
      renewal_policy_id: 'rp-default',
      issuer_id: issuerId,
      owner_id: refs.owner,
      team_id: refs.team,
      profile_id: 'prof-default',
    });
    await worker.stop(); // keep the worker from issuing it server-side while we try CSRs
    try {
      await run('openssl', [
        'req',
        '-new',
        '-newkey',
        'rsa:1024',
        '-nodes',
        '-keyout',
        'weak.key',
        '-subj',
        '/CN=hostile.interop.test',
        '-out',
        'weak.csr',
      ]);
      const weak = await api('POST', `/api/v1/certificates/${created.json.id}/issue`, {
        csr_pem: execFileSync('cat', [join(dir, 'weak.csr')], { encoding: 'utf8' }),
      });
      expect(weak.status).toBe(400);
      expect(weak.json.detail).toMatch(/RSA-1024/);
      await run('openssl', [
        'req',
        '-new',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        'ok.key',
        '-subj',
        '/CN=hostile.interop.test',
        '-out',
        'ok.der',
        '-outform',
        'DER',
      ]);
      const der = Buffer.from(execFileSync('cat', [join(dir, 'ok.der')]));
      der[der.length - 3] = der[der.length - 3]! ^ 0x01;
      const bad = await api('POST', `/api/v1/certificates/${created.json.id}/issue`, {
        csr_pem: `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`,
      });
      expect(bad.status).toBe(400);
      expect(bad.json.detail).toMatch(/signature/i);
      const after = await api('GET', `/api/v1/certificates/${created.json.id}/versions`);
      expect(after.json.total).toBe(0);
    } finally {
      worker = startIssuanceWorker({
        services,
        ephemeral: new MemoryEphemeralStore(),
        logger: silentLogger,
        holder: 'interop',
        intervalMs: 200,
      });
    }
  });
});
