import type { TransportContext } from '@certwright/core';
import {
  createCertificationRequest,
  generateKeyPair,
  type KeyAlgorithm,
  parseCertsOnly,
  pemDecodeCertificates,
  readCertificate,
} from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  asn1parses,
  nobleVerifies,
  postQuantumSkip,
  printPostQuantumSkip,
  rawPublicKey,
  signedParts,
} from '../../core/test/pki/post-quantum-support.js';
import { AcmeTestClient, newAccountKey, ORIGIN } from './support/acme-client.js';
import { conformance } from './support/openapi-conformance.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * ACME finalize and EST simpleenroll/simplereenroll accept ML-DSA and SLH-DSA CSRs where the
 * profile allows them, and the certificates come from an ML-DSA CA: each signature verified by
 * @noble/post-quantum over the exact TBS bytes.
 */
printPostQuantumSkip('post-quantum-enrollment.test.ts');

const PASSWORD = 'correct horse battery staple';
let app: TestApp;
let issuerSpki: Uint8Array;

describe.skipIf(postQuantumSkip !== undefined)(
  'post-quantum enrollment over ACME and EST',
  {
    timeout: 180_000,
  },
  () => {
    beforeAll(async () => {
      app = await createTestApp({ handler: { rateLimits: { enrollment: 100_000 } } });
      const issuer = await app.call('POST', '/api/v1/issuers', {
        name: 'ML-DSA enrollment CA',
        type: 'Local',
        config: { key_algorithm: 'ML-DSA-65' },
      });
      expect(issuer.status, JSON.stringify(issuer.body)).toBe(201);
      const profile = await app.call('POST', '/api/v1/profiles', {
        name: 'Post-quantum devices',
        allowed_key_algorithms: [
          { algorithm: 'ML-DSA', parameter_sets: ['ML-DSA-44', 'ML-DSA-65'] },
          { algorithm: 'SLH-DSA', parameter_sets: ['SLH-DSA-SHA2-128F'] },
        ],
        enrollment: {
          issuer_id: issuer.body.id,
          owner_id: 'own-default',
          team_id: 'team-default',
          renewal_policy_id: 'rp-default',
        },
        acme: { enabled: true, auth_mode: 'trust_authenticated', path_id: 'pq' },
        est: {
          enabled: true,
          path_id: 'pq',
          basic_credentials: [{ username: 'device', password: PASSWORD }],
        },
      });
      expect(profile.status, JSON.stringify(profile.body)).toBe(201);
      const chain = await app.call('GET', `/api/v1/issuers/${issuer.body.id}/chain`);
      issuerSpki = readCertificate(pemDecodeCertificates(chain.body as string)[0]!).spki;
    }, 180_000);
    afterAll(async () => app?.close());

    async function csr(algorithm: KeyAlgorithm, name: string): Promise<Buffer> {
      const { privateKey } = await generateKeyPair(algorithm);
      return createCertificationRequest({
        subject: [{ type: 'CN', value: name }],
        privateKey,
        subjectAltNames: [{ type: 'dns', value: name }],
      });
    }

    function expectFromPostQuantumCa(der: Uint8Array, subjectSet: string): void {
      asn1parses(der);
      const parts = signedParts(der);
      expect(parts.set).toBe('ML-DSA-65');
      expect(nobleVerifies(parts, issuerSpki)).toBe(true);
      expect(rawPublicKey(readCertificate(der).spki).set).toBe(subjectSet);
    }

    async function est(path: string, body: Uint8Array, options: { basic?: boolean; chain?: Uint8Array[] }) {
      const headers = new Headers({ 'content-type': 'application/pkcs10' });
      if (options.basic)
        headers.set('authorization', `Basic ${Buffer.from(`device:${PASSWORD}`).toString('base64')}`);
      const transport: TransportContext = {
        remoteAddress: '127.0.0.1',
        tls: {
          protocol: 'TLSv1.3',
          clientCertificateChain: options.chain ?? [],
          exportKeyingMaterial: (length) => new Uint8Array(length),
        },
      };
      const response = await conformance.call(
        app.handler,
        new Request(`https://localhost:8443/.well-known/est/pq/${path}`, {
          method: 'POST',
          headers,
          body: Buffer.from(body).toString('base64'),
        }),
        transport,
      );
      return { status: response.status, text: await response.text() };
    }

    it('EST simpleenroll issues for ML-DSA-44 and SLH-DSA CSRs, simplereenroll with the ML-DSA certificate as TLS client certificate', async () => {
      const first = await est('simpleenroll', await csr('ML-DSA-44', 'dev1.pq.test'), { basic: true });
      expect(first.status, first.text).toBe(200);
      const [cert] = parseCertsOnly(Buffer.from(first.text.replace(/\s+/g, ''), 'base64'));
      expectFromPostQuantumCa(cert!, 'ML-DSA-44');

      const slh = await est('simpleenroll', await csr('SLH-DSA-SHA2-128F', 'dev2.pq.test'), { basic: true });
      expect(slh.status, slh.text).toBe(200);
      expectFromPostQuantumCa(
        parseCertsOnly(Buffer.from(slh.text.replace(/\s+/g, ''), 'base64'))[0]!,
        'SLH-DSA-SHA2-128F',
      );

      const again = await est('simplereenroll', await csr('ML-DSA-65', 'dev1.pq.test'), { chain: [cert!] });
      expect(again.status, again.text).toBe(200);
      expectFromPostQuantumCa(
        parseCertsOnly(Buffer.from(again.text.replace(/\s+/g, ''), 'base64'))[0]!,
        'ML-DSA-65',
      );

      // A key the profile does not allow is refused, naming it.
      const ecdsa = await est('simpleenroll', await csr('ECDSA-P256', 'dev3.pq.test'), { basic: true });
      expect(ecdsa.status).toBe(400);
      expect(ecdsa.text).toContain('ECDSA P-256 is not allowed');
    });

    it('ACME finalize issues for an ML-DSA-65 CSR; the downloaded chain is signed by the ML-DSA CA', async () => {
      const client = new AcmeTestClient(app.handler, `${ORIGIN}/acme/profile/pq`);
      const key = newAccountKey();
      const created = await client.post(
        `${client.base}/new-account`,
        { termsOfServiceAgreed: true },
        { key },
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const kid = created.headers.get('location')!;
      const order = await client.post(
        `${client.base}/new-order`,
        { identifiers: [{ type: 'dns', value: 'acme.pq.test' }] },
        { key, kid },
      );
      expect(order.status).toBe(201);
      expect(order.body.status).toBe('ready');
      const finalized = await client.post(
        order.body.finalize,
        { csr: (await csr('ML-DSA-65', 'acme.pq.test')).toString('base64url') },
        { key, kid },
      );
      expect(finalized.status, JSON.stringify(finalized.body)).toBe(200);
      expect(finalized.body.status).toBe('valid');
      const download = await client.post(finalized.body.certificate, '', { key, kid });
      expect(download.status).toBe(200);
      const [leaf, issuing] = pemDecodeCertificates(download.body);
      expectFromPostQuantumCa(leaf!, 'ML-DSA-65');
      expect(readCertificate(issuing!).spki).toEqual(issuerSpki);
    });
  },
);
