import { ManualClock } from '@certwright/core';
import {
  certificateToPem,
  certificationRequestToPem,
  createCertificationRequest,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  exportSpkiDer,
  generateKeyPair,
  importPkcs8Pem,
  type KeyAlgorithm,
  pemDecodeCertificates,
  readCertificate,
} from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  asn1parses,
  nobleVerifies,
  ocspResponderCertificate,
  ocspSignedParts,
  postQuantumSkip,
  printPostQuantumSkip,
  rawPublicKey,
  signedParts,
} from '../../core/test/pki/post-quantum-support.js';
import { createLifecycleApp, type LifecycleApp } from './lifecycle-support.js';

/**
 * Post-quantum Local CAs through the REST API: ML-DSA and SLH-DSA roots and intermediates
 * (and mixed chains), profiles that require post-quantum subject keys, CSR and server-side key
 * issuance, CRLs and OCSP responses signed by the post-quantum CA. Every post-quantum
 * signature is verified by @noble/post-quantum over the exact TBS bytes. On a runtime without
 * ML-DSA/SLH-DSA (Node.js 20) the issuer and profile are refused with `runtime_unsupported`.
 */
printPostQuantumSkip('post-quantum-ca.test.ts');

let app: LifecycleApp;
const clock = new ManualClock(new Date());

beforeAll(async () => {
  app = await createLifecycleApp({ clock, pki: { publicBaseUrl: 'https://pki.example.test:8443' } });
});
afterAll(() => app.close());

async function chainOf(issuerId: string): Promise<Uint8Array[]> {
  const res = await app.call('GET', `/api/v1/issuers/${issuerId}/chain`);
  expect(res.status).toBe(200);
  return pemDecodeCertificates(await res.text());
}

async function csrPem(algorithm: KeyAlgorithm, name: string): Promise<string> {
  const { privateKey } = await generateKeyPair(algorithm);
  return certificationRequestToPem(
    createCertificationRequest({
      subject: [{ type: 'CN', value: name }],
      privateKey,
      subjectAltNames: [{ type: 'dns', value: name }],
    }),
  );
}

