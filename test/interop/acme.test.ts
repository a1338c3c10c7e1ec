/**
 * ACME interop: Debian's `lego` against a real certwright-server process on loopback, with
 * real http-01 validation. `pebble-challtestsrv` is the DNS server that resolves the test name
 * to 127.0.0.1 for the server's validator; lego answers http-01 on its own loopback port.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestPki } from '../../packages/server/test/support/openssl-pki.js';
import { type ServerProcess, startServerProcess } from '../../packages/server/test/support/server-process.js';

const DOMAIN = 'd.example.com';
const have = (tool: string) => ['/usr/bin', '/usr/local/bin'].some((dir) => existsSync(join(dir, tool)));
const skipReason = !have('lego')
  ? 'lego is not installed (apt-get install -y lego)'
  : !have('pebble-challtestsrv')
    ? 'pebble-challtestsrv is not installed (apt-get install -y pebble)'
    : null;
if (skipReason) console.warn(`ACME interop skipped: ${skipReason}`);

async function freeTcpPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function freeUdpPort(): Promise<number> {
  const probe = createSocket('udp4');
  await new Promise<void>((resolve) => probe.bind(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

let server: ServerProcess | undefined;
let dns: ChildProcess | undefined;
let work: string;
let legoPort: number;
let pki: ReturnType<typeof makeTestPki>;

function lego(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'lego',
      [
        '--server',
        `https://127.0.0.1:${server!.port}/acme/directory`,
        '--accept-tos',
        '--email',
        'a@example.com',
        '--path',
        work,
        '--domains',
        DOMAIN,
        '--http',
        '--http.port',
        `127.0.0.1:${legoPort}`,
        ...args,
      ],
      { env: { PATH: process.env.PATH ?? '', LEGO_CA_CERTIFICATES: pki.ca }, timeout: 180_000 },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
          output: stdout + stderr,
        }),
    );
  });
}

function certbot(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'certbot',
      [
        ...args,
        '--server',
        `https://127.0.0.1:${server!.port}/acme/directory`,
        '--non-interactive',
        '--config-dir',
        join(work, 'certbot', 'etc'),
        '--work-dir',
        join(work, 'certbot', 'var'),
        '--logs-dir',
        join(work, 'certbot', 'log'),
      ],
      { env: { PATH: process.env.PATH ?? '', REQUESTS_CA_BUNDLE: pki.ca }, timeout: 180_000 },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
          output: stdout + stderr,
        }),
    );
  });
}

const certificateFile = () => join(work, 'certificates', `${DOMAIN}.crt`);

describe.skipIf(skipReason !== null)('lego against certwright-server (http-01 on loopback)', () => {
  beforeAll(async () => {
    pki = makeTestPki(['server']);
    work = mkdtempSync(join(tmpdir(), 'cw-lego-'));
    legoPort = await freeTcpPort();
    const dnsPort = await freeUdpPort();
    const managementPort = await freeTcpPort();
    dns = spawn(
      'pebble-challtestsrv',
      [
        '-dns01',
        `127.0.0.1:${dnsPort}`,
        '-http01',
        '',
        '-https01',
        '',
        '-tlsalpn01',
        '',
        '-management',
        `127.0.0.1:${managementPort}`,
        '-defaultIPv4',
        '127.0.0.1',
        '-defaultIPv6',
        '',
      ],
      { stdio: 'ignore' },
    );
    server = await startServerProcess({
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: 'acme-interop-secret-0123456789abcdef',
      SVC_RATE_LIMIT_ENROLLMENT: '0',
      SVC_ACME_SERVER_VALIDATION_RESOLVER: `127.0.0.1:${dnsPort}`,
      SVC_ACME_SERVER_DNS01_RESOLVER: `127.0.0.1:${dnsPort}`,
      SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES: '127.0.0.0/8',
      SVC_ACME_SERVER_HTTP01_PORT: String(legoPort),
    });
  }, 240_000);

  afterAll(async () => {
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    dns?.kill('SIGTERM');
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('obtains a certificate, renews it with a new serial, and revokes it', { timeout: 600_000 }, async () => {
    const run = await lego(['run']);
    expect(run.code, run.output).toBe(0);
    const first = new X509Certificate(readFileSync(certificateFile()));
    expect(first.subjectAltName).toBe(`DNS:${DOMAIN}`);
    expect(server!.output()).toMatch(/ACME challenge validation may connect to LOOPBACK/);

    const renewed = await lego(['renew', '--days', '100000', '--no-random-sleep']);
    expect(renewed.code, renewed.output).toBe(0);
    const second = new X509Certificate(readFileSync(certificateFile()));
    expect(second.serialNumber).not.toBe(first.serialNumber);
    expect(second.subjectAltName).toBe(`DNS:${DOMAIN}`);

    const revoked = await lego(['revoke', '--keep', '--reason', '4']);
    expect(revoked.code, revoked.output).toBe(0);
    const again = await lego(['revoke']);
    expect(again.code).not.toBe(0);
    expect(again.output).toMatch(/alreadyRevoked/);
  });

  it.skipIf(!have('certbot'))(
    'certbot obtains a certificate and revokes it with the certificate key',
    { timeout: 600_000 },
    async () => {
      const domain = 'c.example.com';
      const obtained = await certbot([
        'certonly',
        '--standalone',
        '--http-01-address',
        '127.0.0.1',
        '--http-01-port',
        String(legoPort),
        '--agree-tos',
        '-m',
        'a@example.com',
        '-d',
        domain,
      ]);
      expect(obtained.code, obtained.output).toBe(0);
      const live = join(work, 'certbot', 'etc', 'live', domain);
      const leaf = new X509Certificate(readFileSync(join(live, 'cert.pem')));
      expect(leaf.subjectAltName).toBe(`DNS:${domain}`);
      // Signed with the certificate's own key (jwk), not the account's: RFC 8555 §7.6.
      const revoked = await certbot([
        'revoke',
        '--cert-path',
        join(live, 'cert.pem'),
        '--key-path',
        join(live, 'privkey.pem'),
        '--reason',
        'keycompromise',
        '--no-delete-after-revoke',
      ]);
      expect(revoked.code, revoked.output).toBe(0);
    },
  );
});
