import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificate, seedReferences } from './support/inventory-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

describe('owners, teams, issuers, profiles', () => {
  it('creates, reads, updates, lists and deletes an owner', async () => {
    const created = await app.call('POST', '/api/v1/owners', { name: 'Bob', email: 'bob@example.com' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Bob', email: 'bob@example.com' });
    expect(created.body.id).toMatch(/^own-/);
    const updated = await app.call('PUT', `/api/v1/owners/${created.body.id}`, { email: null });
    expect(updated.body).toMatchObject({ name: 'Bob', email: null });
    const list = await app.call('GET', '/api/v1/owners?search=bob');
    expect(list.body.data.map((o: { id: string }) => o.id)).toContain(created.body.id);
    expect((await app.call('DELETE', `/api/v1/owners/${created.body.id}`)).status).toBe(204);
    const gone = await app.call('GET', `/api/v1/owners/${created.body.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.detail).toBe(`owner '${created.body.id}' does not exist`);
  });

  it('answers 400 naming the field for a bad owner email and a missing team name', async () => {
    const owner = await app.call('POST', '/api/v1/owners', { name: 'X', email: 'not-an-email' });
    expect(owner.status).toBe(400);
    expect(owner.body.errors[0].field).toBe('email');
    const team = await app.call('POST', '/api/v1/teams', {});
    expect(team.body.errors).toEqual([{ field: 'name', message: 'is required' }]);
  });

  it('answers 409 naming the name for a duplicate team', async () => {
    expect((await app.call('POST', '/api/v1/teams', { name: 'Dup team' })).status).toBe(201);
    const dup = await app.call('POST', '/api/v1/teams', { name: 'Dup team' });
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toContain("'Dup team'");
  });

  it('never returns issuer config and stores it sealed', async () => {
    const created = await app.call('POST', '/api/v1/issuers', {
      name: 'Vault',
      type: 'VaultPKI',
      config: { token: 'hvs.TOPSECRETTOKEN', url: 'https://vault.internal' },
    });
    expect(created.status).toBe(201);
    expect(created.body).not.toHaveProperty('config');
    const id = created.body.id as string;
    for (const res of [
      await app.call('GET', `/api/v1/issuers/${id}`),
      await app.call('GET', '/api/v1/issuers'),
      await app.call('PUT', `/api/v1/issuers/${id}`, { config: { token: 'hvs.OTHERSECRET' } }),
    ]) {
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toMatch(/SECRET/);
    }
    // The audit trail records which keys changed, never the values.
    const audit = await app.storage.audit.list({ resource_id: id });
    expect(JSON.stringify(audit.items)).not.toMatch(/SECRET/);
    expect(audit.items.some((e) => JSON.stringify(e.details).includes('token'))).toBe(true);
    // At rest the config column holds ciphertext only.
    const row = await app.storage.db
      .selectFrom('issuers')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toMatch(/SECRET|vault\.internal/);
    expect((await app.storage.issuers.getWithConfig(id))?.config).toEqual({ token: 'hvs.OTHERSECRET' });
  });

  it('rejects an unknown issuer type naming the field', async () => {
    const res = await app.call('POST', '/api/v1/issuers', { name: 'X', type: 'Telepathy' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('type');
  });

  it('persists every profile field, must-staple included', async () => {
    const body = {
      name: 'Full profile',
      description: 'all fields',
      allowed_key_algorithms: [
        { algorithm: 'RSA', sizes: [2048, 3072] },
        { algorithm: 'ECDSA', curves: ['P-256'] },
      ],
      allowed_ekus: ['serverAuth', 'clientAuth'],
      required_csr_attributes: ['serverAuth', 'CN', 'challengePassword', 'serialNumber'],
      must_staple: true,
      max_validity_days: 90,
      key_generation: 'agent',
    };
    const created = await app.call('POST', '/api/v1/profiles', body);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject(body);
    const got = await app.call('GET', `/api/v1/profiles/${created.body.id}`);
    expect(got.body).toMatchObject(body);
    const updated = await app.call('PUT', `/api/v1/profiles/${created.body.id}`, { must_staple: false });
    expect(updated.body).toMatchObject({ ...body, must_staple: false });
    const bad = await app.call('POST', '/api/v1/profiles', { name: 'bad', allowed_ekus: ['anyPurpose'] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('allowed_ekus.0');
  });

  it('answers 409 naming the record when deleting anything a certificate references', async () => {
    const refs = await seedReferences(app, ' (refd)');
    await createCertificate(app, refs, { profile_id: refs.profile });
    for (const [path, id, what] of [
      ['owners', refs.owner, 'owner'],
      ['teams', refs.team, 'team'],
      ['issuers', refs.issuer, 'issuer'],
      ['profiles', refs.profile, 'profile'],
      ['renewal-policies', refs.policy, 'renewal policy'],
    ] as const) {
      const res = await app.call('DELETE', `/api/v1/${path}/${id}`);
      expect(res.status, path).toBe(409);
      expect(res.body.detail).toContain(`${what} '${id}'`);
      expect((await app.call('GET', `/api/v1/${path}/${id}`)).status).toBe(200);
    }
  });

  it('answers 404 for unknown ids on get, update and delete', async () => {
    for (const path of ['owners', 'teams', 'issuers', 'profiles', 'renewal-policies', 'policies']) {
      expect((await app.call('GET', `/api/v1/${path}/nope`)).status, path).toBe(404);
      expect((await app.call('PUT', `/api/v1/${path}/nope`, {})).status, path).toBe(404);
      expect((await app.call('DELETE', `/api/v1/${path}/nope`)).status, path).toBe(404);
    }
  });
});

describe('renewal policies', () => {
  it('generates rp-<slug> and applies the defaults', async () => {
    const res = await app.call('POST', '/api/v1/renewal-policies', { name: 'Web Servers (prod)' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: 'rp-web-servers-prod',
      name: 'Web Servers (prod)',
      renewal_window_days: 30,
      max_retries: null,
      retry_interval_seconds: 3600,
      alert_thresholds_days: [30, 14, 7, 0],
    });
  });

  it('keeps a given id and disambiguates a generated one that is taken', async () => {
    const given = await app.call('POST', '/api/v1/renewal-policies', {
      id: 'rp-custom',
      name: 'Custom',
      max_retries: 0,
    });
    expect(given.body).toMatchObject({ id: 'rp-custom', max_retries: 0 });
    const again = await app.call('POST', '/api/v1/renewal-policies', { id: 'rp-custom', name: 'Custom 2' });
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain("'rp-custom'");
    expect((await app.call('POST', '/api/v1/renewal-policies', { name: 'custom' })).body.id).toBe(
      'rp-custom-2',
    );
  });

  it('answers 409 for a duplicate name on create and on update', async () => {
    await app.call('POST', '/api/v1/renewal-policies', { name: 'Taken' });
    const create = await app.call('POST', '/api/v1/renewal-policies', { name: 'Taken' });
    expect(create.status).toBe(409);
    expect(create.body.detail).toContain("'Taken'");
    const other = await app.call('POST', '/api/v1/renewal-policies', { name: 'Free' });
    const update = await app.call('PUT', `/api/v1/renewal-policies/${other.body.id}`, { name: 'Taken' });
    expect(update.status).toBe(409);
    expect((await app.call('GET', `/api/v1/renewal-policies/${other.body.id}`)).body.name).toBe('Free');
    // Renaming a policy to its own name is no conflict.
    expect(
      (await app.call('PUT', `/api/v1/renewal-policies/${other.body.id}`, { name: 'Free' })).status,
    ).toBe(200);
  });

  it('accepts the limits and refuses one step beyond each, naming the field', async () => {
    const ok = await app.call('POST', '/api/v1/renewal-policies', {
      name: 'x'.repeat(255),
      renewal_window_days: 365,
      max_retries: 10,
      retry_interval_seconds: 86400,
      alert_thresholds_days: [365, 0],
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const low = await app.call('POST', '/api/v1/renewal-policies', {
      name: 'low',
      renewal_window_days: 1,
      max_retries: 0,
      retry_interval_seconds: 60,
    });
    expect(low.status).toBe(201);
    for (const [field, value] of [
      ['name', ''],
      ['name', 'y'.repeat(256)],
      ['renewal_window_days', 0],
      ['renewal_window_days', 366],
      ['renewal_window_days', 1.5],
      ['max_retries', -1],
      ['max_retries', 11],
      ['retry_interval_seconds', 59],
      ['retry_interval_seconds', 86401],
      ['alert_thresholds_days', [366]],
      ['alert_thresholds_days', [-1]],
    ] as const) {
      const res = await app.call('POST', '/api/v1/renewal-policies', { name: 'limits', [field]: value });
      expect(res.status, `${field}=${JSON.stringify(value)}`).toBe(400);
      expect(res.body.errors[0].field.split('.')[0]).toBe(field);
    }
  });

  it('updates only the fields given', async () => {
    const p = await app.call('POST', '/api/v1/renewal-policies', { name: 'Partial', max_retries: 3 });
    const res = await app.call('PUT', `/api/v1/renewal-policies/${p.body.id}`, { renewal_window_days: 45 });
    expect(res.body).toMatchObject({ renewal_window_days: 45, max_retries: 3, retry_interval_seconds: 3600 });
    const bad = await app.call('PUT', `/api/v1/renewal-policies/${p.body.id}`, {
      retry_interval_seconds: 10,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('retry_interval_seconds');
  });

  it('deletes an unreferenced policy and answers 404 afterwards', async () => {
    const p = await app.call('POST', '/api/v1/renewal-policies', { name: 'Disposable' });
    expect((await app.call('DELETE', `/api/v1/renewal-policies/${p.body.id}`)).status).toBe(204);
    const res = await app.call('GET', `/api/v1/renewal-policies/${p.body.id}`);
    expect(res.status).toBe(404);
    expect(res.body.detail).toBe(`renewal policy '${p.body.id}' does not exist`);
  });
});
