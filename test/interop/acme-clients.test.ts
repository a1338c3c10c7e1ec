/**
 * Real ACME clients (Debian's lego 4.9 and certbot 2.1) against the real certwright-server
 * process over TLS 1.3 on 127.0.0.1, through `/acme/directory` of the baseline profile
 * (prof-default, challenges required). The server validates every challenge for real: http-01
 * and tls-alpn-01 against the client's own listener on loopback, dns-01 against TXT records
 * served by pebble-challtestsrv. What the clients hold afterwards is checked with openssl and
 * against the server's inventory and OCSP responder.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type AcmeServer,
  type ChallTestSrv,
  freePort,
  killIfRunning,
  startAcmeServer,
  startChallTestSrv,
} from './support/acme-server.js';

const CERT_RE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;
const ISSUER_ID = 'iss-local';
/** A client run that takes longer than this is stuck (a validation that never completes). */
const CLIENT_TIMEOUT_MS = 150_000;
/** The server process loads its sources through tsx: slow on a loaded machine, not stuck. */
const SERVER_START_TIMEOUT_MS = 180_000;

let dns: (ChallTestSrv & { managementPort: number }) | undefined;
let server: AcmeServer;
let root: string;
/** HOME of the clients: nothing of theirs lands in the real one. */
let home: string;
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
      env: { PATH: process.env.PATH ?? '', HOME: home, ...env },
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

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
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
  const chain = readFileSync(intermediates, 'utf8');
  // One file trusts both the TLS server and the issuer chain the responder signs under.
  writeFileSync(trust, readFileSync(server.caPath, 'utf8') + chain + readFileSync(root, 'utf8'));
  const issuerPath = join(dir, 'issuer.pem');
  writeFileSync(issuerPath, chain.match(CERT_RE)?.[0] ?? readFileSync(root, 'utf8'));
  const result = await openssl([
    'ocsp',
    '-url',
    `${server.origin}/.well-known/pki/ocsp/${ISSUER_ID}`,
    '-CAfile',
    trust,
    '-issuer',
    issuerPath,
    '-cert',
    leaf,
  ]);
  expectSuccess(result, 'openssl ocsp');
  expect(result.out).toContain('Response verify OK');
  return result.out;
}

/** A certificate the client holds: issued by the Local CA for `name`, listed in the inventory. */
async function expectIssued(
  bundle: string,
  name: string,
): Promise<{ leaf: string; intermediates: string; serial: string }> {
  const { leaf, intermediates } = splitBundle(bundle);
  await expectChainsToIssuer(leaf, intermediates, name);
  const serial = await serialOf(leaf);
  const version = await inventoryVersion(name, serial);
  expect(version.revoked_at).toBeNull();
  expect(await ocspStatus(leaf, intermediates)).toMatch(/leaf\.pem: good/);
  return { leaf, intermediates, serial };
}

/** After a client revoked it: the inventory and the OCSP responder both say revoked. */
async function expectRevoked(
  held: { leaf: string; intermediates: string; serial: string },
  name: string,
  reason?: string,
): Promise<void> {
  const version = await waitFor('the revocation in the inventory', async () => {
    const found = await inventoryVersion(name, held.serial);
    return found.revoked_at ? found : undefined;
  });
  if (reason) expect(version.revocation_reason).toBe(reason);
  expect(await ocspStatus(held.leaf, held.intermediates)).toMatch(/leaf\.pem: revoked/);
}

beforeAll(async () => {
  home = tempDir('home');
  dns = await startChallTestSrv();
  server = await startAcmeServer(dns.dns);
  const chain = await server.api('GET', `/api/v1/issuers/${ISSUER_ID}/chain`);
  expect(chain.status).toBe(200);
  const certs = chain.text.match(CERT_RE) ?? [];
  root = join(tempDir('root'), 'root.pem');
  writeFileSync(root, certs.at(-1)!);
}, SERVER_START_TIMEOUT_MS);

afterEach(() => {
  for (const child of running) killIfRunning(child);
});

