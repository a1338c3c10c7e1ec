import { ManualClock } from '@certwright/core';
import {
  certificationRequestToPem,
  createCertificationRequest,
  der,
  generateKeyPair,
  OID,
} from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp } from './lifecycle-support.js';

/**
 * What a profile write accepts: an unknown field — `id`, a typo — is 400 naming it, at the top
 * level and inside a block, and nothing changes; a required CSR attribute must be one a CSR can
 * carry and `/csrattrs` can advertise, or every enrollment under the profile would be refused.
 */

let app: LifecycleApp;

beforeAll(async () => {
  app = await createLifecycleApp({ clock: new ManualClock('2026-03-01T00:00:00Z') });
}, 180_000);
afterAll(() => app?.close());

const fieldsOf = (body: { errors?: { field: string }[] }) => (body.errors ?? []).map((e) => e.field);

describe('profile writes refuse unknown fields, naming them', () => {
  it('on create: id, a typo, a nested unknown member — 400, nothing stored', async () => {
    const before = (await app.json('GET', '/api/v1/profiles')).body.total;
    for (const [body, field] of [
      [{ name: 'with id', id: 'prof-mine' }, 'id'],
      [{ name: 'typo', max_validty_days: 30 }, 'max_validty_days'],
      [{ name: 'nested', acme: { enabled: false, eab_requird: true } }, 'acme.eab_requird'],
    ] as const) {
      const res = await app.json('POST', '/api/v1/profiles', body);
      expect({ field, status: res.status }).toEqual({ field, status: 400 });
      expect(fieldsOf(res.body)).toEqual([field]);
      expect(res.body.detail).toContain(field);
    }
    expect((await app.json('GET', '/api/v1/profiles')).body.total).toBe(before);
  });

  it('on update: 400 naming the field, the profile unchanged', async () => {
    const created = await app.json('POST', '/api/v1/profiles', { name: 'update me', max_validity_days: 90 });
    expect(created.status).toBe(201);
    const res = await app.json('PUT', `/api/v1/profiles/${created.body.id}`, {
      max_validity_days: 30,
      must_stapel: true,
    });
    expect(res.status).toBe(400);
    expect(fieldsOf(res.body)).toEqual(['must_stapel']);
    const after = await app.json('GET', `/api/v1/profiles/${created.body.id}`);
    expect(after.body).toMatchObject({ max_validity_days: 90, must_staple: false });
  });
});

describe('required CSR attributes are checked when written', () => {
  it('refuses names no CSR carries and /csrattrs cannot advertise, naming the entry', async () => {
    for (const name of ['commonName', 'no-such-attribute', 'id-kp-serverAuth', 'cn=', '1.2.']) {
      const res = await app.json('POST', '/api/v1/profiles', {
        name: `attrs ${name}`,
        required_csr_attributes: ['CN', name],
      });
      expect({ name, status: res.status }).toEqual({ name, status: 400 });
      expect(fieldsOf(res.body)).toEqual(['required_csr_attributes.1']);
    }
    const created = await app.json('POST', '/api/v1/profiles', {
      name: 'attrs later',
      required_csr_attributes: ['CN'],
    });
    const res = await app.json('PUT', `/api/v1/profiles/${created.body.id}`, {
      required_csr_attributes: ['CommonName'],
    });
    expect(res.status).toBe(400);
    expect(
      (await app.json('GET', `/api/v1/profiles/${created.body.id}`)).body.required_csr_attributes,
    ).toEqual(['CN']);
  });

  it('accepts every kind csrattrs advertises, and a CSR that carries them is issued', async () => {
    const required = [
      'CN',
      'o',
      'serialNumber',
      'emailAddress',
      '2.5.4.11',
      'challengePassword',
      'serverAuth',
    ];
    const profile = await app.json('POST', '/api/v1/profiles', {
      name: 'every kind',
      allow_ip_sans: true,
      required_csr_attributes: required,
    });
    expect(profile.status, JSON.stringify(profile.body)).toBe(201);
    const cert = await app.createCertificate({ profile_id: profile.body.id });
    const { privateKey } = await generateKeyPair('ECDSA-P256');
    const csr = (subject: { type: string; value: string }[]) =>
      certificationRequestToPem(
        createCertificationRequest({
          subject,
          privateKey,
          subjectAltNames: [
            { type: 'dns', value: 'app.example.test' },
            { type: 'dns', value: 'www.example.test' },
            { type: 'ip', value: '127.0.0.7' },
          ],
          challengePassword: 'pw',
          extensions: [
            { oid: OID.extKeyUsage, critical: false, value: der.sequence(der.oid(OID.idKpServerAuth)) },
          ],
        }),
      );
    const complete = [
      { type: 'CN', value: 'app.example.test' },
      { type: 'O', value: 'Example' },
      { type: 'OU', value: 'Ops' },
      { type: 'serialNumber', value: '42' },
      { type: 'E', value: 'ops@example.test' },
    ];
    const missing = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, {
      csr_pem: csr(complete.filter((a) => a.type !== 'OU')),
    });
    expect(missing.status).toBe(400);
    expect(missing.body.reason).toBe('csr_attribute_missing');
    expect(missing.body.detail).toContain('2.5.4.11');
    const issued = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, {
      csr_pem: csr(complete),
    });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  });
});
