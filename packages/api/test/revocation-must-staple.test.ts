import { ManualClock } from '@certwright/core';
import {
  certificationRequestToPem,
  createCertificationRequest,
  generateKeyPair,
  mustStapleValue,
  OID,
} from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp, openssl } from './lifecycle-support.js';

let app: LifecycleApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');
const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;

beforeAll(async () => {
  app = await createLifecycleApp({ clock, pki: { publicBaseUrl: 'https://pki.example.test:8443' } });
});
afterAll(() => app.close());

async function csr(mustStaple: boolean): Promise<string> {
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  return certificationRequestToPem(
    createCertificationRequest({
      subject: [{ type: 'CN', value: 'app.example.test' }],
      privateKey,
      subjectAltNames: [
        { type: 'dns', value: 'app.example.test' },
        { type: 'dns', value: 'www.example.test' },
        { type: 'ip', value: '127.0.0.7' },
      ],
      ...(mustStaple
        ? { extensions: [{ oid: OID.tlsFeature, critical: false, value: mustStapleValue() }] }
        : {}),
    }),
  );
}

async function issuedText(
  profileId: string,
  csrPem: string,
): Promise<{ text: string; leaf: string; chain: string[] }> {
  const cert = await app.createCertificate({ profile_id: profileId });
  const res = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, { csr_pem: csrPem });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const pem = await (await app.call('GET', `/api/v1/certificates/${cert.id}/export?format=pem`)).text();
  const [leaf, ...chain] = pem.match(PEM_CERT)!;
  return {
    text: openssl(['x509', '-noout', '-text', '-in', { name: 'l.pem', file: leaf! }]),
    leaf: leaf!,
    chain,
  };
}

describe('OCSP must-staple (RFC 7633)', () => {
  it('carries the TLS feature a CSR asks for, imposes the profile setting, and adds nothing otherwise', async () => {
    const plain = await app.json('POST', '/api/v1/profiles', { name: 'plain', allow_ip_sans: true });
    const stapled = await app.json('POST', '/api/v1/profiles', {
      name: 'stapled',
      allow_ip_sans: true,
      must_staple: true,
    });
    expect([plain.status, stapled.status]).toEqual([201, 201]);

    const fromCsr = await issuedText(plain.body.id, await csr(true));
    expect(fromCsr.text).toMatch(/TLS Feature:\s*\n\s*status_request/);
    const attime = String(Math.floor(clock.now().getTime() / 1000));
    expect(
      openssl([
        'verify',
        '-attime',
        attime,
        '-x509_strict',
        '-CAfile',
        { name: 'ca.pem', file: fromCsr.chain.join('') },
        { name: 'leaf.pem', file: fromCsr.leaf },
      ]),
    ).toMatch(/: OK/);
    expect((await issuedText(stapled.body.id, await csr(false))).text).toMatch(
      /TLS Feature:\s*\n\s*status_request/,
    );
    expect((await issuedText(plain.body.id, await csr(false))).text).not.toContain('TLS Feature');
  });
});