async function createIssuer(name: string, config: Record<string, unknown>): Promise<string> {
  const res = await app.json('POST', '/api/v1/issuers', { name, type: 'Local', config });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

/** Signed by `issuerSpki` with a post-quantum key: our reader, openssl asn1parse and noble agree. */
function expectPostQuantumSigned(
  der: Uint8Array,
  issuerSpki: Uint8Array,
  set: string,
  parts = signedParts(der),
) {
  expect(asn1parses(der)).toContain('SEQUENCE');
  expect(parts.set).toBe(set);
  expect(parts.parametersAbsent).toBe(true);
  expect(nobleVerifies(parts, issuerSpki)).toBe(true);
}

if (postQuantumSkip === undefined) {
  console.warn(
    'post-quantum-ca.test.ts: the refusal on a runtime without ML-DSA/SLH-DSA is skipped here; it runs in the Node 20 smoke set (pnpm test:smoke)',
  );
}
describe.runIf(postQuantumSkip !== undefined)(
  'post-quantum Local CA on a runtime without ML-DSA/SLH-DSA',
  () => {
    it('refuses the issuer and the profile with runtime_unsupported, naming Node.js 24', async () => {
      const issuer = await app.json('POST', '/api/v1/issuers', {
        name: 'PQ CA on an old runtime',
        type: 'Local',
        config: { key_algorithm: 'ML-DSA-65' },
      });
      expect(issuer.status).toBe(400);
      expect(JSON.stringify(issuer.body)).toContain('Node.js 24');
      const profile = await app.json('POST', '/api/v1/profiles', {
        name: 'PQ on an old runtime',
        allowed_key_algorithms: [{ algorithm: 'ML-DSA', parameter_sets: ['ML-DSA-65'] }],
      });
      expect(profile.status).toBe(400);
      expect(JSON.stringify(profile.body)).toContain('Node.js 24');
      // Everything else keeps working: a classical issuer issues as before.
      const cert = await app.createCertificate();
      expect((await app.json('POST', `/api/v1/certificates/${cert.id}/issue`)).status).toBe(200);
    });
  },
);

describe.skipIf(postQuantumSkip !== undefined)(
  'post-quantum Local CA through the API',
  { timeout: 180_000 },
  () => {
    let profileId: string;

    beforeAll(async () => {
      const profile = await app.json('POST', '/api/v1/profiles', {
        name: 'Post-quantum only',
        allowed_key_algorithms: [
          { algorithm: 'ML-DSA', parameter_sets: ['ML-DSA-44', 'ML-DSA-65'] },
          { algorithm: 'SLH-DSA', parameter_sets: ['SLH-DSA-SHA2-128S'] },
        ],
      });
      expect(profile.status, JSON.stringify(profile.body)).toBe(201);
      profileId = profile.body.id;
    });

    it('issues an ML-DSA-65 root → ML-DSA-65 intermediate → ML-DSA-44 leaf from a CSR, with CRL and OCSP signed by the intermediate', async () => {
      const issuerId = await createIssuer('ML-DSA CA', { key_algorithm: 'ML-DSA-65' });
      const cert = await app.createCertificate({
        issuer_id: issuerId,
        profile_id: profileId,
        common_name: 'pq.example.test',
        sans: ['pq.example.test'],
      });
      const issued = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, {
        csr_pem: await csrPem('ML-DSA-44', 'pq.example.test'),
      });
      expect(issued.status, JSON.stringify(issued.body)).toBe(200);
      expect(issued.body.version).toMatchObject({ key_algorithm: 'ML-DSA-44', key_size: 0 });

      const [leaf, issuing, root] = await chainOf(issuerId).then(async (chain) => {
        const exported = await app.call('GET', `/api/v1/certificates/${cert.id}/export?format=der`);
        return [new Uint8Array(await exported.arrayBuffer()), ...chain];
      });
      const rootSpki = readCertificate(root!).spki;
      const issuingSpki = readCertificate(issuing!).spki;
      expect(rawPublicKey(readCertificate(leaf!).spki).set).toBe('ML-DSA-44');
      expectPostQuantumSigned(root!, rootSpki, 'ML-DSA-65');
      expectPostQuantumSigned(issuing!, rootSpki, 'ML-DSA-65');
      expectPostQuantumSigned(leaf!, issuingSpki, 'ML-DSA-65');

      // The details view names the parameter set.
      const versionId = issued.body.version.id as string;
      const details = await app.json('GET', `/api/v1/certificates/${cert.id}/versions/${versionId}/details`);
      expect(details.status).toBe(200);
      expect(details.body.certificate.public_key).toEqual({
        algorithm: 'ML-DSA',
        size: 1312 * 8,
        curve: null,
        parameter_set: 'ML-DSA-44',
      });
      expect(details.body.certificate.signature_algorithm).toBe('ML-DSA-65');

      expect(
        (await app.json('POST', `/api/v1/certificates/${cert.id}/revoke`, { reason: 'keyCompromise' }))
          .status,
      ).toBe(200);
      const crl = new Uint8Array(
        await (await app.call('GET', `/.well-known/pki/crl/${issuerId}`)).arrayBuffer(),
      );
      expectPostQuantumSigned(crl, issuingSpki, 'ML-DSA-65');

      const serial = issued.body.version.serial_number as string;
      const ocspRes = await app.call('GET', `/.well-known/pki/ocsp/${issuerId}/serial/${serial}`, undefined, {
        accept: 'application/ocsp-response',
      });
      expect(ocspRes.status).toBe(200);
      const ocsp = new Uint8Array(await ocspRes.arrayBuffer());
      // The delegated responder holds a key of the CA's own set and is certified by the CA.
      const responder = ocspResponderCertificate(ocsp);
      expectPostQuantumSigned(responder, issuingSpki, 'ML-DSA-65');
      expectPostQuantumSigned(ocsp, readCertificate(responder).spki, 'ML-DSA-65', ocspSignedParts(ocsp));
    });

    it('generates an SLH-DSA key server-side under the profile and refuses an ECDSA CSR the profile does not allow', async () => {
      const issuerId = await createIssuer('ML-DSA-44 CA', { key_algorithm: 'ML-DSA-44' });
      const cert = await app.createCertificate({
        issuer_id: issuerId,
        profile_id: profileId,
        common_name: 'slh.example.test',
        sans: ['slh.example.test'],
      });
      const refused = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, {
        csr_pem: await csrPem('ECDSA-P256', 'slh.example.test'),
      });
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body)).toContain('ECDSA P-256 is not allowed');
      const issued = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, {
        key_algorithm: 'SLH-DSA-SHA2-128S',
      });
      expect(issued.status, JSON.stringify(issued.body)).toBe(200);
      expect(issued.body.version.key_algorithm).toBe('SLH-DSA-SHA2-128S');
      const [issuing] = await chainOf(issuerId);
      const exported = await app.call('GET', `/api/v1/certificates/${cert.id}/export?format=der`);
      expectPostQuantumSigned(
        new Uint8Array(await exported.arrayBuffer()),
        readCertificate(issuing!).spki,
        'ML-DSA-44',
      );
    });

    it('imports an existing SLH-DSA CA (certificate and PKCS#8 key) and signs with it', async () => {
      const { privateKey } = await generateKeyPair('SLH-DSA-SHA2-128F');
      const now = clock.now().getTime();
      const ca = createSelfSignedCertificate(
        {
          subject: [{ type: 'CN', value: 'Imported SLH-DSA CA' }],
          notBefore: new Date(now - 60_000),
          notAfter: new Date(now + 3650 * 86_400_000),
          basicConstraints: { ca: true, pathLength: 0 },
        },
        privateKey,
      );
      const issuerId = await createIssuer('Imported SLH-DSA CA', {
        certificate_pem: certificateToPem(ca.der),
        private_key_pem: exportPkcs8Pem(privateKey),
      });
      const cert = await app.createCertificate({ issuer_id: issuerId });
      const issued = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, {});
      expect(issued.status, JSON.stringify(issued.body)).toBe(200);
      const exported = await app.call('GET', `/api/v1/certificates/${cert.id}/export?format=der`);
      expectPostQuantumSigned(
        new Uint8Array(await exported.arrayBuffer()),
        readCertificate(ca.der).spki,
        'SLH-DSA-SHA2-128F',
      );
    });

    it.each([
      ['an ML-DSA-87 root over an ECDSA P-256 intermediate', 'ML-DSA-87', 'ECDSA-P256'],
      ['an ECDSA P-256 root over an ML-DSA-65 intermediate', 'ECDSA-P256', 'ML-DSA-65'],
    ] as const)(
      'issues mixed chains: %s, keeping only the intermediate key sealed',
      async (_name, rootAlg, issuingAlg) => {
        const issuerId = await createIssuer(`Mixed ${rootAlg}/${issuingAlg}`, {
          root_key_algorithm: rootAlg,
          key_algorithm: issuingAlg,
        });
        const cert = await app.createCertificate({ issuer_id: issuerId });
        const issued = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, {});
        expect(issued.status, JSON.stringify(issued.body)).toBe(200);
        const [issuing, root] = await chainOf(issuerId);
        const rootSpki = readCertificate(root!).spki;
        const issuingSpki = readCertificate(issuing!).spki;
        if (rootAlg.startsWith('ML-DSA')) expectPostQuantumSigned(issuing!, rootSpki, rootAlg);
        else expect(rawPublicKey(issuingSpki).set).toBe(issuingAlg);
        const exported = await app.call('GET', `/api/v1/certificates/${cert.id}/export?format=der`);
        const leaf = new Uint8Array(await exported.arrayBuffer());
        if (issuingAlg.startsWith('ML-DSA')) expectPostQuantumSigned(leaf, issuingSpki, issuingAlg);
        else expect(signedParts.bind(null, leaf)).toThrow(/not a post-quantum signature/);

        // The root's key is not kept; the intermediate's is, in the sealed config.
        const stored = await app.storage.issuers.getWithConfig(issuerId);
        const ca = stored!.config.ca as Record<string, string>;
        expect(ca).not.toHaveProperty('root_key_pem');
        expect(exportSpkiDer(importPkcs8Pem(ca.issuing_key_pem!)).equals(Buffer.from(issuingSpki))).toBe(
          true,
        );
      },
    );
  },
);
