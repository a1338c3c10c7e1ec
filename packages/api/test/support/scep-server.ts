/**
 * A SCEP-ish server on 127.0.0.1 for probe tests: GetCACaps and GetCACert in the shapes real
 * servers use (RFC 8894 §4.2.1 and what the field sends), plus misbehaviours. It records every
 * request so a test can show that a probe sent only those two GETs.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  buildCertsOnly,
  certificateToPem,
  createSelfSignedCertificate,
  generateKeyPair,
  issueCertificate,
  pemEncode,
  prepareIssuer,
} from '@certwright/core/pki';

export const CAPS = 'AES\nPOSTPKIOperation\nRenewal\nSHA-256\nSHA-512\nSCEPStandard\n';

export interface ScepFixtures {
  /** The CA: ECDSA P-256, cA, valid 2025-01-01 to 2027-01-01. */
  caDer: Buffer;
  /** An RA certificate the CA issued (not a CA). */
  raDer: Buffer;
  /** A self-signed RSA 2048 certificate without basicConstraints (an old-style CA). */
  v1Der: Buffer;
  /** TLS server certificate for 127.0.0.1 and its key (PEM). */
  tlsCertPem: string;
  tlsKeyPem: string;
}

export async function scepFixtures(): Promise<ScepFixtures> {
  const caKeys = await generateKeyPair('ECDSA-P256');
  const ca = createSelfSignedCertificate(
    {
      subject: 'CN=Probe Test CA,O=certwright tests',
      notBefore: new Date('2025-01-01T00:00:00Z'),
      notAfter: new Date('2027-01-01T00:00:00Z'),
      basicConstraints: { ca: true },
    },
    caKeys.privateKey,
  );
  const raKeys = await generateKeyPair('RSA-2048');
  const ra = issueCertificate(
    {
      subject: 'CN=Probe Test RA,O=certwright tests',
      publicKey: raKeys.publicKey,
      notBefore: new Date('2025-01-01T00:00:00Z'),
      notAfter: new Date('2026-06-01T00:00:00Z'),
      keyUsage: ['digitalSignature', 'keyEncipherment'],
    },
    prepareIssuer(ca.der, caKeys.privateKey),
  );
  const v1Keys = await generateKeyPair('RSA-2048');
  const v1 = createSelfSignedCertificate(
    {
      subject: 'CN=Old Style CA',
      notBefore: new Date('2025-01-01T00:00:00Z'),
      notAfter: new Date('2030-01-01T00:00:00Z'),
      basicConstraints: { ca: false },
    },
    v1Keys.privateKey,
  );
  const tlsKeys = await generateKeyPair('ECDSA-P256');
  const tlsCert = createSelfSignedCertificate(
    {
      subject: 'CN=scep.test',
      notBefore: new Date(Date.now() - 86_400_000),
      notAfter: new Date(Date.now() + 2 * 86_400_000),
      subjectAltNames: [
        { type: 'dns', value: 'scep.test' },
        { type: 'ip', value: '127.0.0.1' },
      ],
      extendedKeyUsage: ['serverAuth'],
    },
    tlsKeys.privateKey,
  );
  return {
    caDer: ca.der,
    raDer: ra.der,
    v1Der: v1.der,
    tlsCertPem: certificateToPem(tlsCert.der),
    tlsKeyPem: tlsKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}

export interface RecordedRequest {
  method: string;
  path: string;
  operation: string | null;
}

export interface ScepTestServer {
  origin: string;
  requests: RecordedRequest[];
  /** Ends the answers held by `/slow/…` (their connections close unanswered). */
  release(): void;
  close(): Promise<void>;
}

type Answer = { status?: number; type?: string; body: Uint8Array | string } | 'hang' | 'endless';

/**
 * The GetCACert answer by the first path segment: `/pkcs7/…` CA + RA as certificates-only
 * SignedData, `/der/…` the CA alone as DER, `/pem/…` the CA as PEM, `/pem-pkcs7/…` the
 * SignedData in a PKCS7 PEM block, `/v1/…` a certificate without basicConstraints, `/huge/…`
 * 1 MiB and one byte, `/slow/…` no answer at all, `/garbage/…` bytes that are no certificate, `/nul/…` a CA named with control characters,
 * `/no-caps/…` GetCACaps 404 (GetCACert as `/der`).
 */
function answer(f: ScepFixtures, variant: string, operation: string | null): Answer {
  if (operation === 'GetCACaps') {
    if (variant === 'slow') return 'hang';
    if (variant === 'no-caps') return { status: 404, type: 'text/plain', body: 'not found' };
    return { type: 'text/plain', body: CAPS };
  }
  if (operation !== 'GetCACert') return { status: 400, type: 'text/plain', body: 'unsupported operation' };
  switch (variant) {
    case 'pkcs7':
      return { type: 'application/x-x509-ca-ra-cert', body: buildCertsOnly([f.raDer, f.caDer]) };
    case 'pem':
      return { type: 'application/x-pem-file', body: certificateToPem(f.caDer) };
    case 'pem-pkcs7':
      return { type: 'application/x-pem-file', body: pemEncode('PKCS7', buildCertsOnly([f.caDer, f.raDer])) };
    case 'v1':
      return { type: 'application/x-x509-ca-cert', body: f.v1Der };
    case 'huge':
      return { type: 'application/x-x509-ca-cert', body: Buffer.alloc(1024 * 1024 + 1, 0x30) };
    case 'endless':
      return 'endless';
    case 'nul': {
      // The CA with a NUL and a line break in its name (subject and issuer): the signature no
      // longer verifies, which a probe does not check.
      const der = Buffer.from(f.caDer);
      const at = der.indexOf('Probe Test CA');
      der[at] = 0;
      der[at + 5] = 0x0a;
      const again = der.indexOf('Probe Test CA');
      if (again >= 0) {
        der[again] = 0;
        der[again + 5] = 0x0a;
      }
      return { type: 'application/x-x509-ca-cert', body: der };
    }
    case 'garbage':
      return { type: 'application/x-x509-ca-cert', body: Buffer.from('this is not a certificate') };
    default:
      return { type: 'application/x-x509-ca-cert', body: f.caDer };
  }
}

export async function startScepTestServer(
  fixtures: ScepFixtures,
  options: { tls?: boolean } = {},
): Promise<ScepTestServer> {
  const requests: RecordedRequest[] = [];
  const hanging = new Set<http.ServerResponse>();
  const listener: http.RequestListener = (req, res) => {
    const url = new URL(req.url ?? '/', 'http://scep.test');
    const operation = url.searchParams.get('operation');
    requests.push({ method: req.method ?? '', path: url.pathname, operation });
    req.resume();
    const a = answer(fixtures, url.pathname.split('/')[1] ?? '', operation);
    if (a === 'hang') {
      hanging.add(res);
      return;
    }
    if (a === 'endless') {
      res.writeHead(200, { 'content-type': 'application/x-x509-ca-cert' });
      const chunk = Buffer.alloc(64 * 1024, 0x30);
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) {}
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
      return;
    }
    res.writeHead(a.status ?? 200, { 'content-type': a.type ?? 'application/octet-stream' });
    res.end(a.body);
  };
  const server = options.tls
    ? https.createServer({ cert: fixtures.tlsCertPem, key: fixtures.tlsKeyPem }, listener)
    : http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    release: () => {
      for (const res of hanging) res.destroy();
      hanging.clear();
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
