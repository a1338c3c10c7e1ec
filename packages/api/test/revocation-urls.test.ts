import { ManualClock } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp, openssl } from './lifecycle-support.js';

let app: LifecycleApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');
const BASE = 'https://pki.example.test:8443';

beforeAll(async () => {
  app = await createLifecycleApp({ clock, pki: { publicBaseUrl: BASE } });
});
afterAll(() => app.close());

async function issuedText(issuerId: string): Promise<string> {
  const cert = await app.createCertificate({ issuer_id: issuerId });
  const issued = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`);
  expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  const pem = await (await app.call('GET', `/api/v1/certificates/${cert.id}/export?format=pem`)).text();
  const leaf = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/)![0];
  return openssl(['x509', '-noout', '-text', '-in', { name: 'leaf.pem', file: leaf }]);
}

/** The URI lines of one extension block of `openssl x509 -text`. */
function uris(text: string, heading: RegExp): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => heading.test(l));
  if (start < 0) return [];
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^\s{12}X509v3 |^\s{12}Authority Information|^\s{4}Signature/.test(line)) break;
    const m = line.match(/(OCSP|CA Issuers) - URI:(\S+)|^\s+URI:(\S+)/);
    if (m) out.push(m[1] ? `${m[1]} ${m[2]}` : m[3]!);
  }
  return out;
}

describe('where issued certificates point', () => {
  it('defaults to the service URLs, caIssuers included, and serves the CA certificate there', async () => {
    const text = await issuedText(app.ids.issuer);
    const id = app.ids.issuer;
    expect(uris(text, /X509v3 CRL Distribution Points/)).toEqual([`${BASE}/.well-known/pki/crl/${id}`]);
    expect(uris(text, /Authority Information Access/)).toEqual([
      `OCSP ${BASE}/.well-known/pki/ocsp/${id}`,
      `CA Issuers ${BASE}/.well-known/pki/ca/${id}`,
    ]);

    const res = await app.handler(new Request(`https://x/.well-known/pki/ca/${id}`), {
      remoteAddress: '127.0.0.1',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pkix-cert');
    const der = Buffer.from(await res.arrayBuffer());
    const chain = await (await app.call('GET', `/api/v1/issuers/${id}/chain`)).text();
    const issuingPem = chain.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/)![0];
    const fromRoute = openssl(['x509', '-inform', 'DER', '-in', { name: 'ca.der', file: der }]);
    expect(fromRoute).toBe(issuingPem);
    const missing = await app.handler(new Request('https://x/.well-known/pki/ca/iss-none'), {
      remoteAddress: '127.0.0.1',
    });
    expect(missing.status).toBe(404);
  });

  it('writes the configured http:// and https:// lists, in order, into issued certificates', async () => {
    const created = await app.json('POST', '/api/v1/issuers', {
      name: 'CDN-fronted CA',
      type: 'Local',
      config: {
        crl_distribution_urls: ['http://crl.example.test/a.crl', 'https://crl2.example.test/a.crl'],
        ocsp_urls: ['http://ocsp.example.test/'],
        ca_issuers_urls: ['http://aia.example.test/ca.der'],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const text = await issuedText(created.body.id);
    expect(uris(text, /X509v3 CRL Distribution Points/)).toEqual([
      'http://crl.example.test/a.crl',
      'https://crl2.example.test/a.crl',
    ]);
    expect(uris(text, /Authority Information Access/)).toEqual([
      'OCSP http://ocsp.example.test/',
      'CA Issuers http://aia.example.test/ca.der',
    ]);

    // The lists are settings, not creation-time state: an update changes what the next certificate carries.
    clock.advance(10_000);
    const updated = await app.json('PUT', `/api/v1/issuers/${created.body.id}`, {
      config: { ocsp_urls: ['http://ocsp2.example.test/'] },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const after = await issuedText(created.body.id);
    expect(uris(after, /Authority Information Access/)).toEqual([
      'OCSP http://ocsp2.example.test/',
      `CA Issuers ${BASE}/.well-known/pki/ca/${created.body.id}`,
    ]);
  });

  it('refuses URLs relying parties could not use with a 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ crl_distribution_urls: ['ftp://crl.example.test/a.crl'] }, 'config.crl_distribution_urls.0'],
      [{ ocsp_urls: ['not a url'] }, 'config.ocsp_urls.0'],
      [{ ca_issuers_urls: ['https://user:pw@aia.example.test/ca'] }, 'config.ca_issuers_urls.0'],
      [{ ocsp_urls: [`https://o.example.test/${'a'.repeat(600)}`] }, 'config.ocsp_urls.0'],
      [{ ocsp_urls: Array.from({ length: 9 }, (_, i) => `http://o${i}.example.test/`) }, 'config.ocsp_urls'],
      [{ crl_distribution_urls: [] }, 'config.crl_distribution_urls'],
    ];
    for (const [config, field] of cases) {
      const res = await app.json('POST', '/api/v1/issuers', { name: 'Bad URLs', type: 'Local', config });
      expect(res.status, JSON.stringify(config)).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    }
  });
});
