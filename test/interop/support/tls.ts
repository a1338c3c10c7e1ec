/**
 * Throwaway TLS material for tests that need a real handshake: a CA, a server certificate
 * for 127.0.0.1/localhost and a client certificate, all made by the openssl CLI in a temp
 * directory, so the TLS stack sees certificates exactly as a user's tooling would make them.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestTls {
  caPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  clientCertPem: string;
  clientKeyPem: string;
  /** DER of the client leaf, to compare with what a handler reports. */
  clientCertDer: Uint8Array;
}

export function createTestTls(): TestTls {
  const dir = mkdtempSync(join(tmpdir(), 'certwright-tls-'));
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  try {
    run(
      'req',
      '-x509',
      ...ecKey,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=certwright test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
    const issue = (name: string, subject: string, extensions: string) => {
      writeFileSync(join(dir, `${name}.ext`), extensions);
      run('req', '-new', ...ecKey, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
      run(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-out',
        `${name}.pem`,
        '-days',
        '2',
        '-extfile',
        `${name}.ext`,
      );
    };
    issue(
      'server',
      '/CN=localhost',
      'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
    );
    issue('client', '/CN=certwright test client', 'extendedKeyUsage=clientAuth\n');
    const read = (file: string) => readFileSync(join(dir, file), 'utf8');
    const clientCertPem = read('client.pem');
    return {
      caPem: read('ca.pem'),
      serverCertPem: read('server.pem'),
      serverKeyPem: read('server.key'),
      clientCertPem,
      clientKeyPem: read('client.key'),
      clientCertDer: new Uint8Array(new X509Certificate(clientCertPem).raw),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Server options every host in the tests uses: TLS 1.3 only, client certificates asked for, not required. */
export function serverTlsOptions(tls: TestTls) {
  return {
    minVersion: 'TLSv1.3' as const,
    requestCert: true,
    rejectUnauthorized: false,
    cert: tls.serverCertPem,
    key: tls.serverKeyPem,
    ca: tls.caPem,
  };
}
