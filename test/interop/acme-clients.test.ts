/**
 * Real ACME clients (Debian's lego 4.9 and certbot 2.1) against the real certwright-server
 * process over TLS 1.3 on 127.0.0.1, through `/acme/directory` of the baseline profile
 * (prof-default, challenges required). The server validates every challenge for real: http-01
 * and tls-alpn-01 against the client's own listener on loopback, dns-01 against TXT records
 * served by pebble-challtestsrv. What the clients hold afterwards is checked with openssl and
 * against the server's inventory and OCSP responder.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type AcmeServer,
  type ChallTestSrv,
  killIfRunning,
  startAcmeServer,
  startChallTestSrv,
} from './support/acme-server.js';

const CERT_RE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;
const ISSUER_ID = 'iss-local';
/** A client run that takes longer than this is stuck (a validation that never completes). */
const CLIENT_TIMEOUT_MS = 150_000;

let dns: (ChallTestSrv & { managementPort: number }) | undefined;
let server: AcmeServer;
let root: string;
const running = new Set<ChildProcess>();
const dirs: string[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `cw-${prefix}-`));
  dirs.push(dir);
  return dir;
}

interface Run {
  code: number | null;
  out: string;
}

/** Runs a client to completion without blocking; its output is kept for the failure message. */
function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    const timer = setTimeout(() => {
      out += `\n[killed after ${CLIENT_TIMEOUT_MS} ms]`;
      child.kill('SIGKILL');
    }, CLIENT_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, out });
    });
  });
}

function expectSuccess(result: Run, what: string): void {
  if (result.code !== 0) throw new Error(`${what} exited with ${result.code}:\n${result.out}`);
}

function openssl(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile('openssl', args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out: stdout + stderr });
    });
  });
}

/** The leaf's serial in the inventory's form: lower-case hex without leading zeros. */
async function serialOf(certPath: string): Promise<string> {
  const result = await openssl(['x509', '-in', certPath, '-noout', '-serial']);
  expectSuccess(result, 'openssl x509 -serial');
  return BigInt(`0x${result.out.trim().replace(/^serial=/, '')}`).toString(16);
}

/** Splits a PEM bundle into the leaf file and the file of the certificates after it. */
function splitBundle(bundlePath: string): { leaf: string; intermediates: string } {
  const [leaf, ...rest] = readFileSync(bundlePath, 'utf8').match(CERT_RE) ?? [];
  expect(leaf, `${bundlePath} holds no certificate`).toBeDefined();
  const dir = tempDir('split');
  writeFileSync(join(dir, 'leaf.pem'), leaf!);
  writeFileSync(join(dir, 'chain.pem'), rest.join(''));
  return { leaf: join(dir, 'leaf.pem'), intermediates: join(dir, 'chain.pem') };
}

/** openssl (not our code) verifies the leaf up to the Local CA's root for TLS server use. */
async function expectChainsToIssuer(leaf: string, intermediates: string, name: string): Promise<void> {
  const args = ['verify', '-purpose', 'sslserver', '-CAfile', root];
  if (readFileSync(intermediates, 'utf8').trim()) args.push('-untrusted', intermediates);
  const verified = await openssl([...args, leaf]);
  expect(verified.out).toContain(': OK');
  const text = await openssl(['x509', '-in', leaf, '-noout', '-ext', 'subjectAltName']);
  expect(text.out).toContain(`DNS:${name}`);
}

/** The inventory's version with this serial, found through the ACME-sourced certificates. */
async function inventoryVersion(name: string, serial: string): Promise<any> {
  const list = await server.api(
    'GET',
    `/api/v1/certificates?source=ACME&search=${encodeURIComponent(name)}&per_page=100`,
  );
  expect(list.status).toBe(200);
  for (const cert of list.json.data) {
    expect(cert.source).toBe('ACME');
    const versions = await server.api('GET', `/api/v1/certificates/${cert.id}/versions?per_page=100`);
    const found = versions.json.data.find((v: any) => v.serial_number === serial);
    if (found) return found;
  }
  throw new Error(`no ACME certificate version with serial ${serial} for ${name} in the inventory`);
}

/** The OCSP status line openssl prints for the leaf, from the issuer's responder. */
async function ocspStatus(leaf: string, intermediates: string): Promise<string> {
  const dir = tempDir('ocsp');
  const trust = join(dir, 'trust.pem');
  writeFileSync(trust, readFileSync(server.caPath, 'utf8') + readFileSync(root, 'utf8'));
  const issuer = readFileSync(intermediates, 'utf8').match(CERT_RE)?.[0];
  const issuerPath = join(dir, 'issuer.pem');
  writeFileSync(issuerPath, issuer ?? readFileSync(root, 'utf8'));
  const result = await openssl([
    'ocsp',
    '-url',
    `${server.origin}/.well-known/pki/ocsp/${ISSUER_ID}`,
    '-CAfile',
    trust,
    '-VAfile',
    trust,
    '-issuer',
    issuerPath,
    '-cert',
    leaf,
  ]);
  expectSuccess(result, 'openssl ocsp');
  return result.out;
}

beforeAll(async () => {
  dns = await startChallTestSrv();
  server = await startAcmeServer(dns.dns);
  const chain = await server.api('GET', `/api/v1/issuers/${ISSUER_ID}/chain`);
  expect(chain.status).toBe(200);
  const certs = chain.text.match(CERT_RE) ?? [];
  root = join(tempDir('root'), 'root.pem');
  writeFileSync(root, certs.at(-1)!);
});

afterEach(() => {
  for (const child of running) killIfRunning(child);
});

afterAll(async () => {
  for (const child of running) killIfRunning(child);
  await server?.stop();
  dns?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('lego 4.9', () => {
  const name = 'lego-http.example.com';
  let work: string;
  const lego = (args: string[], domain = name, extra: string[] = []) =>
    run(
      'lego',
      [
        ...['--server', server.directory, '--accept-tos', '--email', 'lego@example.com'],
        ...['--path', work, '--key-type', 'ec256', '--domains', domain, ...extra],
        ...args,
      ],
      { LEGO_CA_CERTIFICATES: server.caPath },
    );
  const http01 = () => ['--http', '--http.port', `127.0.0.1:${server.http01Port}`];

  beforeAll(() => {
    work = tempDir('lego');
  });

  it('registers and gets a certificate through http-01 that chains to the Local CA and is in the inventory', async () => {
    expectSuccess(await lego(['run'], name, http01()), 'lego run');
    const { leaf, intermediates } = splitBundle(join(work, 'certificates', `${name}.crt`));
    await expectChainsToIssuer(leaf, intermediates, name);
    const version = await inventoryVersion(name, await serialOf(leaf));
    expect(version.revoked_at).toBeNull();
  });
});
