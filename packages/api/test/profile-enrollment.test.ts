import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
}, 60_000);
afterAll(() => app.close());

describe('enrollment settings on profiles', () => {
  it('seeds prof-default with a Local issuer, default owner and team, and ACME in challenge mode', async () => {
    const { status, body } = await app.call('GET', '/api/v1/profiles/prof-default');
    expect(status).toBe(200);
    expect(body.enrollment).toEqual({
      issuer_id: 'iss-local',
      owner_id: 'own-default',
      team_id: 'team-default',
      renewal_policy_id: 'rp-default',
    });
    expect(body.acme).toMatchObject({
      enabled: true,
      auth_mode: 'challenge',
      eab_required: false,
      path_id: null,
    });
    const issuer = await app.call('GET', '/api/v1/issuers/iss-local');
    expect(issuer.status).toBe(200);
    expect(issuer.body).toMatchObject({ id: 'iss-local', name: 'Local CA', type: 'Local', enabled: true });
    // Seeding again (every start) leaves the settings alone.
    await app.call('PUT', '/api/v1/profiles/prof-default', { acme: { eab_required: true } });
    await app.storage.migrate();
    expect((await app.call('GET', '/api/v1/profiles/prof-default')).body.acme.eab_required).toBe(true);
    await app.call('PUT', '/api/v1/profiles/prof-default', { acme: { eab_required: false } });
  });

  it('gives a new profile disabled protocol blocks and empty enrollment defaults', async () => {
    const { status, body } = await app.call('POST', '/api/v1/profiles', { name: 'No enrollment' });
    expect(status).toBe(201);
    expect(body.enrollment).toEqual({
      issuer_id: null,
      owner_id: null,
      team_id: null,
      renewal_policy_id: null,
    });
    expect(body.acme).toMatchObject({
      enabled: false,
      auth_mode: 'challenge',
      challenge_types: ['http-01', 'dns-01', 'tls-alpn-01'],
    });
  });

  it('updates only the given fields of a block and keeps the rest', async () => {
    const created = await app.call('POST', '/api/v1/profiles', {
      name: 'Partial updates',
      enrollment: {
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
      },
      acme: { enabled: true, auth_mode: 'trust_authenticated', path_id: 'internal' },
    });
    expect(created.status).toBe(201);
    const updated = await app.call('PUT', `/api/v1/profiles/${created.body.id}`, {
      acme: { rate_limits: { orders_per_account_per_hour: 10 } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.acme).toMatchObject({
      enabled: true,
      auth_mode: 'trust_authenticated',
      path_id: 'internal',
      rate_limits: { orders_per_account_per_hour: 10, accounts_per_ip_per_hour: 50 },
    });
    const found = await app.services.deps.storage.profiles.findByPathId('acme', 'internal');
    expect(found?.id).toBe(created.body.id);
  });

  it('refuses enabling ACME without complete enrollment defaults, naming each field', async () => {
    const res = await app.call('POST', '/api/v1/profiles', { name: 'Incomplete', acme: { enabled: true } });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'enrollment.issuer_id',
      'enrollment.owner_id',
      'enrollment.renewal_policy_id',
      'enrollment.team_id',
    ]);
    expect(
      (await app.call('GET', '/api/v1/profiles?per_page=500')).body.data.map((p: { name: string }) => p.name),
    ).not.toContain('Incomplete');
  });

  it('answers 400 for an unknown issuer and 409 for a path id another profile holds', async () => {
    const unknown = await app.call('PUT', '/api/v1/profiles/prof-default', {
      enrollment: { issuer_id: 'iss-nope' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].field).toBe('enrollment.issuer_id');
    await app.call('POST', '/api/v1/profiles', { name: 'Holder', acme: { path_id: 'taken' } });
    const other = await app.call('POST', '/api/v1/profiles', {
      name: 'Wants it',
      acme: { path_id: 'taken' },
    });
    expect(other.status).toBe(409);
    expect(other.body.detail).toContain("'taken'");
    const bad = await app.call('PUT', '/api/v1/profiles/prof-default', {
      acme: { auth_mode: 'anything', bogus: 1 },
    });
    expect(bad.status).toBe(400);
    expect((await app.call('GET', '/api/v1/profiles/prof-default')).body.acme.auth_mode).toBe('challenge');
  });

  it('seals write-only protocol secrets and reports only which are set', async () => {
    const storage = app.services.deps.storage;
    const profile = await storage.profiles.create({ name: 'Secrets', max_validity_days: 90 });
    await storage.profiles.update(profile.id, {
      enrollment_secrets: { scep: { challenge_password: 'hunter2' } },
    });
    const read = await storage.profiles.get(profile.id);
    expect(read?.enrollment_secrets_set).toEqual({ scep: ['challenge_password'] });
    expect(JSON.stringify(read)).not.toContain('hunter2');
    const row = await app.storage.db
      .selectFrom('certificate_profiles')
      .select(['enrollment_settings', 'enrollment_secrets_sealed'])
      .where('id', '=', profile.id)
      .executeTakeFirstOrThrow();
    expect(`${row.enrollment_settings}${row.enrollment_secrets_sealed}`).not.toContain('hunter2');
    expect((await storage.profiles.getWithSecrets(profile.id))?.secrets).toEqual({
      scep: { challenge_password: 'hunter2' },
    });
  });

  it('keeps the scep block: defaults, nested mdm updates, challenge password hashed and write-only', async () => {
    const created = await app.call('POST', '/api/v1/profiles', { name: 'SCEP block' });
    expect(created.body.scep).toEqual({
      enabled: false,
      path_id: null,
      mtls_trust_bundle_path: null,
      mdm: {
        enabled: false,
        trust_bundle_path: null,
        audience: null,
        max_lifetime_seconds: 3600,
        require_compliance: true,
      },
      challenge_password_set: false,
    });
    const id = created.body.id as string;
    const set = await app.call('PUT', `/api/v1/profiles/${id}`, {
      scep: {
        path_id: 'devices',
        challenge_password: 'correct horse battery',
        mdm: { audience: 'certwright' },
      },
    });
    expect(set.status).toBe(200);
    expect(set.body.scep).toMatchObject({
      path_id: 'devices',
      challenge_password_set: true,
      mdm: { audience: 'certwright', max_lifetime_seconds: 3600, require_compliance: true },
    });
    expect(JSON.stringify(set.body)).not.toContain('correct horse');
    const secrets = (await app.services.deps.storage.profiles.getWithSecrets(id))?.secrets.scep;
    expect(secrets?.challenge_password).toMatch(/^\$?scrypt/);
    expect((await app.services.deps.storage.profiles.findByPathId('scep', 'devices'))?.id).toBe(id);
    const nested = await app.call('PUT', `/api/v1/profiles/${id}`, {
      scep: { mdm: { max_lifetime_seconds: 600 } },
    });
    expect(nested.body.scep.mdm).toMatchObject({ audience: 'certwright', max_lifetime_seconds: 600 });
    expect(nested.body.scep.challenge_password_set).toBe(true);
    const tooLong = await app.call('PUT', `/api/v1/profiles/${id}`, {
      scep: { mdm: { max_lifetime_seconds: 86_401 } },
    });
    expect(tooLong.status).toBe(400);
    const audit = await app.call('GET', `/api/v1/audit?per_page=100`);
    expect(JSON.stringify(audit.body)).not.toContain('correct horse');
    const cleared = await app.call('PUT', `/api/v1/profiles/${id}`, { scep: { challenge_password: null } });
    expect(cleared.body.scep.challenge_password_set).toBe(false);
  });
});