afterAll(async () => {
  for (const child of running) killIfRunning(child);
  await server?.stop();
  dns?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('lego 4.9', { timeout: CLIENT_TIMEOUT_MS + 30_000 }, () => {
  let work: string;
  const lego = (domain: string, solver: string[], command: string[], env: Record<string, string> = {}) =>
    run(
      'lego',
      [
        ...['--server', server.directory, '--accept-tos', '--email', 'lego@example.com'],
        ...['--path', work, '--key-type', 'ec256', '--domains', domain, ...solver],
        ...command,
      ],
      { LEGO_CA_CERTIFICATES: server.caPath, ...env },
    );
  const http01 = () => ['--http', '--http.port', `127.0.0.1:${server.http01Port}`];
  const bundle = (domain: string) => join(work, 'certificates', `${domain}.crt`);
  const name = 'lego-http.example.com';
  let first: { leaf: string; intermediates: string; serial: string };

  beforeAll(() => {
    work = tempDir('lego');
  });

  it('registers and gets a certificate through http-01 that chains to the Local CA and is in the inventory', async () => {
    expectSuccess(await lego(name, http01(), ['run']), 'lego run');
    first = await expectIssued(bundle(name), name);
  });

  it('gets no certificate when nothing answers its http-01 challenge where the server looks', async () => {
    const domain = 'lego-unanswered.example.com';
    // lego listens on a port of its own, so the server's validation finds nobody at its port.
    const elsewhere = ['--http', '--http.port', `127.0.0.1:${await freePort()}`];
    const result = await lego(domain, elsewhere, ['run']);
    expect(result.code).not.toBe(0);
    expect(result.out).toMatch(/urn:ietf:params:acme:error:(connection|incorrectResponse)/);
    expect(existsSync(bundle(domain))).toBe(false);
  });

  it('renews on demand (renew --days 100000) into a new certificate with a new serial', async () => {
    expectSuccess(
      await lego(name, http01(), ['renew', '--days', '100000', '--no-random-sleep']),
      'lego renew',
    );
    const renewed = await expectIssued(bundle(name), name);
    expect(renewed.serial).not.toBe(first.serial);
  });

  it('revokes its certificate with the account key (revoke --reason 4), seen by the inventory and OCSP', async () => {
    const held = splitBundle(bundle(name));
    const serial = await serialOf(held.leaf);
    expectSuccess(await lego(name, [], ['revoke', '--reason', '4']), 'lego revoke');
    await expectRevoked({ ...held, serial }, name, 'superseded');
  });

  it('gets a certificate through tls-alpn-01', async () => {
    const domain = 'lego-alpn.example.com';
    expectSuccess(
      await lego(domain, ['--tls', '--tls.port', `127.0.0.1:${server.tlsAlpn01Port}`], ['run']),
      'lego run --tls',
    );
    await expectIssued(bundle(domain), domain);
  });

  it('registers with an external account binding key from the API, which then binds that account and no other', async () => {
    const created = await server.api('POST', '/api/v1/acme/eab-keys', {
      profile_id: 'prof-default',
      name: 'lego interop',
    });
    expect(created.status).toBe(201);
    const eab = ['--eab', '--kid', created.json.id, '--hmac', created.json.hmac_key];
    const bound = tempDir('lego-eab');
    const register = (path: string) =>
      run(
        'lego',
        [
          ...['--server', server.directory, '--accept-tos', '--email', 'eab@example.com', '--path', path],
          ...['--domains', 'lego-eab.example.com', ...eab, ...http01(), 'run'],
        ],
        { LEGO_CA_CERTIFICATES: server.caPath },
      );
    expectSuccess(await register(bound), 'lego run --eab');
    const key = await server.api('GET', `/api/v1/acme/eab-keys/${created.json.id}`);
    expect(key.json.account_id).toMatch(/\S/);
    // Another account key (a fresh lego directory) cannot reuse the binding.
    const second = await register(tempDir('lego-eab-again'));
    expect(second.code).not.toBe(0);
    expect(second.out).toMatch(/urn:ietf:params:acme:error:/);
  });

  it('gets a certificate through dns-01 with the TXT record served by the DNS server the CA asks', async () => {
    const domain = 'lego-dns.example.com';
    // lego's exec provider calls `<script> present|cleanup <fqdn> <value>`.
    const script = join(tempDir('lego-exec'), 'txt.sh');
    writeFileSync(
      script,
      [
        '#!/bin/sh',
        'set -e',
        `api=http://127.0.0.1:${dns!.managementPort}`,
        'case "$1" in',
        `  present) curl -sf -d "{\\"host\\":\\"$2\\",\\"value\\":\\"$3\\"}" "$api/set-txt" ;;`,
        `  cleanup) curl -sf -d "{\\"host\\":\\"$2\\"}" "$api/clear-txt" ;;`,
        'esac',
        '',
      ].join('\n'),
    );
    chmodSync(script, 0o755);
    const solver = ['--dns', 'exec', '--dns.resolvers', dns!.dns, '--dns.disable-cp'];
    const result = await lego(domain, solver, ['run'], {
      EXEC_PATH: script,
      EXEC_POLLING_INTERVAL: '1',
      EXEC_PROPAGATION_TIMEOUT: '30',
    });
    expectSuccess(result, 'lego run --dns exec');
    await expectIssued(bundle(domain), domain);
  });
});

describe('certbot 2.1', { timeout: CLIENT_TIMEOUT_MS + 30_000 }, () => {
  let work: string;
  const stateDirs = () => [
    ...['--config-dir', join(work, 'etc'), '--work-dir', join(work, 'var'), '--logs-dir', join(work, 'log')],
  ];
  const certbot = (args: string[]) =>
    run('certbot', [...args, '--server', server.directory, '--non-interactive', ...stateDirs()], {
      REQUESTS_CA_BUNDLE: server.caPath,
    });
  const certonly = (domain: string) =>
    certbot([
      ...['certonly', '--standalone', '--http-01-address', '127.0.0.1'],
      ...['--http-01-port', String(server.http01Port), '--agree-tos', '-m', 'certbot@example.com'],
      ...['--key-type', 'ecdsa', '-d', domain],
    ]);
  const live = (domain: string, file: string) => join(work, 'etc', 'live', domain, file);
  const name = 'certbot-http.example.com';
  let first: { leaf: string; intermediates: string; serial: string };

  beforeAll(() => {
    work = tempDir('certbot');
  });

  it('registers and gets a certificate through http-01 (standalone) that chains to the Local CA and is in the inventory', async () => {
    expectSuccess(await certonly(name), 'certbot certonly');
    first = await expectIssued(live(name, 'fullchain.pem'), name);
  });

  it('renews on demand (renew --force-renewal) into a new certificate with a new serial', async () => {
    expectSuccess(
      await certbot(['renew', '--cert-name', name, '--force-renewal', '--no-random-sleep-on-renew']),
      'certbot renew',
    );
    const renewed = await expectIssued(live(name, 'fullchain.pem'), name);
    expect(renewed.serial).not.toBe(first.serial);
  });

  it('revokes a certificate signed with the account key, seen by the inventory and OCSP', async () => {
    const held = splitBundle(live(name, 'fullchain.pem'));
    const serial = await serialOf(held.leaf);
    expectSuccess(
      await certbot([
        'revoke',
        '--cert-path',
        live(name, 'cert.pem'),
        '--reason',
        'superseded',
        '--no-delete-after-revoke',
      ]),
      'certbot revoke',
    );
    await expectRevoked({ ...held, serial }, name, 'superseded');
  });

  it('revokes a certificate signed with the certificate key, seen by the inventory and OCSP', async () => {
    const domain = 'certbot-key.example.com';
    expectSuccess(await certonly(domain), 'certbot certonly');
    const held = await expectIssued(live(domain, 'fullchain.pem'), domain);
    expectSuccess(
      await certbot([
        ...['revoke', '--cert-path', live(domain, 'cert.pem'), '--key-path', live(domain, 'privkey.pem')],
        '--no-delete-after-revoke',
      ]),
      'certbot revoke --key-path',
    );
    await expectRevoked(held, domain);
  });

  it('updates its account contact (update_account)', async () => {
    const result = await certbot(['update_account', '-m', 'certbot-new@example.com']);
    expectSuccess(result, 'certbot update_account');
    expect(result.out).toMatch(/updated/i);
  });

  it('deactivates its account (unregister): the same account key cannot order afterwards', async () => {
    const accounts = join(work, 'etc', 'accounts');
    const kept = join(tempDir('certbot-accounts'), 'accounts');
    cpSync(accounts, kept, { recursive: true });
    const result = await certbot(['unregister']);
    expectSuccess(result, 'certbot unregister');
    expect(result.out).toMatch(/Account deactivated/);
    // Put the deactivated account back: certbot would otherwise just register a new one.
    rmSync(accounts, { recursive: true, force: true });
    cpSync(kept, accounts, { recursive: true });
    const refused = await certonly('certbot-after.example.com');
    expect(refused.code).not.toBe(0);
    // certbot 2.1 with Debian's josepy crashes while displaying any ACME problem
    // ("AttributeError: can't set attribute"), so the server's answer is read from its log.
    const log = readFileSync(join(work, 'log', 'letsencrypt.log'), 'utf8');
    expect(log).toMatch(/urn:ietf:params:acme:error:unauthorized :: .*deactivated/);
  });
});
