/**
 * core/pki benchmark: raw node:crypto signing next to what certwright builds on top of it.
 * Run: node --import tsx bench/pki.ts  (not a test; no thresholds). Figures go to docs/pki.md;
 * the post-quantum rows (ML-DSA, SLH-DSA: Node.js 24) to docs/pki/post-quantum.md.
 */

import { type KeyObject, sign, verify, webcrypto } from 'node:crypto';
import { cpus } from 'node:os';
import {
  buildCertId,
  buildCrl,
  buildOcspResponse,
  type CrlEntry,
  createSelfSignedCertificate,
  exportPkcs8Der,
  exportSpkiDer,
  generateKeyPair,
  type IssuingAuthority,
  issueCertificate,
  type KeyAlgorithm,
  prepareIssuer,
  prepareOcspResponder,
} from '../packages/core/src/pki/index.js';
import { postQuantumRuntime } from '../packages/core/src/pki/post-quantum-runtime.js';

const DAY = 86_400_000;
const now = new Date();
const rows: [string, string][] = [];

function measure(name: string, fn: () => void, ms = 2000, batch = 10): number {
  for (let i = 0; i < 2 * batch; i++) fn(); // warm-up
  let n = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < batch; i++) fn();
    n += batch;
    elapsed = performance.now() - start;
  }
  const perSec = (n / elapsed) * 1000;
  rows.push([name, `${perSec.toFixed(0)} /s  (${(elapsed / n).toFixed(3)} ms each)`]);
  console.error(`${name}: ${perSec.toFixed(0)}/s`);
  return perSec;
}

async function measureAsync(name: string, fn: () => Promise<void>, ms = 2000): Promise<number> {
  for (let i = 0; i < 5; i++) await fn();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    await fn();
    n++;
  }
  const elapsed = performance.now() - start;
  const perSec = (n / elapsed) * 1000;
  rows.push([name, `${perSec.toFixed(0)} /s  (${(elapsed / n).toFixed(3)} ms each)`]);
  console.error(`${name}: ${perSec.toFixed(0)}/s`);
  return perSec;
}

function timeOnce(name: string, fn: () => unknown): number {
  const start = performance.now();
  const out = fn();
  const ms = performance.now() - start;
  const size = out instanceof Uint8Array ? `, ${(out.length / 1024 / 1024).toFixed(1)} MiB` : '';
  rows.push([name, `${ms.toFixed(0)} ms${size}`]);
  console.error(`${name}: ${ms.toFixed(0)} ms`);
  return ms;
}

async function makeCa(alg: KeyAlgorithm): Promise<IssuingAuthority> {
  const { privateKey } = await generateKeyPair(alg);
  const root = createSelfSignedCertificate(
    {
      subject: `CN=bench ${alg}`,
      notBefore: now,
      notAfter: new Date(now.getTime() + 3650 * DAY),
      basicConstraints: { ca: true },
    },
    privateKey,
  );
  return prepareIssuer(root.der, privateKey);
}

const message = Buffer.alloc(400, 7); // about the size of a leaf TBSCertificate
const p256 = await generateKeyPair('ECDSA-P256');
const rsa = await generateKeyPair('RSA-2048');
measure('raw node:crypto sign, ECDSA P-256', () => sign('sha256', message, p256.privateKey));
measure('raw node:crypto sign, RSA-2048', () => sign('sha256', message, rsa.privateKey));

const leafKey = await generateKeyPair('ECDSA-P256');
const leafTemplate = {
  subject: 'CN=leaf.bench.test',
  publicKey: leafKey.publicKey,
  notBefore: now,
  notAfter: new Date(now.getTime() + 90 * DAY),
  subjectAltNames: [{ type: 'dns' as const, value: 'leaf.bench.test' }],
  extendedKeyUsage: ['serverAuth' as const],
  crlDistributionPoints: ['https://pki.bench.test/crl'],
  authorityInfoAccess: { ocsp: ['https://pki.bench.test/ocsp'] },
};
const caP256 = await makeCa('ECDSA-P256');
const caRsa = await makeCa('RSA-2048');
// Issuance from a CSR hands over SubjectPublicKeyInfo bytes; a KeyObject costs an export more.
const fromCsr = { ...leafTemplate, publicKey: exportSpkiDer(leafKey.publicKey) };
measure('leaf issuance (certwright DER), P-256 CA', () => issueCertificate(fromCsr, caP256));
measure('leaf issuance (certwright DER), RSA-2048 CA', () => issueCertificate(fromCsr, caRsa));
measure('leaf issuance (certwright DER), P-256 CA, KeyObject input', () =>
  issueCertificate(leafTemplate, caP256),
);

