import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  certificateBody,
  createCertificate,
  type References,
  seedReferences,
} from './support/inventory-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let app: TestApp;
let refs: References;

beforeAll(async () => {
  app = await createTestApp();
  refs = await seedReferences(app);
});
afterAll(() => app.close());

/** Stores an issued version for a certificate directly (issuance is another feature). */
async function addVersion(certificateId: string, serial: string, notBefore: string, notAfter: string) {
  return app.storage.versions.create({
    certificate_id: certificateId,
    issuer_id: refs.issuer,
    serial_number: serial,
    fingerprint_sha256: serial.padStart(64, '0'),
    key_algorithm: 'ECDSA',
    key_size: 256,
    subject: 'CN=www.example.com',
    issued_at: new Date(notBefore),
    not_before: new Date(notBefore),
    not_after: new Date(notAfter),
    csr_pem: '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n',
    cert_pem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
    chain_pem: '',
    private_key_pem: '-----BEGIN PRIVATE KEY-----\nSECRETKEYMATERIAL\n-----END PRIVATE KEY-----\n',
  });
}

describe('certificate create', () => {
  it('stores a certificate with status Pending and unspecified source', async () => {
    const res = await app.call(
      'POST',
      '/api/v1/certificates',
      certificateBody(refs, { sans: ['alt.example.com'] }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'www',
      common_name: 'www.example.com',
      status: 'Pending',
      source: '',
      sans: ['alt.example.com'],
      renewal_policy_id: refs.policy,
    });
    expect(res.body.id).toMatch(/^mc-/);
    expect(res.body.created_at).toBe('2026-01-01T00:00:00.000Z');
    const got = await app.call('GET', `/api/v1/certificates/${res.body.id}`);
    expect(got.body).toEqual(res.body);
  });

  for (const field of ['name', 'common_name', 'renewal_policy_id', 'issuer_id', 'owner_id', 'team_id']) {
    it(`answers 400 naming ${field} when it is missing`, async () => {
      const body: Record<string, unknown> = certificateBody(refs);
      delete body[field];
      const res = await app.call('POST', '/api/v1/certificates', body);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field, message: 'is required' }]);
    });
  }

  it('refuses ids that name no record, naming each field', async () => {
    const res = await app.call(
      'POST',
      '/api/v1/certificates',
      certificateBody(refs, {
        issuer_id: 'iss-nope',
        owner_id: 'own-nope',
        team_id: 'team-nope',
        profile_id: 'prof-nope',
      }),
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_reference');
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'issuer_id',
      'owner_id',
      'profile_id',
      'team_id',
    ]);
  });

  it('refuses a renewal_policy_id that names a policy rule', async () => {
    const rule = await app.call('POST', '/api/v1/policies', { name: 'issuers', type: 'AllowedIssuers' });
    const res = await app.call(
      'POST',
      '/api/v1/certificates',
      certificateBody(refs, { renewal_policy_id: rule.body.id }),
    );
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'renewal_policy_id', message: `'${rule.body.id}' is a policy rule, not a renewal policy` },
    ]);
    await app.call('DELETE', `/api/v1/policies/${rule.body.id}`);
    const missing = await app.call(
      'POST',
      '/api/v1/certificates',
      certificateBody(refs, { renewal_policy_id: 'rp-none' }),
    );
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual([
      { field: 'renewal_policy_id', message: "renewal policy 'rp-none' does not exist" },
    ]);
  });

  it('writes nothing when the request fails', async () => {
    const before = (await app.call('GET', '/api/v1/certificates?per_page=1')).body.total;
    await app.call('POST', '/api/v1/certificates', certificateBody(refs, { team_id: 'team-missing' }));
    expect((await app.call('GET', '/api/v1/certificates?per_page=1')).body.total).toBe(before);
  });
});

