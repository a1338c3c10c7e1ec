import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.js';

const DAY = 86_400_000;
let app: TestApp;
beforeAll(async () => {
  app = await createTestApp({ clock: { now: () => new Date() } });
}, 180_000);
afterAll(() => app.close());

describe('Local CA settings', () => {
  it('generates the root and the issuing CA with the validity and key algorithm asked for', async () => {
    const created = await app.call('POST', '/api/v1/issuers', {
      name: 'Short-lived CA',
      type: 'Local',
      config: { key_algorithm: 'ECDSA-P384', root_validity_days: 400, issuing_validity_days: 200 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const chain = (await app.call('GET', `/api/v1/issuers/${created.body.id}/chain/details`)).body.chain;
    const [issuing, root] = chain;
    const days = (c: { not_before: string; not_after: string }) =>
      Math.round((Date.parse(c.not_after) - Date.parse(c.not_before)) / DAY);
    expect([days(issuing), days(root)]).toEqual([200, 400]);
    expect(issuing.public_key).toMatchObject({ algorithm: 'EC', curve: 'P-384' });
    // Once the CA exists the validity is a creation-time setting: changing it is refused.
    const changed = await app.call('PUT', `/api/v1/issuers/${created.body.id}`, {
      config: { key_algorithm: 'ECDSA-P384', root_validity_days: 400, issuing_validity_days: 100 },
    });
    expect(changed.status).toBe(400);
    expect(changed.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'config.issuing_validity_days',
    ]);
  });

  it('refuses settings it cannot use when they are given, naming config.<key>, and stores nothing', async () => {
    const spy = vi.spyOn(app.storage.issuers, 'create');
    const outlives = await app.call('POST', '/api/v1/issuers', {
      name: 'Outliving CA',
      type: 'Local',
      config: { root_validity_days: 365, issuing_validity_days: 730 },
    });
    expect([outlives.status, outlives.body.errors]).toEqual([
      400,
      [
        {
          field: 'config.issuing_validity_days',
          message: "730 days would outlive the root's 365; at most 365",
        },
      ],
    ]);
    const bad = await app.call('POST', '/api/v1/issuers', {
      name: 'Bad CA',
      type: 'Local',
      config: { key_algorithm: 'DSA-1024', root_validity_days: 0 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'config.key_algorithm',
      'config.root_validity_days',
    ]);
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });
});
