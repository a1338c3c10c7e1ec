/**
 * SCEP with device-management challenges against the real micromdm scepclient (Debian
 * package `scep`) over TLS 1.3, the challenges minted by `certwright-mint-scep-challenge`
 * (run from source) with an MDM key and certificate made by the openssl CLI. Issued
 * certificates are read by openssl, not by certwright's own parsers.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
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
import { createPgliteStorage } from '../../packages/storage-pg/src/index.js';
import { createTestTls, serverTlsOptions, type TestTls } from './support/tls.js';

const KEY = 'scep-mdm-interop-key-0123456789ab';
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const MINT = join(REPO, 'packages/server/src/mint-scep-challenge.ts');
const AUDIENCE = 'urn:certwright:scep:prof-default';

let tls: TestTls;
let server: Server;
let origin: string;
let services: Services;
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let dir: string;
let issuerId: string;

const path = (name: string) => join(dir, name);

function run(
  cmd: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd: options.cwd ?? dir, encoding: 'utf8', env: { ...process.env, ...options.env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, out: stdout, err: stderr });
      },
    );
  });
}

async function ok(cmd: string, args: string[]): Promise<string> {
  const result = await run(cmd, args);
  expect(result.code, `${cmd} ${args.join(' ')}\n${result.err}`).toBe(0);
  return result.out;
}

/** A challenge from the command, as an operator would mint one. */
async function mint(cn: string, extra: string[] = []): Promise<string> {
  const result = await run(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      'tsx',
      MINT,
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
    { cwd: REPO },
  );
  expect(result.code, result.err).toBe(0);
  return result.out.trim();
}

/** scepclient in a fresh directory (it reuses a leftover csr.pem); trust via SSL_CERT_FILE. */
async function scepclient(work: string, cn: string, challenge: string) {
  const cwd = path(work);
  if (!existsSync(cwd)) mkdirSync(cwd);
  return run(
    'scepclient',
    [
      '-server-url',
      `${origin}/scep`,
      '-challenge',
      challenge,
      '-cn',
      cn,
      '-private-key',
      join(cwd, 'key.pem'),
      '-certificate',
      join(cwd, 'cert.pem'),
    ],
    { cwd, env: { SSL_CERT_FILE: path('tls-ca.pem') } },
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cw-scep-mdm-interop-'));
  tls = createTestTls();
  writeFileSync(path('tls-ca.pem'), tls.caPem);
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
  let handler: ReturnType<typeof createHandler> | undefined;
  server = createServer(
    serverTlsOptions(tls),
    createRequestListener((req, t) => handler!(req, t)),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  storage = await createPgliteStorage(
    { memory: true },
    { secretBox: new SecretBox(randomBytes(32)), clock: systemClock },
  );
  await storage.migrate();
  services = createServices(
    { storage, clock: systemClock, logger: silentLogger },
    { pki: { publicBaseUrl: origin } },
  );
  handler = createHandler({ auth: { type: 'api-key', secret: KEY }, services });
  // scepclient 2.1 encrypts its request to every certificate GetCACert returns and handles
  // RSA recipients only, so this profile issues from an RSA Local CA.
  const issuer = await services.issuers.create(SYSTEM_ACTOR, {
    name: 'SCEP MDM interop CA',
    type: 'Local',
    config: { key_algorithm: 'RSA-2048' },
  });
  issuerId = issuer.id;
  await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
    enrollment: { issuer_id: issuerId },
    scep: { enabled: true, mdm: { enabled: true, trust_bundle_path: path('mdm.pem') } },
  });
}, 120_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await storage?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('scepclient with device-management challenges over TLS 1.3', () => {
  it('enrolls with a challenge minted by certwright-mint-scep-challenge; the certificate verifies and has the CN asked for', async () => {
    const token = await mint('mdm-interop-1');
    const result = await scepclient('one', 'mdm-interop-1', token);
    expect(result.code, result.err).toBe(0);
    const cert = join(path('one'), 'cert.pem');
    const subject = await ok('openssl', ['x509', '-in', cert, '-noout', '-subject', '-serial']);
    expect(subject).toMatch(/CN\s*=\s*mdm-interop-1/);
    const chain = (await services.pki.lifecycle.caChain(issuerId)).join('');
    writeFileSync(path('chain.pem'), chain);
    await ok('openssl', ['verify', '-CAfile', path('chain.pem'), cert]);
    expect(await ok('openssl', ['x509', '-in', cert, '-noout', '-pubkey'])).toBe(
      await ok('openssl', ['pkey', '-in', join(path('one'), 'key.pem'), '-pubout']),
    );
    expect((await services.scepMdm.verifier.counters('prof-default')).success).toBe(1);

    // The same challenge again, from another device directory: single use.
    const again = await scepclient('again', 'mdm-interop-1', token);
    expect(again.code).not.toBe(0);
    expect(existsSync(join(path('again'), 'cert.pem'))).toBe(false);
    expect((await services.scepMdm.verifier.counters('prof-default')).replay).toBe(1);
  });

  it('is refused for a CN the challenge does not name, and for a non-compliant device', async () => {
    const wrongName = await scepclient('two', 'mdm-interop-2', await mint('someone-else'));
    expect(wrongName.code).not.toBe(0);
    expect(existsSync(join(path('two'), 'cert.pem'))).toBe(false);
    const noncompliant = await scepclient(
      'three',
      'mdm-interop-3',
      await mint('mdm-interop-3', ['--compliant', 'false']),
    );
    expect(noncompliant.code).not.toBe(0);
    const counters = await services.scepMdm.verifier.counters('prof-default');
    expect(counters.claim_mismatch).toBe(1);
    expect(counters.compliance_failed).toBe(1);
  });
});