// The same leaf through @peculiar/x509 (webcrypto), the library path certwright replaced.
// Both are root devDependencies: only this comparison uses them.
await import('reflect-metadata');
const x509 = await import('@peculiar/x509');
x509.cryptoProvider.set(webcrypto as unknown as Crypto);
const peculiarCases: [string, IssuingAuthority, EcKeyImportParams & EcdsaParams & RsaHashedImportParams][] = [
  ['P-256', caP256, { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }],
  ['RSA-2048', caRsa, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }],
] as never;
for (const [label, ca, alg] of peculiarCases) {
  const signingKey = await webcrypto.subtle.importKey(
    'pkcs8',
    exportPkcs8Der(ca.privateKey as KeyObject),
    alg,
    false,
    ['sign'],
  );
  const publicKey = await webcrypto.subtle.importKey(
    'spki',
    exportSpkiDer(leafKey.publicKey),
    { name: 'ECDSA', namedCurve: 'P-256' },
    true,
    ['verify'],
  );
  const issuerName = `CN=bench ${label === 'P-256' ? 'ECDSA-P256' : 'RSA-2048'}`;
  await measureAsync(`leaf issuance (@peculiar/x509), ${label} CA`, async () => {
    await x509.X509CertificateGenerator.create({
      serialNumber: '0102030405060708090a0b0c0d0e0f10',
      subject: 'CN=leaf.bench.test',
      issuer: issuerName,
      notBefore: now,
      notAfter: leafTemplate.notAfter,
      signingAlgorithm: alg,
      publicKey,
      signingKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        await x509.SubjectKeyIdentifierExtension.create(publicKey),
        new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'leaf.bench.test' }]),
      ],
    });
  });
}

// The @peculiar/x509 CRL generator, for the growth curve (its cost grows quadratically with the entries).
{
  const signingKey = await webcrypto.subtle.importKey(
    'pkcs8',
    exportPkcs8Der(caP256.privateKey as KeyObject),
    { name: 'ECDSA', namedCurve: 'P-256' },
    false,
    ['sign'],
  );
  for (const n of [500, 1_000, 2_000, 4_000]) {
    const start = performance.now();
    let result: string;
    try {
      await x509.X509CrlGenerator.create({
        issuer: 'CN=bench ECDSA-P256',
        thisUpdate: now,
        nextUpdate: new Date(now.getTime() + DAY),
        signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
        signingKey,
        entries: Array.from({ length: n }, (_, i) => ({
          serialNumber: `${(0x40000000 + i).toString(16)}a1b2c3d4e5f60718293a4b5c`,
          revocationDate: now,
          reason: x509.X509CrlReason.keyCompromise,
        })),
      });
      result = `${(performance.now() - start).toFixed(0)} ms`;
    } catch (err) {
      // It re-parses its own output, which asn1js refuses beyond 10,000 nodes.
      result = `fails: ${(err as Error).message}`;
    }
    rows.push([`CRL build + sign (@peculiar/x509), ${n.toLocaleString('en')} entries`, result]);
    console.error(`peculiar CRL ${n}: ${result}`);
  }
}

// OCSP: a delegated responder signing a fresh response for each request.
for (const [label, ca] of [
  ['P-256', caP256],
  ['RSA-2048', caRsa],
] as const) {
  const respKey = await generateKeyPair(label === 'P-256' ? 'ECDSA-P256' : 'RSA-2048');
  const respCert = issueCertificate(
    {
      ...leafTemplate,
      subject: 'CN=responder',
      publicKey: respKey.publicKey,
      extendedKeyUsage: ['OCSPSigning'],
      ocspNoCheck: true,
    },
    ca,
  );
  const responder = prepareOcspResponder(respCert.der, respKey.privateKey);
  const certId = buildCertId(ca.certificate, '0102030405060708090a0b0c0d0e0f10');
  const nonce = Buffer.from('0410000102030405060708090a0b0c0d0e0f', 'hex');
  measure(`OCSP response signing, ${label} responder`, () =>
    buildOcspResponse({
      responder,
      producedAt: new Date(),
      nonce,
      responses: [
        {
          certId,
          certStatus: { status: 'good' },
          thisUpdate: new Date(),
          nextUpdate: new Date(Date.now() + DAY),
        },
      ],
    }),
  );
}

