import type { Logger } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificate, type References, seedReferences } from './support/inventory-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** Records warn lines so tests can see what the engine logged. */
function recordingLogger(lines: { fields: object; message?: string }[]): Logger {
  const logger: Logger = {
    debug() {},
    info() {},
    warn(fields, message) {
      lines.push({ fields, message });
    },
    error() {},
    child: () => logger,
  };
  return logger;
}

let app: TestApp;
let refs: References;
const warnings: { fields: object; message?: string }[] = [];

beforeAll(async () => {
  app = await createTestApp({ logger: recordingLogger(warnings) });
  refs = await seedReferences(app);
});
afterAll(() => app.close());

async function violationsOf(certificateId: string) {
  const res = await app.call('GET', `/api/v1/violations?certificate_id=${certificateId}`);
  expect(res.status).toBe(200);
  return res.body.data as { rule_id: string; severity: string; message: string; rule_type: string }[];
}

async function deleteAllRules() {
  const list = await app.call('GET', '/api/v1/policies?per_page=500');
  for (const r of list.body.data) await app.call('DELETE', `/api/v1/policies/${r.id}`);
}

describe('policy rules', () => {
  it('defaults severity to Warning and keeps it when an update omits it', async () => {
    const created = await app.call('POST', '/api/v1/policies', {
      name: 'domains',
      type: 'AllowedDomains',
      config: { allowed_domains: ['*.example.com'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ severity: 'Warning', type: 'AllowedDomains', enabled: true });
    expect(created.body.id).toMatch(/^pr-/);
    const critical = await app.call('PUT', `/api/v1/policies/${created.body.id}`, { severity: 'Critical' });
    expect(critical.body.severity).toBe('Critical');
    const renamed = await app.call('PUT', `/api/v1/policies/${created.body.id}`, { name: 'renamed' });
    expect(renamed.body).toMatchObject({
      name: 'renamed',
      severity: 'Critical',
      config: { allowed_domains: ['*.example.com'] },
    });
    await deleteAllRules();
  });

  it('answers 400 for an unknown type or severity, including wrong case', async () => {
    for (const body of [
      { name: 'x', type: 'allowedDomains' },
      { name: 'x', type: 'Expiry' },
      { name: 'x', type: 'AllowedDomains', severity: 'warning' },
      { name: 'x', type: 'AllowedDomains', severity: 'Info' },
    ]) {
      const res = await app.call('POST', '/api/v1/policies', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0].field).toBe(body.type === 'AllowedDomains' ? 'severity' : 'type');
    }
    const rule = await app.call('POST', '/api/v1/policies', { name: 'ok', type: 'AllowedIssuers' });
    const bad = await app.call('PUT', `/api/v1/policies/${rule.body.id}`, { severity: 'Fatal' });
    expect(bad.status).toBe(400);
    expect((await app.call('GET', `/api/v1/policies/${rule.body.id}`)).body.severity).toBe('Warning');
    await deleteAllRules();
  });

  it('checks config keys per type, naming the key', async () => {
    const wrongKey = await app.call('POST', '/api/v1/policies', {
      name: 'x',
      type: 'AllowedEnvironments',
      config: { allowed_environments: ['prod'] },
    });
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.body.errors[0]).toEqual({
      field: 'config.allowed_environments',
      message: 'is not a AllowedEnvironments config key',
    });
    const wrongShape = await app.call('POST', '/api/v1/policies', {
      name: 'x',
      type: 'RenewalLeadTime',
      config: { lead_time_days: 'ten' },
    });
    expect(wrongShape.body.errors[0].field).toBe('config.lead_time_days');
    const rule = await app.call('POST', '/api/v1/policies', {
      name: 'x',
      type: 'AllowedIssuers',
      config: { allowed_issuer_ids: [] },
    });
    const typeSwap = await app.call('PUT', `/api/v1/policies/${rule.body.id}`, {
      type: 'CertificateLifetime',
    });
    expect(typeSwap.status).toBe(400);
    expect(typeSwap.body.errors[0].field).toBe('config.allowed_issuer_ids');
    await deleteAllRules();
  });
});

