import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * A write-only secret stays with the origin (scheme, host, port) it was given for: a write that
 * moves the destination elsewhere must give the secret again (docs/security.md, "Secrets").
 * Webhook header values are proven with real receivers in webhooks.test.ts; these objects keep
 * a secret next to a URL too. Nothing here connects anywhere: the writes are refused or stored
 * before any discovery or delivery.
 */
describe('write-only secrets follow their destination', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp();
  }, 180_000);
  afterAll(() => app?.close());

  const PROVIDERS = '/api/v1/auth/oidc/providers';

  it("an OIDC provider's client secret: a new issuer origin needs it again, a new path does not", async () => {
    const created = await app.call('POST', PROVIDERS, {
      id: 'bound',
      name: 'Bound IdP',
      issuer: 'https://idp.example.test/realms/a',
      client_id: 'cw',
      client_secret: 'the-stored-client-secret',
      redirect_uri: 'https://cw.example.test/auth/oidc/callback',
    });
    expect(created.status).toBe(201);
    for (const issuer of [
      'https://collector.example.test/realms/a',
      'https://idp.example.test:8443/realms/a',
      'https://idp.example.test.collector.test/realms/a',
    ]) {
      const moved = await app.call('PUT', `${PROVIDERS}/bound`, { issuer });
      expect(moved.status, issuer).toBe(400);
      expect(moved.body.errors).toEqual([
        { field: 'client_secret', message: expect.stringMatching(/again/) },
      ]);
    }
    expect((await app.storage.oidcProviders.getWithSecret('bound'))?.issuer).toBe(
      'https://idp.example.test/realms/a',
    );
    // Same origin, other realm; the default port spelled out is the same origin too.
    const realm = await app.call('PUT', `${PROVIDERS}/bound`, {
      issuer: 'https://IDP.example.test:443/realms/b',
    });
    expect(realm.status).toBe(200);
    const given = await app.call('PUT', `${PROVIDERS}/bound`, {
      issuer: 'https://idp2.example.test/',
      client_secret: 'a-secret-for-the-new-issuer',
    });
    expect(given.status).toBe(200);
    expect((await app.storage.oidcProviders.getWithSecret('bound'))?.client_secret).toBe(
      'a-secret-for-the-new-issuer',
    );
    // Removing the secret while moving is fine: nothing stored goes anywhere.
    const removed = await app.call('PUT', `${PROVIDERS}/bound`, {
      issuer: 'https://idp3.example.test/',
      client_secret: null,
    });
    expect(removed.status).toBe(200);
    expect(removed.body.client_secret_set).toBe(false);
    expect(
      (await app.call('PUT', `${PROVIDERS}/bound`, { issuer: 'https://idp4.example.test/' })).status,
    ).toBe(200);
  });

  it("an ACME issuer's EAB key: a config that moves the directory carries only the keys it gives", async () => {
    const created = await app.call('POST', '/api/v1/issuers', {
      name: 'bound acme',
      type: 'ACME',
      config: {
        directory_url: 'https://acme.example.test/directory',
        eab_kid: 'kid-1',
        eab_hmac_key: 'c3RvcmVkLWhtYWMta2V5LWJ5dGVz',
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // A config replaces every caller-set key: the stored HMAC key never follows a new directory.
    const moved = await app.call('PUT', `/api/v1/issuers/${id}`, {
      config: { directory_url: 'https://collector.example.test/directory' },
    });
    expect(moved.status).toBe(200);
    const stored = await app.storage.issuers.getWithConfig(id);
    expect(stored?.config).toEqual({ directory_url: 'https://collector.example.test/directory' });
    // Half an external account binding (the kid without its key) is refused, not completed from storage.
    const half = await app.call('PUT', `/api/v1/issuers/${id}`, {
      config: { directory_url: 'https://acme.example.test/directory', eab_kid: 'kid-1' },
    });
    expect(half.status).toBe(400);
    expect(half.body.errors[0].field).toBe('config.eab_hmac_key');
  });
});
