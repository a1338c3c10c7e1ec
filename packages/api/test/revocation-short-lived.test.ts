import { ManualClock } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp, openssl } from './lifecycle-support.js';

let app: LifecycleApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');
const BASE = 'https://pki.example.test:8443';
const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;

beforeAll(async () => {
  app = await createLifecycleApp({ clock, pki: { publicBaseUrl: BASE } });
});
afterAll(() => app.close());

async function issued(profileId: string, validityDays?: number) {
  const cert = await app.createCertificate({ profile_id: profileId });
  const res = await app.json(
    'POST',
    `/api/v1/certificates/${cert.id}/issue`,
    validityDays ? { validity_days: validityDays } : undefined,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const pem = await (await app.call('GET', `/api/v1/certificates/${cert.id}/export?format=pem`)).text();
  const [leaf, ...chain] = pem.match(PEM_CERT)!;
  const text = openssl(['x509', '-noout', '-text', '-in', { name: 'l.pem', file: leaf! }]);
  return { id: cert.id as string, leaf: leaf!, chain, text };
}

describe('short-lived certificates (RFC 9608)', () => {
  it('issues certificates under the threshold with noRevAvail and no CRL or OCSP pointer, and refuses to revoke them', async () => {
    const profile = await app.json('POST', '/api/v1/profiles', {
      name: 'short-lived',
      allow_ip_sans: true,
      max_validity_days: 3,
      short_lived_validity_hours: 24,
    });
    expect(profile.status, JSON.stringify(profile.body)).toBe(201);
    expect(profile.body.short_lived_validity_hours).toBe(24);

    const short = await issued(profile.body.id, 1);
    // OpenSSL 3.0 has no name for the extension yet: it prints the OID and the NULL value.
    expect(short.text).toMatch(/(X509v3 No Revocation Available|2\.5\.29\.56):/);
    expect(short.text).not.toContain('CRL Distribution Points');
    expect(short.text).not.toContain('OCSP - URI');
    expect(short.text).toContain(`CA Issuers - URI:${BASE}/.well-known/pki/ca/${app.ids.issuer}`);
    const attime = String(Math.floor(clock.now().getTime() / 1000));
    const verified = openssl([
      'verify',
      '-attime',
      attime,
      '-x509_strict',
      '-CAfile',
      { name: 'ca.pem', file: short.chain.join('') },
      { name: 'leaf.pem', file: short.leaf },
    ]);
    expect(verified).toMatch(/: OK/);

    const refused = await app.json('POST', `/api/v1/certificates/${short.id}/revoke`, {
      reason: 'keyCompromise',
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body).toMatchObject({ error: 'conflict', reason: 'revocation_unavailable' });
    expect(refused.body.detail).toMatch(/short-lived/);
    expect((await app.json('GET', `/api/v1/certificates/${short.id}`)).body.status).toBe('Active');

    // Above the threshold the same profile issues an ordinary, revocable certificate.
    const long = await issued(profile.body.id, 2);
    expect(long.text).not.toMatch(/No Revocation Available|2\.5\.29\.56/);
    expect(long.text).toContain('CRL Distribution Points');
    expect(long.text).toContain('OCSP - URI');
    const revoked = await app.json('POST', `/api/v1/certificates/${long.id}/revoke`, {
      reason: 'superseded',
    });
    expect(revoked.status).toBe(200);
  });

  it('refuses thresholds out of bounds with a 400 naming the field', async () => {
    for (const hours of [0, 721, 1.5]) {
      const res = await app.json('POST', '/api/v1/profiles', {
        name: `bad-${hours}`,
        short_lived_validity_hours: hours,
      });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['short_lived_validity_hours']);
    }
  });
});
