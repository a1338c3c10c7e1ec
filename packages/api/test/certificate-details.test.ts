import { X509Certificate } from 'node:crypto';
import { describeChain } from '@certwright/core';
import {
  certificateToPem,
  createSelfSignedCertificate,
  generateKeyPair,
  pemDecodeCertificates,
} from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCertificate, seedReferences } from './support/inventory-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp({
    clock: { now: () => new Date() },
    services: { pki: { publicBaseUrl: 'https://pki.example.test' } },
  });
}, 180_000);
afterAll(() => app.close());

describe('decoded certificates', () => {
  it('decodes a version and its chain as node:crypto reads them, says whether the key is held, and 404s a version of another certificate', async () => {
    const refs = await seedReferences(app, ' details');
    const cert = await createCertificate(app, refs, {
      name: 'decoded',
      common_name: 'decoded.example.test',
      sans: ['decoded.example.test', 'alt.example.test', '192.0.2.7'],
    });
    const issued = await app.call('POST', `/api/v1/certificates/${cert.id}/issue`, {});
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const version = issued.body.version;
    const stored = (await app.call('GET', `/api/v1/certificates/${cert.id}/versions`)).body.data[0];
    const reply = await app.call('GET', `/api/v1/certificates/${cert.id}/versions/${version.id}/details`);
    expect(reply.status).toBe(200);
    const d = reply.body;
    expect([d.current, d.private_key_held, d.chain_undecodable]).toEqual([true, true, 0]);
    const x = new X509Certificate(stored.cert_pem);
    expect(d.certificate.serial_number).toBe(x.serialNumber.toLowerCase().replace(/^0+/, ''));
    expect(d.certificate.fingerprint_sha256).toBe(x.fingerprint256.replace(/:/g, '').toLowerCase());
    expect(d.certificate.fingerprint_sha1).toBe(x.fingerprint.replace(/:/g, '').toLowerCase());
    expect(d.certificate.subject.text).toContain('CN=decoded.example.test');
    expect(d.certificate.subject_alt_names).toMatchObject({
      dns: ['decoded.example.test', 'alt.example.test'],
      ip: ['192.0.2.7'],
    });
    expect(new Date(d.certificate.not_after).getTime()).toBe(new Date(x.validTo).getTime());
    expect(d.certificate.basic_constraints).toMatchObject({ ca: false });
    expect(d.certificate.ocsp_urls[0]).toMatch(/^https:\/\/pki\.example\.test\/\.well-known\/pki\/ocsp\//);
    expect(d.certificate.crl_distribution_points[0]).toMatch(/^https:\/\/pki\.example\.test\//);
    const chain = pemDecodeCertificates(stored.chain_pem).map((der) => new X509Certificate(der));
    expect(d.chain.map((c: { subject: { text: string } }) => c.subject.text)).toHaveLength(chain.length);
    expect(d.chain[0].fingerprint_sha256).toBe(chain[0]!.fingerprint256.replace(/:/g, '').toLowerCase());
    expect(d.chain[0].basic_constraints).toMatchObject({ ca: true });
    expect(d.certificate.authority_key_identifier).toBe(d.chain[0].subject_key_identifier);

    const other = await createCertificate(app, refs, { name: 'other', common_name: 'other.example.test' });
    const wrong = await app.call('GET', `/api/v1/certificates/${other.id}/versions/${version.id}/details`);
    expect(wrong.status).toBe(404);

    // The issuer's chain decodes to the same CA certificates, issuing CA first.
    const issuer = await app.call('GET', `/api/v1/issuers/${refs.issuer}/chain/details`);
    expect(issuer.status).toBe(200);
    expect(issuer.body.chain[0].fingerprint_sha256).toBe(d.chain[0].fingerprint_sha256);
    expect(issuer.body.chain.at(-1).self_signed).toBe(true);
  });

  it('decodes a discovered certificate with the chain its endpoint served, counting a chain certificate it cannot read', async () => {
    const keys = await generateKeyPair('ECDSA-P256');
    const now = Date.now();
    const leaf = createSelfSignedCertificate(
      {
        subject: 'CN=found.example.test',
        notBefore: new Date(now - 86_400_000),
        notAfter: new Date(now + 30 * 86_400_000),
        subjectAltNames: [
          { type: 'dns', value: 'found.example.test' },
          { type: 'email', value: 'ops@example.test' },
        ],
      },
      keys.privateKey,
    );
    const described = describeChain([leaf.der]);
    const broken = '-----BEGIN CERTIFICATE-----\nMAMCAf8=\n-----END CERTIFICATE-----\n';
    const { record } = await app.storage.discovered.record(
      { ...described, chain_pem: certificateToPem(leaf.der) + broken },
      {
        source: 'server-scanner',
        scan_id: null,
        address: '10.0.0.1',
        port: 443,
        sni: null,
        path: null,
        seen_at: new Date(),
      },
    );
    const reply = await app.call('GET', `/api/v1/discovery/certificates/${record.id}/details`);
    expect(reply.status).toBe(200);
    expect(reply.body.certificate.subject_alt_names).toMatchObject({
      dns: ['found.example.test'],
      email: ['ops@example.test'],
    });
    expect(reply.body.certificate.self_signed).toBe(true);
    expect([reply.body.chain.length, reply.body.chain_undecodable]).toEqual([1, 1]);
    expect((await app.call('GET', '/api/v1/discovery/certificates/dc-missing/details')).status).toBe(404);
  });

  it('needs the read permission of each resource, before anything is decoded', async () => {
    const spy = vi.spyOn(app.services.discovery, 'certificateDetails');
    const refused = await app.call('GET', '/api/v1/discovery/certificates/x/details', undefined, {
      token: null,
    });
    expect(refused.status).toBe(401);
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });
});