describe('policy evaluation', () => {
  it('records a violation with the rule severity when a certificate is created and clears it when fixed', async () => {
    const rule = await app.call('POST', '/api/v1/policies', {
      name: 'only example.com',
      type: 'AllowedDomains',
      severity: 'Error',
      config: { allowed_domains: ['*.example.com', 'example.com'] },
    });
    const cert = await createCertificate(app, refs, {
      common_name: 'www.example.com',
      sans: ['a.b.example.com', 'evil.test'],
    });
    expect(await violationsOf(cert.id)).toEqual([
      expect.objectContaining({
        rule_id: rule.body.id,
        rule_type: 'AllowedDomains',
        severity: 'Error',
        message: 'names outside the allowed domains: a.b.example.com, evil.test',
      }),
    ]);
    await app.call('PUT', `/api/v1/certificates/${cert.id}`, { sans: ['example.com'] });
    expect(await violationsOf(cert.id)).toEqual([]);
    await deleteAllRules();
  });

  it('applies AllowedIssuers, RequiredMetadata, AllowedEnvironments and RenewalLeadTime', async () => {
    const mk = (name: string, type: string, config: unknown, severity = 'Warning') =>
      app.call('POST', '/api/v1/policies', { name, type, config, severity });
    const issuers = await mk('issuers', 'AllowedIssuers', { allowed_issuer_ids: ['iss-other'] }, 'Critical');
    const metadata = await mk('metadata', 'RequiredMetadata', {
      required_keys: ['owner_email', 'cost_center'],
    });
    const envs = await mk('envs', 'AllowedEnvironments', { allowed: ['prod', 'staging'] }, 'Error');
    const lead = await mk('lead', 'RenewalLeadTime', { lead_time_days: 45 });
    const cert = await createCertificate(app, refs, {
      environment: 'dev',
      metadata: { owner_email: 'a@example.com' },
    });
    const found = await violationsOf(cert.id);
    const byRule = Object.fromEntries(found.map((v) => [v.rule_id, v]));
    expect(byRule[issuers.body.id]).toMatchObject({
      severity: 'Critical',
      message: `issuer '${refs.issuer}' is not an allowed issuer`,
    });
    expect(byRule[metadata.body.id]).toMatchObject({
      severity: 'Warning',
      message: 'missing metadata keys: cost_center',
    });
    expect(byRule[envs.body.id]).toMatchObject({
      severity: 'Error',
      message: "environment 'dev' is not allowed",
    });
    expect(byRule[lead.body.id]?.message).toBe(
      'renewal window of 30 days is shorter than the required lead time of 45 days',
    );
    expect(found).toHaveLength(4);
    const filtered = await app.call('GET', `/api/v1/violations?certificate_id=${cert.id}&severity=Critical`);
    expect(filtered.body.data.map((v: { rule_id: string }) => v.rule_id)).toEqual([issuers.body.id]);
    const byType = await app.call(
      'GET',
      `/api/v1/violations?rule_type=AllowedEnvironments&certificate_id=${cert.id}`,
    );
    expect(byType.body.total).toBe(1);
    const one = await app.call('GET', `/api/v1/violations/${byType.body.data[0].id}`);
    expect(one.body.rule_id).toBe(envs.body.id);
    await deleteAllRules();
  });

  it('yields the missing-configuration violation for a rule with empty or null config', async () => {
    const empty = await app.call('POST', '/api/v1/policies', {
      name: 'empty',
      type: 'RequiredMetadata',
      config: {},
      severity: 'Error',
    });
    const nul = await app.call('POST', '/api/v1/policies', {
      name: 'null',
      type: 'AllowedDomains',
      config: null,
    });
    const cert = await createCertificate(app, refs);
    const found = await violationsOf(cert.id);
    expect(found.map((v) => [v.rule_id, v.severity, v.message]).sort()).toEqual(
      [
        [empty.body.id, 'Error', "RequiredMetadata rule 'empty' has no configuration"],
        [nul.body.id, 'Warning', "AllowedDomains rule 'null' has no configuration"],
      ].sort(),
    );
    await deleteAllRules();
  });

  it('skips and logs a malformed config while the other rules still run', async () => {
    // Config text that is not JSON can only come from the store (imports, hand edits).
    const broken = await app.storage.policyRules.create({
      name: 'broken',
      type: 'AllowedIssuers',
      config: '{"allowed_issuer_ids": [',
    });
    const good = await app.call('POST', '/api/v1/policies', {
      name: 'good',
      type: 'AllowedIssuers',
      config: { allowed_issuer_ids: [] },
    });
    warnings.length = 0;
    const cert = await createCertificate(app, refs);
    expect((await violationsOf(cert.id)).map((v) => v.rule_id)).toEqual([good.body.id]);
    expect(warnings).toContainEqual({
      fields: expect.objectContaining({
        rule_id: broken.id,
        certificate_id: cert.id,
        reason: 'malformed config: config is not valid JSON',
      }),
      message: 'policy rule skipped',
    });
    await deleteAllRules();
  });

  it('skips and logs CertificateLifetime without version data, and applies it once a version exists', async () => {
    const rule = await app.call('POST', '/api/v1/policies', {
      name: 'life',
      type: 'CertificateLifetime',
      config: { max_days: 90 },
    });
    warnings.length = 0;
    const cert = await createCertificate(app, refs);
    expect(await violationsOf(cert.id)).toEqual([]);
    expect(warnings).toContainEqual({
      fields: expect.objectContaining({ rule_id: rule.body.id, reason: 'certificate has no version yet' }),
      message: 'policy rule skipped',
    });
    await app.storage.versions.create({
      certificate_id: cert.id,
      issuer_id: refs.issuer,
      serial_number: 'ee01',
      fingerprint_sha256: 'e'.repeat(64),
      key_algorithm: 'RSA',
      key_size: 2048,
      subject: 'CN=www.example.com',
      issued_at: new Date('2026-01-01T00:00:00Z'),
      not_before: new Date('2026-01-01T00:00:00Z'),
      not_after: new Date('2027-01-01T00:00:00Z'),
      csr_pem: null,
      cert_pem: 'pem',
      chain_pem: '',
    });
    const run = await app.call('POST', '/api/v1/policies/evaluate');
    expect(run.status).toBe(200);
    expect(run.body.evaluated).toBeGreaterThanOrEqual(1);
    expect(await violationsOf(cert.id)).toEqual([
      expect.objectContaining({
        rule_id: rule.body.id,
        message: 'validity of 365 days exceeds the maximum of 90 days',
      }),
    ]);
    await deleteAllRules();
  });

  it('evaluates every certificate on demand and answers 405 for other methods', async () => {
    const before = await app.call('GET', '/api/v1/certificates?per_page=1');
    await app.call('POST', '/api/v1/policies', {
      name: 'no issuer allowed',
      type: 'AllowedIssuers',
      config: { allowed_issuer_ids: [] },
    });
    const run = await app.call('POST', '/api/v1/policies/evaluate');
    expect(run.body).toMatchObject({ evaluated: before.body.total, violations: before.body.total });
    const all = await app.call('GET', '/api/v1/violations?rule_type=AllowedIssuers&per_page=1');
    expect(all.body.total).toBe(before.body.total);
    const get = await app.call('GET', '/api/v1/policies/evaluate');
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    await deleteAllRules();
    // Deleting a rule deletes its violations.
    expect((await app.call('GET', '/api/v1/violations?per_page=1')).body.total).toBe(0);
  });
});
