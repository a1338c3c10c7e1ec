import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportSpkiDer,
  generateKeyPair,
  importPkcs8Pem,
  issueCertificate,
  KEY_ALGORITHMS,
  prepareIssuer,
  readCertificate,
} from '../../src/pki/index.js';
import { isPostQuantumParameterSet } from '../../src/pki/post-quantum.js';
import { days, issueLeaf, makeHierarchy } from './fixtures.js';
import { openssl, workdir } from './openssl.js';

let w: Awaited<ReturnType<typeof workdir>>;
beforeAll(async () => {
  w = await workdir();
});
afterAll(async () => {
  await w.cleanup();
});

describe('certificate builder, verified by openssl', () => {
  // The system openssl (3.0) has no ML-DSA/SLH-DSA: post-quantum.test.ts verifies those chains.
  for (const alg of KEY_ALGORITHMS.filter((a) => !isPostQuantumParameterSet(a))) {
    it(`issues a root → intermediate → leaf chain that openssl verify -x509_strict accepts (${alg})`, async () => {
      const h = await makeHierarchy(alg);
      const leaf = await issueLeaf(h.intermediate, alg);
      const root = await w.file(`${alg}-root.pem`, certificateToPem(h.root.der));
      const inter = await w.file(`${alg}-int.pem`, certificateToPem(h.intermediate.der));
      const leafPath = await w.file(`${alg}-leaf.pem`, certificateToPem(leaf.der));
      const r = await openssl([
        'verify',
        '-x509_strict',
        '-purpose',
        'sslserver',
        '-CAfile',
        root,
        '-untrusted',
        inter,
        leafPath,
      ]);
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe(`${leafPath}: OK`);
      expect(r.code).toBe(0);
    }, 60_000);
  }

  it('refuses a leaf signed by a different CA than the one openssl trusts', async () => {
    const a = await makeHierarchy('ECDSA-P256', 'a');
    const b = await makeHierarchy('ECDSA-P256', 'b');
    const leaf = await issueLeaf(b.intermediate, 'ECDSA-P256');
    const r = await openssl([
      'verify',
      '-x509_strict',
      '-CAfile',
      await w.file('a-root.pem', certificateToPem(a.root.der)),
      '-untrusted',
      await w.file('b-int.pem', certificateToPem(b.intermediate.der)),
      await w.file('b-leaf.pem', certificateToPem(leaf.der)),
    ]);
    expect(r.code).not.toBe(0);
  }, 30_000);

  it('writes every requested extension the way openssl reads it', async () => {
    const h = await makeHierarchy('ECDSA-P256', 'ext');
    const leaf = await issueLeaf(h.intermediate, 'RSA-2048', {
      subject: 'CN=svc.example.test,OU=Platform,O=Example\\, Inc.,C=US',
      subjectAltNames: [
        { type: 'dns', value: 'svc.example.test' },
        { type: 'dns', value: '*.svc.example.test' },
        { type: 'ip', value: '192.0.2.7' },
        { type: 'ip', value: '2001:db8::1' },
        { type: 'email', value: 'ops@example.test' },
        { type: 'uri', value: 'spiffe://example.test/svc' },
      ],
      extendedKeyUsage: ['serverAuth', 'clientAuth', 'codeSigning', 'emailProtection', 'timeStamping'],
      crlDistributionPoints: ['https://pki.example.test/crl/int'],
      authorityInfoAccess: {
        ocsp: ['https://pki.example.test/ocsp/int'],
        caIssuers: ['https://pki.example.test/ca/int.der'],
      },
      mustStaple: true,
    });
    const r = await openssl([
      'x509',
      '-noout',
      '-text',
      '-nameopt',
      'RFC2253',
      '-in',
      await w.file('ext.pem', certificateToPem(leaf.der)),
    ]);
    expect(r.code).toBe(0);
    const t = r.stdout;
    expect(t).toContain('Subject: CN=svc.example.test,OU=Platform,O=Example\\, Inc.,C=US');
    expect(t).toMatch(/X509v3 Basic Constraints: critical\s+CA:FALSE/);
    expect(t).toMatch(/X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment/);
    expect(t).toMatch(
      /X509v3 Extended Key Usage:\s+TLS Web Server Authentication, TLS Web Client Authentication, Code Signing, E-mail Protection, Time Stamping/,
    );
    expect(t).toContain(
      'DNS:svc.example.test, DNS:*.svc.example.test, IP Address:192.0.2.7, IP Address:2001:DB8:0:0:0:0:0:1, email:ops@example.test, URI:spiffe://example.test/svc',
    );
    expect(t).toMatch(
      /X509v3 CRL Distribution Points:\s+Full Name:\s+URI:https:\/\/pki.example.test\/crl\/int/,
    );
    expect(t).toContain('OCSP - URI:https://pki.example.test/ocsp/int');
    expect(t).toContain('CA Issuers - URI:https://pki.example.test/ca/int.der');
    expect(t).toMatch(/TLS Feature:\s+status_request/);
    expect(t).toContain('X509v3 Subject Key Identifier');
    expect(t).toContain('X509v3 Authority Key Identifier');
    // AKI of the leaf is the SKI of the intermediate.
    const int = new X509Certificate(h.intermediate.der);
    const leafX = new X509Certificate(leaf.der);
    expect(leafX.checkIssued(int)).toBe(true);
    expect(leafX.verify(int.publicKey)).toBe(true);
    expect(leafX.serialNumber.length).toBeGreaterThanOrEqual(31); // 128-bit random serial
  }, 30_000);

  it('writes CA basic constraints with pathLen and an OCSP responder with nocheck', async () => {
    const h = await makeHierarchy('ECDSA-P384', 'ocspresp');
    const ca = await openssl([
      'x509',
      '-noout',
      '-text',
      '-in',
      await w.file('int384.pem', certificateToPem(h.intermediate.der)),
    ]);
    expect(ca.stdout).toMatch(/X509v3 Basic Constraints: critical\s+CA:TRUE, pathlen:0/);
    expect(ca.stdout).toMatch(/X509v3 Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign/);
    const resp = await issueLeaf(h.intermediate, 'ECDSA-P256', {
      subject: 'CN=OCSP responder',
      subjectAltNames: [],
      extendedKeyUsage: ['OCSPSigning'],
      ocspNoCheck: true,
    });
    const r = await openssl([
      'x509',
      '-noout',
      '-text',
      '-in',
      await w.file('resp.pem', certificateToPem(resp.der)),
    ]);
    expect(r.stdout).toMatch(/X509v3 Extended Key Usage:\s+OCSP Signing/);
    expect(r.stdout).toContain('OCSP No Check');
    const v = await openssl([
      'verify',
      '-x509_strict',
      '-purpose',
      'ocsphelper',
      '-CAfile',
      await w.file('r384.pem', certificateToPem(h.root.der)),
      '-untrusted',
      await w.file('i384.pem', certificateToPem(h.intermediate.der)),
      await w.file('resp.pem', certificateToPem(resp.der)),
    ]);
    expect(v.stdout).toContain(': OK');
  }, 30_000);

  it('accepts a SAN-only certificate with an empty subject (critical SAN) under -x509_strict', async () => {
    const h = await makeHierarchy('Ed25519', 'empty');
    const leaf = await issueLeaf(h.intermediate, 'Ed25519', { subject: '' });
    const r = await openssl([
      'verify',
      '-x509_strict',
      '-CAfile',
      await w.file('ed-root.pem', certificateToPem(h.root.der)),
      '-untrusted',
      await w.file('ed-int.pem', certificateToPem(h.intermediate.der)),
      await w.file('ed-empty.pem', certificateToPem(leaf.der)),
    ]);
    expect(r.stdout).toContain(': OK');
    const text = await openssl([
      'x509',
      '-noout',
      '-text',
      '-in',
      await w.file('ed-empty.pem', certificateToPem(leaf.der)),
    ]);
    expect(text.stdout).toMatch(/X509v3 Subject Alternative Name: critical/);
  }, 30_000);

  it('issues under a CA that openssl created and that is imported from PEM', async () => {
    const keyPath = `${w.dir}/ossl-ca.key`;
    const certPath = `${w.dir}/ossl-ca.pem`;
    expect(
      (await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384', '-out', keyPath]))
        .code,
    ).toBe(0);
    const made = await openssl([
      'req',
      '-x509',
      '-new',
      '-key',
      keyPath,
      '-subj',
      '/C=DE/O=Imported/CN=Imported Root',
      '-days',
      '30',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-out',
      certPath,
    ]);
    expect(made.code).toBe(0);
    const key = importPkcs8Pem(await readFile(keyPath, 'utf8'));
    const issuer = prepareIssuer(await readFile(certPath, 'utf8'), key);
    expect(issuer.certificate.subject.text).toBe('CN=Imported Root,O=Imported,C=DE');
    expect(issuer.signatureAlgorithm.name).toBe('ecdsa-with-SHA384');
    const leafKeys = await generateKeyPair('ECDSA-P256');
    const leaf = issueCertificate(
      {
        subject: 'CN=imported-leaf.example.test',
        publicKey: exportSpkiDer(leafKeys.publicKey),
        notBefore: days(0),
        notAfter: days(10),
        subjectAltNames: [{ type: 'dns', value: 'imported-leaf.example.test' }],
        extendedKeyUsage: ['serverAuth'],
      },
      issuer,
    );
    const r = await openssl([
      'verify',
      '-x509_strict',
      '-CAfile',
      certPath,
      await w.file('imported-leaf.pem', certificateToPem(leaf.der)),
    ]);
    expect(r.stdout).toContain(': OK');
  }, 30_000);

  it('uses GeneralizedTime for dates from 2050 on', async () => {
    const k = await generateKeyPair('ECDSA-P256');
    const c = createSelfSignedCertificate(
      {
        subject: 'CN=long',
        notBefore: new Date('2049-12-31T23:59:59Z'),
        notAfter: new Date('2050-01-01T00:00:00Z'),
        basicConstraints: { ca: true },
      },
      k.privateKey,
    );
    const info = readCertificate(c.der);
    expect(info.notBefore.toISOString()).toBe('2049-12-31T23:59:59.000Z');
    expect(info.notAfter.toISOString()).toBe('2050-01-01T00:00:00.000Z');
    const x = new X509Certificate(c.der);
    expect(new Date(x.validTo).toISOString()).toBe('2050-01-01T00:00:00.000Z');
  });

  it('refuses bad templates with validation_failed', async () => {
    const h = await makeHierarchy('ECDSA-P256', 'bad');
    const k = await generateKeyPair('ECDSA-P256');
    const base = { subject: 'CN=x', publicKey: k.publicKey, notBefore: days(0), notAfter: days(10) };
    expect(() => issueCertificate({ ...base, notAfter: days(-1) }, h.intermediate.authority)).toThrow(
      /notAfter/,
    );
    expect(() => issueCertificate({ ...base, notAfter: days(4000) }, h.intermediate.authority)).toThrow(
      /outlive/,
    );
    expect(() =>
      issueCertificate(
        { ...base, subjectAltNames: [{ type: 'dns', value: 'bad_name!' }] },
        h.intermediate.authority,
      ),
    ).toThrow(/not a valid DNS name/);
    expect(() => issueCertificate({ ...base, subject: '' }, h.intermediate.authority)).toThrow(/subject/);
    expect(() => issueCertificate({ ...base, serialNumber: '00' }, h.intermediate.authority)).toThrow(
      /serial/,
    );
    expect(() =>
      issueCertificate(
        {
          ...base,
          extraExtensions: [{ oid: '2.5.29.17', critical: false, value: Buffer.from('3000', 'hex') }],
        },
        h.intermediate.authority,
      ),
    ).toThrow(/own template field/);
    // A leaf cannot act as an issuer, and a key must match its certificate.
    const leaf = await issueLeaf(h.intermediate, 'ECDSA-P256');
    expect(() => prepareIssuer(leaf.der, leaf.key)).toThrow(/not a CA/);
    expect(() => prepareIssuer(h.intermediate.der, h.root.key)).toThrow(/does not match/);
  }, 30_000);
});