describe('certificate list', () => {
  let ids: Record<string, string>;
  let other: References;

  beforeAll(async () => {
    other = await seedReferences(app, ' (other)');
    const make = async (key: string, overrides: Record<string, unknown>) =>
      [
        key,
        (await createCertificate(app, refs, { name: key, common_name: `${key}.list.test`, ...overrides })).id,
      ] as const;
    ids = Object.fromEntries(
      await Promise.all([
        make('alpha', { sans: ['shop.list.test'], source: 'EST' }),
        make('bravo', { owner_id: other.owner, team_id: other.team, source: 'API' }),
        make('charlie', { issuer_id: other.issuer, profile_id: refs.profile }),
      ]),
    );
    await addVersion(ids.alpha as string, '0a01', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z');
    await addVersion(ids.bravo as string, '0a02', '2026-01-01T00:00:00Z', '2026-06-01T00:00:00Z');
    await app.storage.certificates.update(ids.charlie as string, { status: 'Active' });
  });

  const listIds = async (query: string) => {
    const res = await app.call('GET', `/api/v1/certificates?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.data as { id: string }[])
      .map((c) => c.id)
      .filter((id) => Object.values(ids).includes(id));
  };

  it('answers the list envelope with page defaults', async () => {
    const res = await app.call('GET', '/api/v1/certificates');
    expect(res.body).toMatchObject({ page: 1, per_page: 50 });
    expect(res.body.total).toBeGreaterThanOrEqual(3);
    const paged = await app.call('GET', '/api/v1/certificates?per_page=1&page=2');
    expect(paged.body.data).toHaveLength(1);
    expect(paged.body).toMatchObject({ page: 2, per_page: 1, total: res.body.total });
  });

  it('filters by status, issuer, owner, team, profile and source', async () => {
    expect(await listIds('status=Active')).toEqual([ids.charlie]);
    expect((await listIds('status=Active,Pending')).sort()).toEqual(Object.values(ids).sort());
    expect(await listIds(`issuer_id=${other.issuer}`)).toEqual([ids.charlie]);
    expect(await listIds(`owner_id=${other.owner}`)).toEqual([ids.bravo]);
    expect(await listIds(`team_id=${other.team}`)).toEqual([ids.bravo]);
    expect(await listIds(`profile_id=${refs.profile}`)).toEqual([ids.charlie]);
    expect(await listIds('source=EST')).toEqual([ids.alpha]);
    expect(await listIds('source=')).toEqual([ids.charlie]);
  });

  it('filters on expiry of the latest version', async () => {
    expect(await listIds('expires_before=2026-03-01T00:00:00Z')).toEqual([ids.alpha]);
    expect(await listIds('expires_after=2026-03-01T00:00:00Z')).toEqual([ids.bravo]);
    expect(
      await listIds('expires_after=2026-01-15T00:00:00Z&expires_before=2026-07-01T00:00:00Z&sort=expires_at'),
    ).toEqual([ids.alpha, ids.bravo]);
  });

  it('searches name, common name and SANs case-insensitively', async () => {
    expect(await listIds('search=BRAVO')).toEqual([ids.bravo]);
    expect(await listIds('search=charlie.list')).toEqual([ids.charlie]);
    expect(await listIds('search=shop.list')).toEqual([ids.alpha]);
    expect(await listIds('search=%25')).toEqual([]);
  });

  it('sorts by a field in either direction', async () => {
    expect(await listIds('sort=name&order=asc')).toEqual([ids.alpha, ids.bravo, ids.charlie]);
    expect(await listIds('sort=name&order=desc')).toEqual([ids.charlie, ids.bravo, ids.alpha]);
  });

  it('answers 400 naming the parameter for bad filters and paging', async () => {
    for (const [query, field] of [
      ['status=Bogus', 'status.0'],
      ['page=abc', 'page'],
      ['per_page=1.5', 'per_page'],
      ['sort=serial', 'sort'],
      ['expires_before=yesterday', 'expires_before'],
      ['source=Fax', 'source'],
    ] as const) {
      const res = await app.call('GET', `/api/v1/certificates?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.errors[0].field, query).toBe(field);
    }
  });
});

