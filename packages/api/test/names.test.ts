import { DEFAULT_TENANT_ID } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CSRF_HEADER, csrfTokenFor, SESSION_COOKIE } from '../src/index.js';
import { createCertificate, seedReferences } from './support/inventory-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
}, 180_000);
afterAll(() => app.close());

/** A signed-in user holding `roles`, as the console calls with the session cookie. */
async function browserOf(roles: string[], subject: string) {
  const user = await app.storage.users.create({
    tenant_id: DEFAULT_TENANT_ID,
    subject,
    provider_id: null,
    display_name: `User ${subject}`,
  });
  await app.storage.roles.setRolesOf(user.id, roles);
  const { token } = await app.services.sessions.start(user, {
    auth_method: 'oidc',
    user_agent: 'test',
    ip_address: '192.0.2.1',
  });
  return {
    user,
    options: {
      token: null,
      headers: {
        cookie: `${SESSION_COOKIE}=${token}`,
        'user-agent': 'test',
        [CSRF_HEADER]: csrfTokenFor(token),
      },
    },
  };
}

describe('GET /api/v1/names', () => {
  it('answers the names of a page of certificates’ issuers, owners and teams in one request, unknown ids left out', async () => {
    const refs = await seedReferences(app, ' names-1');
    const cert = await createCertificate(app, refs, { name: 'names-one' });
    const spy = vi.spyOn(app.storage.names, 'namesOf');
    const reply = await app.call(
      'GET',
      `/api/v1/names?issuer=${refs.issuer}&owner=${refs.owner},no-such-owner&team=${refs.team}&certificate=${cert.id}`,
    );
    expect(reply.status).toBe(200);
    const issuer = (await app.call('GET', `/api/v1/issuers/${refs.issuer}`)).body;
    const owner = (await app.call('GET', `/api/v1/owners/${refs.owner}`)).body;
    const team = (await app.call('GET', `/api/v1/teams/${refs.team}`)).body;
    expect(reply.body).toEqual({
      names: {
        certificate: { [cert.id]: 'names-one' },
        issuer: { [refs.issuer]: issuer.name },
        owner: { [refs.owner]: owner.name },
        team: { [refs.team]: team.name },
      },
      withheld: [],
    });
    // One storage read per kind, whatever the number of ids.
    expect(spy).toHaveBeenCalledTimes(4);
    spy.mockRestore();
  });

  it("withholds the kinds the caller may not read, and answers users' names only to those who may read users", async () => {
    const refs = await seedReferences(app, ' names-2');
    const viewer = await browserOf(['viewer'], 'names-viewer');
    const asViewer = await app.call(
      'GET',
      `/api/v1/names?owner=${refs.owner}&user=${viewer.user.id}&webhook=wh-x`,
      undefined,
      viewer.options,
    );
    expect(asViewer.status).toBe(200);
    expect(Object.keys(asViewer.body.names)).toEqual(['owner']);
    expect(asViewer.body.withheld.sort()).toEqual(['user', 'webhook']);
    const asAdmin = await app.call('GET', `/api/v1/names?user=${viewer.user.id}`);
    expect(asAdmin.body.names.user).toEqual({ [viewer.user.id]: 'User names-viewer' });
  });

  it('refuses an unknown kind, a malformed id and more than 100 ids of a kind with 400 naming the field, reading nothing', async () => {
    const spy = vi.spyOn(app.storage.names, 'namesOf');
    const unknown = await app.call('GET', '/api/v1/names?secret=a');
    expect(unknown.status).toBe(400);
    const bad = await app.call('GET', '/api/v1/names?owner=a%2Fb');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toMatch(/^owner/);
    const many = Array.from({ length: 101 }, (_, i) => `own-${i}`).join(',');
    const tooMany = await app.call('GET', `/api/v1/names?owner=${many}`);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errors).toEqual([{ field: 'owner', message: 'at most 100 ids' }]);
    const kinds = ['issuer', 'owner', 'team', 'agent', 'target', 'certificate'];
    const ids = (k: string) => Array.from({ length: 90 }, (_, i) => `${k}-${i}`).join(',');
    const overall = await app.call('GET', `/api/v1/names?${kinds.map((k) => `${k}=${ids(k)}`).join('&')}`);
    expect(overall.status).toBe(400);
    expect(overall.body.errors).toEqual([{ field: 'query', message: 'at most 500 ids in all' }]);
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });
});