// CRLs: serials like certwright's (16 random-looking bytes), mixed reasons.
function entries(n: number): CrlEntry[] {
  const out = new Array<CrlEntry>(n);
  const reasons = ['keyCompromise', 'superseded', 'cessationOfOperation', 'unspecified'] as const;
  for (let i = 0; i < n; i++) {
    out[i] = {
      serial: `${(0x40000000 + i).toString(16).padStart(8, '0')}a1b2c3d4e5f60718293a4b5c`,
      revokedAt: new Date(now.getTime() - i * 1000),
      reason: reasons[i % 4],
    };
  }
  return out;
}
for (const n of [10_000, 1_000_000]) {
  const list = entries(n);
  timeOnce(`CRL build + sign, ${n.toLocaleString('en')} entries, P-256 CA`, () =>
    buildCrl({
      issuerCert: caP256.certificate,
      issuerKey: caP256.privateKey,
      thisUpdate: now,
      nextUpdate: new Date(now.getTime() + DAY),
      crlNumber: 1,
      entries: list,
    }),
  );
}

// Post-quantum CAs: sign/verify cost, issuance and fresh OCSP signing rates, and what the larger
// signatures do to certificate, CRL and OCSP response sizes (P-256 and RSA-2048 rows above).
const pq = postQuantumRuntime();
if (!pq.supported) {
  rows.push([
    'post-quantum rows',
    `skipped: Node.js ${pq.node} / OpenSSL ${pq.openssl} has no ML-DSA/SLH-DSA`,
  ]);
} else {
  const sizes: [string, string][] = [];
  for (const alg of [
    'ECDSA-P256',
    'ML-DSA-44',
    'ML-DSA-65',
    'ML-DSA-87',
    'SLH-DSA-SHA2-128S',
    'SLH-DSA-SHA2-128F',
  ] as const) {
    // SLH-DSA signs in tens to hundreds of milliseconds: one signature per batch.
    const batch = alg.startsWith('SLH') ? 1 : 10;
    const keys = await generateKeyPair(alg);
    if (alg !== 'ECDSA-P256') {
      const signature = sign(null, message, keys.privateKey);
      measure(`raw node:crypto sign, ${alg}`, () => sign(null, message, keys.privateKey), 2000, batch);
      measure(
        `raw node:crypto verify, ${alg}`,
        () => verify(null, message, keys.publicKey, signature),
        2000,
        batch,
      );
    }
    const ca = await makeCa(alg);
    if (alg !== 'ECDSA-P256')
      measure(`leaf issuance (certwright DER), ${alg} CA`, () => issueCertificate(fromCsr, ca), 2000, batch);
    const respKey = await generateKeyPair(alg);
    const respCert = issueCertificate(
      {
        ...leafTemplate,
        subject: 'CN=responder',
        publicKey: respKey.publicKey,
        extendedKeyUsage: ['OCSPSigning'],
        ocspNoCheck: true,
      },
      ca,
    );
    const responder = prepareOcspResponder(respCert.der, respKey.privateKey);
    const certId = buildCertId(ca.certificate, '0102030405060708090a0b0c0d0e0f10');
    const ocsp = () =>
      buildOcspResponse({
        responder,
        producedAt: new Date(),
        responses: [
          {
            certId,
            certStatus: { status: 'good' },
            thisUpdate: new Date(),
            nextUpdate: new Date(Date.now() + DAY),
          },
        ],
      });
    if (alg !== 'ECDSA-P256') measure(`OCSP response signing, ${alg} responder`, ocsp, 2000, batch);
    const crl = (n: number) =>
      buildCrl({
        issuerCert: ca.certificate,
        issuerKey: ca.privateKey,
        thisUpdate: now,
        nextUpdate: new Date(now.getTime() + DAY),
        crlNumber: 1,
        entries: entries(n),
      }).length;
    const ownLeaf = issueCertificate({ ...leafTemplate, publicKey: keys.publicKey }, ca).der.length;
    sizes.push([
      `sizes, ${alg} CA (bytes)`,
      `CA certificate ${ca.certificate.der.length}, P-256 leaf ${issueCertificate(fromCsr, ca).der.length}, ${alg} leaf ${ownLeaf}, empty CRL ${crl(0)}, CRL of 1,000 ${crl(1000)}, OCSP response with responder certificate ${ocsp().length}`,
    ]);
  }
  rows.push(...sizes);
}

console.log(
  `\ncore/pki benchmark — node ${process.version}, ${cpus()[0]?.model ?? 'cpu'} ×${cpus().length}\n`,
);
const width = Math.max(...rows.map(([k]) => k.length));
console.log(`| ${'measure'.padEnd(width)} | result |`);
console.log(`| ${'-'.repeat(width)} | ------ |`);
for (const [k, v] of rows) console.log(`| ${k.padEnd(width)} | ${v} |`);