describe('certificate list paging at scale: cursor and estimated totals', () => {
  let many: References;

  beforeAll(async () => {
    // 1,001 certificates of one owner: one more than the list counts exactly.
    many = await seedReferences(app, ' (many)');
    for (let i = 0; i < 1001; i++) {
      await app.storage.certificates.create({
        name: `many-${String(i).padStart(4, '0')}`,
        common_name: `many-${i}.scale.test`,
        renewal_policy_id: many.policy,
        issuer_id: many.issuer,
        owner_id: many.owner,
        team_id: many.team,
        created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 7)),
      });
    }
  });

  it('walks a list with next_cursor, page by page, exactly as page numbers would', async () => {
    const query = `owner_id=${many.owner}&sort=name&order=desc&per_page=7&search=many-09`;
    const byPage: string[] = [];
    for (let page = 1; page <= 2; page++) {
      const res = await app.call('GET', `/api/v1/certificates?${query}&page=${page}`);
      byPage.push(...res.body.data.map((c: { name: string }) => c.name));
    }
    const walked: string[] = [];
    let res = await app.call('GET', `/api/v1/certificates?${query}`);
    expect(res.body).toMatchObject({ total: 100, total_estimated: false, page: 1, per_page: 7 });
    const pages: number[] = [];
    for (;;) {
      walked.push(...res.body.data.map((c: { name: string }) => c.name));
      pages.push(res.body.page);
      expect(res.body.total).toBe(100);
      if (res.body.next_cursor === null) break;
      expect(res.body.next_cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      res = await app.call('GET', `/api/v1/certificates?${query}&cursor=${res.body.next_cursor}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    expect(walked).toHaveLength(100);
    expect(walked.slice(0, 14)).toEqual(byPage);
    expect(walked[0]).toBe('many-0999');
    expect(walked[99]).toBe('many-0900');
    expect(pages).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
  });

  it('counts exactly up to 1,000 matches and says when the total is an estimate', async () => {
    const exact = await app.call(
      'GET',
      `/api/v1/certificates?owner_id=${many.owner}&search=many-0&per_page=5`,
    );
    expect(exact.body).toMatchObject({ total: 1000, total_estimated: false });
    const res = await app.call('GET', `/api/v1/certificates?owner_id=${many.owner}&per_page=5`);
    expect(res.body.total_estimated).toBe(true);
    expect(res.body.total).toBeGreaterThanOrEqual(1001);
    expect(res.body.data).toHaveLength(5);
    // The estimate travels with the cursor instead of being made again on every page.
    const next = await app.call(
      'GET',
      `/api/v1/certificates?owner_id=${many.owner}&per_page=5&cursor=${res.body.next_cursor}`,
    );
    expect(next.body).toMatchObject({ page: 2, total: res.body.total, total_estimated: true });
    const last = await app.call('GET', `/api/v1/certificates?owner_id=${many.owner}&per_page=500&page=3`);
    expect(last.body).toMatchObject({ total: 1001, total_estimated: false, next_cursor: null });
    expect(last.body.data).toHaveLength(1);
  });

  it('answers 400 naming cursor for a cursor it did not issue or one of another query', async () => {
    const first = await app.call('GET', `/api/v1/certificates?owner_id=${many.owner}&sort=name&per_page=2`);
    const cursor = first.body.next_cursor as string;
    const body = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    const forged = (patch: Record<string, unknown>) =>
      Buffer.from(JSON.stringify({ ...body, ...patch })).toString('base64url');
    for (const [label, query, message] of [
      ['not base64url', 'cursor=%25%25%25', 'is not a cursor'],
      ['not JSON', `cursor=${Buffer.from('nope').toString('base64url')}`, 'is not a cursor'],
      ['page number 0', `cursor=${forged({ p: 0 })}`, 'is not a cursor'],
      ['id not a string', `cursor=${forged({ i: 5 })}`, 'is not a cursor'],
      ['timestamp kind on a name sort', `cursor=${forged({ t: 'd' })}`, 'is not a cursor'],
      ['other filters', `cursor=${cursor}&status=Active`, 'belongs to a list with other'],
      ['other order', `cursor=${cursor}&order=desc`, 'belongs to a list with other'],
      ['too long', `cursor=${'A'.repeat(1025)}`, ''],
    ] as const) {
      const res = await app.call(
        'GET',
        `/api/v1/certificates?owner_id=${many.owner}&sort=name&per_page=2&${query}`,
      );
      expect(res.status, label).toBe(400);
      expect(res.body.errors[0].field, label).toBe('cursor');
      expect(res.body.errors[0].message, label).toContain(message);
      expect(JSON.stringify(res.body), label).not.toMatch(/select|stack|\/work\//i);
    }
    const both = await app.call(
      'GET',
      `/api/v1/certificates?owner_id=${many.owner}&sort=name&per_page=2&page=2&cursor=${cursor}`,
    );
    expect(both.status).toBe(400);
    expect(both.body.errors[0].field).toBe('page');
    const good = await app.call(
      'GET',
      `/api/v1/certificates?owner_id=${many.owner}&sort=name&per_page=2&cursor=${cursor}`,
    );
    expect(good.body.data.map((c: { name: string }) => c.name)).toEqual(['many-0002', 'many-0003']);
  });

  it('puts certificates by status and expiring soon on the dashboard summary', async () => {
    const res = await app.call('GET', '/api/v1/dashboard/summary');
    expect(res.status).toBe(200);
    const c = res.body.certificates;
    expect(c.by_status.Pending).toBeGreaterThanOrEqual(1001);
    expect(c.estimated).toBe(true);
    expect(c.expiring_soon_days).toBe(30);
    expect(c.total).toBe(Object.values(c.by_status as Record<string, number>).reduce((a, b) => a + b, 0));
    expect(Object.keys(c.by_status).sort()).toEqual(
      [
        'Active',
        'Archived',
        'Expired',
        'Expiring',
        'Failed',
        'Pending',
        'Revoked',
        'RenewalInProgress',
      ].sort(),
    );
  });
});

describe('certificate update, archive, delete, versions', () => {
  it('updates fields, keeps the others, and checks references', async () => {
    const cert = await createCertificate(app, refs, { name: 'to-update', environment: 'staging' });
    const res = await app.call('PUT', `/api/v1/certificates/${cert.id}`, { name: 'updated', tags: ['web'] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'updated',
      tags: ['web'],
      environment: 'staging',
      common_name: 'www.example.com',
    });
    const bad = await app.call('PUT', `/api/v1/certificates/${cert.id}`, { owner_id: 'own-ghost' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ field: 'owner_id', message: "owner 'own-ghost' does not exist" }]);
    expect((await app.call('GET', `/api/v1/certificates/${cert.id}`)).body.owner_id).toBe(refs.owner);
    const missing = await app.call('PUT', '/api/v1/certificates/mc-ghost', { name: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain("certificate 'mc-ghost'");
  });

  it('archives a certificate', async () => {
    const cert = await createCertificate(app, refs, { name: 'to-archive' });
    const res = await app.call('POST', `/api/v1/certificates/${cert.id}/archive`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('Archived');
  });

  it('deletes a never-issued certificate and refuses one with versions', async () => {
    const fresh = await createCertificate(app, refs, { name: 'to-delete' });
    expect((await app.call('DELETE', `/api/v1/certificates/${fresh.id}`)).status).toBe(204);
    expect((await app.call('GET', `/api/v1/certificates/${fresh.id}`)).status).toBe(404);
    const issued = await createCertificate(app, refs, { name: 'issued' });
    await addVersion(issued.id, '0b01', '2026-01-01T00:00:00Z', '2026-04-01T00:00:00Z');
    const res = await app.call('DELETE', `/api/v1/certificates/${issued.id}`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain(`certificate '${issued.id}'`);
    expect(res.body.references).toEqual({ versions: 1 });
  });

  it('lists versions and answers the latest key data without the private key', async () => {
    const cert = await createCertificate(app, refs, { name: 'versioned' });
    const none = await app.call('GET', `/api/v1/certificates/${cert.id}/key-data`);
    expect(none.status).toBe(404);
    expect(none.body.detail).toContain('no issued version');
    await addVersion(cert.id, '0c01', '2026-01-01T00:00:00Z', '2026-03-01T00:00:00Z');
    const v2 = await addVersion(cert.id, '0c02', '2026-02-01T00:00:00Z', '2026-05-01T00:00:00Z');
    const versions = await app.call('GET', `/api/v1/certificates/${cert.id}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body.total).toBe(2);
    expect(JSON.stringify(versions.body)).not.toContain('SECRETKEYMATERIAL');
    const key = await app.call('GET', `/api/v1/certificates/${cert.id}/key-data`);
    expect(key.body).toEqual({
      certificate_id: cert.id,
      version_id: v2.id,
      serial_number: '0c02',
      fingerprint_sha256: '0c02'.padStart(64, '0'),
      key_algorithm: 'ECDSA',
      key_size: 256,
      issued_at: '2026-02-01T00:00:00.000Z',
      not_before: '2026-02-01T00:00:00.000Z',
      not_after: '2026-05-01T00:00:00.000Z',
      csr_pem: expect.stringContaining('CERTIFICATE REQUEST'),
    });
    expect((await app.call('GET', `/api/v1/certificates/${cert.id}`)).body.expires_at).toBe(
      '2026-05-01T00:00:00.000Z',
    );
  });

  it('revokes one certificate and its versions, once', async () => {
    const cert = await createCertificate(app, refs, { name: 'single-revoke' });
    const v = await addVersion(cert.id, '0d01', '2026-01-01T00:00:00Z', '2026-03-01T00:00:00Z');
    const res = await app.call('POST', `/api/v1/certificates/${cert.id}/revoke`, { reason: 'keyCompromise' });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('Revoked');
    expect(await app.storage.versions.get(v.id)).toMatchObject({ revocation_reason: 'keyCompromise' });
    expect((await app.call('POST', `/api/v1/certificates/${cert.id}/revoke`, {})).status).toBe(409);
    const bad = await app.call('POST', `/api/v1/certificates/${cert.id}/revoke`, { reason: 'bored' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('reason');
  });
});
