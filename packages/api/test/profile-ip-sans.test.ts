import { X509Certificate } from 'node:crypto';
import { isCertwrightError, ManualClock, SYSTEM_ACTOR } from '@certwright/core';
import { createCertificationRequest, generateKeyPair } from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp } from './lifecycle-support.js';

/** `allow_ip_sans` on profiles: IP addresses on a certificate only when its profile allows them. */

let app: LifecycleApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');
let seq = 0;

beforeAll(async () => {
  app = await createLifecycleApp({ clock });
});
afterAll(() => app.close());

async function profile(fields: Record<string, unknown> = {}) {
  const res = await app.json('POST', '/api/v1/profiles', {
    name: `ip-profile-${++seq}`,
    enrollment: {
      issuer_id: app.ids.issuer,
      owner_id: app.ids.owner,
      team_id: app.ids.team,
      renewal_policy_id: 'rp-default',
    },
    ...fields,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function ipCsr(): Promise<Uint8Array> {
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  return createCertificationRequest({
    subject: [{ type: 'CN', value: 'device.example.test' }],
    privateKey,
    subjectAltNames: [
      { type: 'dns', value: 'device.example.test' },
      { type: 'ip', value: '192.0.2.17' },
    ],
  });
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isCertwrightError(error)) return `${error.reason}: ${error.message}`;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('profile allow_ip_sans', () => {
  it('is false on a new profile created without it, and round-trips through POST, PUT and GET', async () => {
    const plain = await profile();
    expect(plain.allow_ip_sans).toBe(false);
    const allowing = await profile({ allow_ip_sans: true });
    expect(allowing.allow_ip_sans).toBe(true);
    const put = await app.json('PUT', `/api/v1/profiles/${plain.id}`, { allow_ip_sans: true });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.allow_ip_sans).toBe(true);
    expect((await app.json('GET', `/api/v1/profiles/${plain.id}`)).body.allow_ip_sans).toBe(true);
    await app.json('PUT', `/api/v1/profiles/${plain.id}`, { allow_ip_sans: false });
    expect((await app.json('GET', `/api/v1/profiles/${plain.id}`)).body.allow_ip_sans).toBe(false);
    const bad = await app.json('PUT', `/api/v1/profiles/${plain.id}`, { allow_ip_sans: 'yes' });
    expect(bad.status).toBe(400);
  });

  it('keeps allowing IP addresses on the seeded default profile, as before the setting existed', async () => {
    expect((await app.json('GET', '/api/v1/profiles/prof-default')).body.allow_ip_sans).toBe(true);
  });

  it('is shown in the OpenAPI document of the profile record and its request bodies', async () => {
    const doc = JSON.stringify(await (await app.call('GET', '/api/v1/openapi.json')).json());
    expect(doc.match(/"allow_ip_sans"/g)?.length ?? 0).toBeGreaterThanOrEqual(3);
  });

  it('refuses a certificate naming an IP address under a profile without it: 400 naming the field and the IP', async () => {
    const p = await profile();
    for (const [fields, field] of [
      [{ sans: ['www.example.test', '127.0.0.7'] }, 'sans'],
      [{ common_name: '127.0.0.8', sans: [] }, 'common_name'],
    ] as const) {
      const res = await app.json('POST', '/api/v1/certificates', {
        name: `ip-cert-${++seq}`,
        common_name: 'app.example.test',
        renewal_policy_id: 'rp-default',
        issuer_id: app.ids.issuer,
        owner_id: app.ids.owner,
        team_id: app.ids.team,
        profile_id: p.id,
        ...fields,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.reason).toBe('name_not_allowed');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
      expect(res.body.detail).toContain(field === 'sans' ? '127.0.0.7' : '127.0.0.8');
    }
    // Moving an IP-naming certificate under the profile is refused the same way.
    const cert = await app.createCertificate();
    const moved = await app.json('PUT', `/api/v1/certificates/${cert.id}`, { profile_id: p.id });
    expect(moved.status).toBe(400);
    expect(moved.body.reason).toBe('name_not_allowed');
  });

  it('issues a certificate naming an IP address under a profile with it', async () => {
    const p = await profile({ allow_ip_sans: true });
    const cert = await app.createCertificate({ profile_id: p.id });
    const res = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const pem = await (await app.call('GET', `/api/v1/certificates/${cert.id}/export?format=pem`)).text();
    expect(new X509Certificate(pem).subjectAltName).toContain('IP Address:127.0.0.7');
  });

  it('refuses issuance once the profile stops allowing IP addresses', async () => {
    const p = await profile({ allow_ip_sans: true });
    const cert = await app.createCertificate({ profile_id: p.id });
    await app.json('PUT', `/api/v1/profiles/${p.id}`, { allow_ip_sans: false });
    const res = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, {});
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe('name_not_allowed');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['sans']);
    expect(res.body.detail).toContain('127.0.0.7');
  });

  it('enroll (ACME, EST) refuses a CSR naming an IP address under a profile without it, and accepts it with', async () => {
    const refusing = await profile();
    expect(
      await reasonOf(
        app.services.pki.enrollment.enroll(SYSTEM_ACTOR, {
          profileId: refusing.id,
          csrDer: await ipCsr(),
          source: 'ACME',
          names: { dns: ['device.example.test'], ip: ['192.0.2.17'] },
        }),
      ),
    ).toMatch(/^name_not_allowed: .*192\.0\.2\.17/);
    expect((await app.services.certificates.list({ profile_id: refusing.id })).total).toBe(0);

    const allowing = await profile({ allow_ip_sans: true });
    const result = await app.services.pki.enrollment.enroll(SYSTEM_ACTOR, {
      profileId: allowing.id,
      csrDer: await ipCsr(),
      source: 'EST',
    });
    expect(new X509Certificate(result.certificatePem).subjectAltName).toContain('IP Address:192.0.2.17');
  });
});
