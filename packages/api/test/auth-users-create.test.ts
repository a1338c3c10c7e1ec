import { DEFAULT_TENANT_ID } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
}, 180_000);
afterAll(() => app.close());

const provider = () =>
  app.storage.oidcProviders.create({
    tenant_id: DEFAULT_TENANT_ID,
    name: `Corp IdP ${Math.random()}`,
    issuer: 'https://idp.example.test',
    client_id: 'certwright',
    scopes: ['openid', 'email'],
    groups_claim: 'groups',
    email_claim: 'email',
    name_claim: 'name',
    redirect_uri: 'https://cw.example.test/auth/oidc/callback',
    post_login_url: '/',
    enabled: true,
  });

describe('POST /api/v1/auth/users', () => {
  it('creates an OIDC user ahead of their first sign-in, whose roles apply when they sign in', async () => {
    const idp = await provider();
    const created = await app.call('POST', '/api/v1/auth/users', {
      provider_id: idp.id,
      subject: 'carol',
      email: 'carol@example.test',
      display_name: 'Carol Operator',
      roles: ['operator'],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      subject: 'carol',
      provider_id: idp.id,
      display_name: 'Carol Operator',
    });
    expect((await app.call('GET', `/api/v1/auth/users/${created.body.id}/roles`)).body.roles).toEqual([
      'operator',
    ]);
    // The first sign-in finds this user, so the roles given here are theirs.
    const signedIn = await app.services.people.userForSignIn(idp, {
      subject: 'carol',
      email: 'carol@example.test',
      display_name: 'Carol Operator',
    });
    expect(signedIn.id).toBe(created.body.id);
    expect((await app.services.people.permissionsOf(signedIn, idp.id, [])).has('cert.write')).toBe(true);
    const audit = await app.storage.audit.list({ resource_id: created.body.id });
    expect(audit.items.map((e) => e.action)).toContain('user_create');
  });

  it('names the field of every refusal and stores nothing', async () => {
    const idp = await provider();
    const spy = vi.spyOn(app.storage.users, 'create');
    const unknownRole = await app.call('POST', '/api/v1/auth/users', { subject: 'dave', roles: ['nope'] });
    expect([unknownRole.status, unknownRole.body.errors]).toEqual([
      400,
      [{ field: 'roles', message: "unknown role 'nope'" }],
    ]);
    const unknownProvider = await app.call('POST', '/api/v1/auth/users', {
      subject: 'dave',
      provider_id: 'oidc-x',
    });
    expect([unknownProvider.status, unknownProvider.body.errors[0].field]).toEqual([400, 'provider_id']);
    const badEmail = await app.call('POST', '/api/v1/auth/users', { subject: 'dave', email: 'not-mail' });
    expect([badEmail.status, badEmail.body.errors[0].field]).toEqual([400, 'email']);
    const demo = await app.call('POST', '/api/v1/auth/users', { subject: 'demo:admin' });
    expect([demo.status, demo.body.errors[0].field]).toEqual([400, 'subject']);
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
    expect(
      (await app.call('POST', '/api/v1/auth/users', { subject: 'erin', provider_id: idp.id })).status,
    ).toBe(201);
    const again = await app.call('POST', '/api/v1/auth/users', { subject: 'erin', provider_id: idp.id });
    expect([again.status, again.body.errors]).toEqual([
      409,
      [{ field: 'subject', message: `taken at provider '${idp.id}'` }],
    ]);
    // The same subject as a local user is another user.
    expect((await app.call('POST', '/api/v1/auth/users', { subject: 'erin' })).status).toBe(201);
  });
});
