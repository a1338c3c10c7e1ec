/**
 * A Local CA whose keys live on a PKCS#11 token (SoftHSM2, a fresh token initialised here):
 * issuance, revocation, CRL and OCSP through a real HTTPS server, each checked by openssl; the
 * database holds no private key; pkcs11-tool sees the CA keys as never extractable.
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
import { certificateToPem, createSelfSignedCertificate } from '../../packages/core/src/pki/index.js';
import { Pkcs11KeyCustody } from '../../packages/key-custody-pkcs11/src/custody.js';
import {
  createSoftHsmToken,
  type SoftHsmToken,
  softHsmModule,
} from '../../packages/key-custody-pkcs11/src/softhsm.js';
import type { LeasedTask } from '../../packages/server/src/schedulers/lease-runner.js';
import { startIssuanceWorker } from '../../packages/server/src/schedulers/renewal.js';
import type { createPgliteStorage } from '../../packages/storage-pg/src/index.js';
import { createMigratedPgliteStorage } from '../../packages/storage-pg/src/testing.js';
import { send } from './support/https-client.js';
import { createTestTls, serverTlsOptions, type TestTls } from './support/tls.js';

const KEY = 'pki-hsm-interop-key-0123456789abcdef';
const CERT_RE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;
const skip = softHsmModule() ? undefined : 'SoftHSM2 is not installed (apt-get install softhsm2 opensc)';
if (skip && process.env.SVC_TEST_REQUIRE_SERVICES) throw new Error(skip);

let tls: TestTls;
let server: Server;
let origin: string;
let services: Services;
let worker: LeasedTask;
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let token: SoftHsmToken;
let custody: Pkcs11KeyCustody;
let dir: string;
let issuerId: string;
let refs: { owner: string; team: string };
let chain: { issuing: string; root: string };

const file = (name: string, content: string | Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

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

beforeAll(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'cw-pki-hsm-'));
  token = createSoftHsmToken('certwright-ca');
  custody = Pkcs11KeyCustody.open({ module: token.module, tokenLabel: token.tokenLabel, pin: token.pin });
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
    { storage, clock: systemClock, logger: silentLogger, keyCustody: custody },
    { pki: { publicBaseUrl: origin } },
  );
  handler = createHandler({ auth: { type: 'api-key', secret: KEY }, services });
  worker = startIssuanceWorker({
    services,
    ephemeral: new MemoryEphemeralStore(),
    logger: silentLogger,
    holder: 'hsm-interop',
    intervalMs: 200,
  });
  const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'hsm', email: 'hsm@example.test' });
  const team = await services.teams.create(SYSTEM_ACTOR, { name: 'hsm' });
  refs = { owner: owner.id, team: team.id };
  const created = await api('POST', '/api/v1/issuers', {
    name: 'Token CA',
    type: 'Local',
    config: { key_custody: 'pkcs11', key_algorithm: 'ECDSA-P384' },
  });
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  issuerId = created.json.id;
  const chainRes = await api('GET', `/api/v1/issuers/${issuerId}/chain`);
  expect(chainRes.status).toBe(200);
  const [issuing, root] = chainRes.raw.toString().match(CERT_RE)!;
  chain = { issuing: issuing!, root: root! };
});

afterAll(async () => {
  await worker?.stop();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await storage?.close();
  await custody?.close();
  token?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(skip)('a Local CA on a PKCS#11 token (SoftHSM2)', () => {
  it('issues, revokes, and publishes a CRL and OCSP answers that openssl verifies', async () => {
    const created = await api('POST', '/api/v1/certificates', {
      name: `hsm-${randomBytes(4).toString('hex')}`,
      common_name: 'service.hsm.test',
      sans: ['127.0.0.1'],
      renewal_policy_id: 'rp-default',
      issuer_id: issuerId,
      owner_id: refs.owner,
      team_id: refs.team,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const cert = await waitFor('issuance', async () => {
      const got = await api('GET', `/api/v1/certificates/${created.json.id}`);
      return got.json.status === 'Active' ? got.json : undefined;
    });
    const exported = await api('GET', `/api/v1/certificates/${cert.id}/export?format=pem`);
    const leaf = exported.raw.toString().match(CERT_RE)![0]!;
    const verified = await run('openssl', [
      'verify',
      '-x509_strict',
      '-CAfile',
      file('root.pem', chain.root),
      '-untrusted',
      file('issuing.pem', chain.issuing),
      file('leaf.pem', leaf),
    ]);
    expect(verified.out).toContain('leaf.pem: OK');

    const ocspArgs = [
      'ocsp',
      '-url',
      `${origin}/.well-known/pki/ocsp/${issuerId}`,
      '-CAfile',
      file('trust.pem', tls.caPem + chain.issuing + chain.root),
      '-issuer',
      file('issuing.pem', chain.issuing),
      '-cert',
      file('leaf.pem', leaf),
    ];
    const good = await run('openssl', ocspArgs);
    expect(good.out).toContain('Response verify OK');
    expect(good.out).toMatch(/leaf\.pem: good/);

    const revoked = await api('POST', `/api/v1/certificates/${cert.id}/revoke`, { reason: 'keyCompromise' });
    expect(revoked.status).toBe(200);
    const after = await run('openssl', ocspArgs);
    expect(after.out).toContain('Response verify OK');
    expect(after.out).toMatch(/leaf\.pem: revoked/);

    const crlRes = await send({
      url: new URL(`/.well-known/pki/crl/${issuerId}`, origin),
      method: 'GET',
      ca: tls.caPem,
    });
    expect(crlRes.status).toBe(200);
    const crlDer = file('crl.der', crlRes.body);
    const crlCheck = await run('openssl', [
      'crl',
      '-inform',
      'DER',
      '-in',
      crlDer,
      '-CAfile',
      file('issuer-chain.pem', chain.issuing + chain.root),
      '-noout',
      '-text',
    ]);
    expect(crlCheck.out).toContain('verify OK');
    expect(crlCheck.out).toContain('Key Compromise');
  });

  it('keeps no private key in the database: stored rows and the issuer config hold only token labels', async () => {
    const withConfig = await storage.issuers.getWithConfig(issuerId);
    const config = JSON.stringify(withConfig?.config);
    expect(config).toContain('"issuing_key_label"');
    expect(config).not.toMatch(/PRIVATE KEY|issuing_key_pem|key_pem/);
    const tables = await storage.db.introspection.getTables();
    expect(tables.length).toBeGreaterThan(10);
    for (const table of tables) {
      const rows = await storage.db
        .selectFrom(table.name as never)
        .selectAll()
        .execute();
      const text = JSON.stringify(rows, (_k, v) =>
        v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
      );
      expect(text, table.name).not.toMatch(/PRIVATE KEY/);
    }
  });

  it('imports a CA whose key is already on the token, by certificate and key label', async () => {
    await custody.createKey({ algorithm: 'ECDSA-P256', label: 'ceremony ca 2026', extractable: false });
    const handle = await custody.signingKey('ceremony ca 2026');
    const now = Date.now();
    const ca = createSelfSignedCertificate(
      {
        subject: [{ type: 'CN', value: 'Ceremony CA' }],
        notBefore: new Date(now - 60_000),
        notAfter: new Date(now + 365 * 86_400_000),
        basicConstraints: { ca: true, pathLength: 0 },
      },
      handle,
    );
    const caPem = certificateToPem(ca.der);
    const wrongLabel = await api('POST', '/api/v1/issuers', {
      name: 'Ceremony CA (wrong label)',
      type: 'Local',
      config: { key_custody: 'pkcs11', certificate_pem: caPem, private_key_label: 'no such key' },
    });
    // The CA is imported on first use: the label that is not on the token is named then.
    expect(wrongLabel.status).toBe(201);
    const refused = await api('GET', `/api/v1/issuers/${wrongLabel.json.id}/chain`);
    expect(refused.status).toBe(404);
    expect(JSON.stringify(refused.json)).toContain("no key pair labelled 'no such key'");
    const created = await api('POST', '/api/v1/issuers', {
      name: 'Ceremony CA',
      type: 'Local',
      config: { key_custody: 'pkcs11', certificate_pem: caPem, private_key_label: 'ceremony ca 2026' },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const chainRes = await api('GET', `/api/v1/issuers/${created.json.id}/chain`);
    expect(chainRes.status).toBe(200);
    expect(chainRes.raw.toString()).toContain(caPem.trim());
    const stored = JSON.stringify((await storage.issuers.getWithConfig(created.json.id))?.config);
    expect(stored).toContain('"issuing_key_label":"ceremony ca 2026"');
    expect(stored).not.toContain('private_key_label');
  });

  it('holds the CA keys on the token as sensitive and never extractable (pkcs11-tool)', () => {
    const out = execFileSync(
      'pkcs11-tool',
      [
        '--module',
        token.module,
        '--token-label',
        token.tokenLabel,
        '--login',
        '--pin',
        token.pin,
        '--list-objects',
        '--type',
        'privkey',
      ],
      { env: { ...process.env, SOFTHSM2_CONF: token.conf }, encoding: 'utf8' },
    );
    const blocks = out
      .split(/\n(?=Private Key Object)/)
      .filter((b) => b.includes(`certwright ${issuerId.slice(0, 36)}`));
    // Root, issuing CA and the OCSP responder.
    expect(blocks.map((b) => /label:\s+certwright \S+ (\w+)/.exec(b)?.[1]).sort()).toEqual([
      'issuing',
      'ocsp',
      'root',
    ]);
    for (const b of blocks) {
      expect(b).toMatch(/Access:[^\n]*\bsensitive\b/);
      expect(b).toMatch(/Access:[^\n]*never extractable/);
    }
  });
});
