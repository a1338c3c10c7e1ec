import { ManualClock, SYSTEM_ACTOR } from '@certwright/core';
import { pemDecodeCertificates } from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp } from './lifecycle-support.js';

/**
 * What must hold before any signature: every name passes the lint (at creation and again right
 * before signing), AllowedDomains rules of severity Error/Critical are enforced, and leaf
 * validity without a profile is capped.
 */

const DAY = 86_400_000;
let app: LifecycleApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');

beforeAll(async () => {
  app = await createLifecycleApp({ clock });
});
afterAll(() => app.close());

describe('names are linted at creation and again before signing', () => {
  const create = (fields: Record<string, unknown>) =>
    app.json('POST', '/api/v1/certificates', {
      name: 'lint',
      renewal_policy_id: 'rp-default',
      issuer_id: app.ids.issuer,
      owner_id: app.ids.owner,
      team_id: app.ids.team,
      ...fields,
    });

  it.each([
    ['a bare wildcard', { common_name: '*' }],
    ['a wildcard on a public suffix', { common_name: 'ok.example.test', sans: ['*.com'] }],
    ['a common name with a right-to-left override', { common_name: 'evil\u202egpj.example.test' }],
    ['a NUL byte in a SAN', { common_name: 'ok.example.test', sans: ['a\u0000.example.test'] }],
    ['a common name that is not a host name', { common_name: 'Alice Smith' }],
  ])('refuses %s with 400 name_rejected', async (_what, fields) => {
    const res = await create(fields);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation_failed', reason: 'name_rejected' });
    expect(res.body.errors.length).toBeGreaterThan(0);
  });

  it('refuses on update too, and before signing a record whose names were stored unchecked', async () => {
    const cert = await app.createCertificate();
    const update = await app.json('PUT', `/api/v1/certificates/${cert.id}`, { sans: ['*.*.example.test'] });
    expect(update.status).toBe(400);
    expect(update.body.reason).toBe('name_rejected');
    // A record written straight to storage (an import, an older release) is linted at issue.
    const raw = await app.storage.certificates.create({
      name: 'raw',
      common_name: 'raw.example.test',
      sans: ['*.co.uk'],
      renewal_policy_id: 'rp-default',
      issuer_id: app.ids.issuer,
      owner_id: app.ids.owner,
      team_id: app.ids.team,
      status: 'Pending',
    });
    const issue = await app.json('POST', `/api/v1/certificates/${raw.id}/issue`, {});
    expect(issue.status).toBe(400);
    expect(issue.body.reason).toBe('name_rejected');
    expect((await app.services.jobs.list({ certificate_id: raw.id })).data).toEqual([]);
  });

  it('adds a host-name common name that is missing from the SANs to the signed SANs', async () => {
    const cert = await app.createCertificate({
      common_name: 'cn-only.example.test',
      sans: ['other.example.test'],
    });
    const { version } = await app.services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id);
    const { X509Certificate } = await import('node:crypto');
    const leaf = new X509Certificate(pemDecodeCertificates(version!.cert_pem)[0]!);
    expect(leaf.subjectAltName).toBe('DNS:cn-only.example.test, DNS:other.example.test');
  });
});

describe('AllowedDomains rules before signing', () => {
  it('an Error rule refuses names outside its domains at issue (name_not_allowed); a Warning only records a violation', async () => {
    const rule = await app.services.policyRules.create(SYSTEM_ACTOR, {
      name: `allowed-domains-${Math.floor(performance.now())}`,
      type: 'AllowedDomains',
      severity: 'Error',
      config: { allowed_domains: ['*.example.test', 'app.example.test', '127.0.0.7'] },
    });
    try {
      const outside = await app.createCertificate({ common_name: 'app.elsewhere.test', sans: [] });
      const refused = await app.json('POST', `/api/v1/certificates/${outside.id}/issue`, {});
      expect(refused.status).toBe(400);
      expect(refused.body.reason).toBe('name_not_allowed');
      expect(refused.body.detail).toContain('app.elsewhere.test');
      expect((await app.services.certificates.versions(outside.id)).total).toBe(0);
      const inside = await app.createCertificate();
      expect((await app.json('POST', `/api/v1/certificates/${inside.id}/issue`, {})).status).toBe(200);

      await app.services.policyRules.update(SYSTEM_ACTOR, rule.id, { severity: 'Warning' });
      expect((await app.json('POST', `/api/v1/certificates/${outside.id}/issue`, {})).status).toBe(200);
      const violations = await app.storage.violations.list({ certificate_id: outside.id });
      expect(violations.items.some((v) => v.rule_id === rule.id)).toBe(true);
    } finally {
      await app.services.policyRules.update(SYSTEM_ACTOR, rule.id, { enabled: false });
    }
  });
});

describe('validity without a profile', () => {
  it('is capped at 397 days by default: 398 is refused, 397 is issued', async () => {
    const cert = await app.createCertificate();
    const refused = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, { validity_days: 398 });
    expect(refused.status).toBe(400);
    expect(refused.body.reason).toBe('validity_not_allowed');
    const ok = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, { validity_days: 397 });
    expect(ok.status).toBe(200);
    const notAfter = new Date(ok.body.version.not_after).getTime();
    expect(notAfter - clock.now().getTime()).toBeLessThanOrEqual(397 * DAY);
  });
});
