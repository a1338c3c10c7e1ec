import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.js';

describe('auth runtime config and demo residue', () => {
  let app: TestApp;
  let demo: TestApp;
  beforeAll(async () => {
    app = await createTestApp({
      services: { sessions: { idleTimeoutMs: 600_000 }, breakglass: { enabled: true } },
      handler: { runtime: { trustedProxies: ['10.0.0.0/8'] } },
    });
    demo = await createTestApp({ handler: { runtime: { demoSeeded: true, demoModeAck: true } } });
  }, 180_000);
  afterAll(async () => {
    await app.close();
    await demo.close();
  });

  it('reports the auth settings in force, without secrets', async () => {
    await app.call('POST', '/api/v1/auth/oidc/providers', {
      name: 'corp',
      issuer: 'https://idp.example.test',
      client_id: 'cw',
      client_secret: 'super-secret-client-value',
      redirect_uri: 'https://cw.example.test/auth/oidc/callback',
    });
    const res = await app.call('GET', '/api/v1/auth/runtime-config');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      auth_type: 'api-key',
      sessions: { idle_timeout_seconds: 600, absolute_timeout_seconds: 43_200, bind_user_agent: true },
      oidc: { prelogin_require_ua: true, prelogin_require_ip: false, bcl_max_age_seconds: 300, providers: 1 },
      breakglass: { enabled: true, lockout_threshold: 5, lockout_duration_seconds: 900 },
      trusted_proxies: ['10.0.0.0/8'],
      demo: { seeded: false, mode_acknowledged: false },
    });
    expect(JSON.stringify(res.body)).not.toMatch(/super-secret|test-api-key/);
  });

  it('removes the demo users and what hangs on them, and is 503 while in demo mode', async () => {
    const seeded = await app.services.people.seedDemo();
    expect(seeded.map((u) => u.subject).sort()).toEqual([
      'demo:admin',
      'demo:auditor',
      'demo:operator',
      'demo:viewer',
    ]);
    expect(await app.services.people.seedDemo()).toEqual([]);
    const keep = await app.storage.users.create({
      tenant_id: 'default',
      subject: 'demo-like-but-real',
      provider_id: null,
    });
    const { session } = await app.services.sessions.start(seeded[0]!, { auth_method: 'bootstrap' });
    const cleaned = await app.call('POST', '/api/v1/auth/demo-residual/cleanup');
    expect(cleaned.status).toBe(200);
    expect(cleaned.body).toEqual({ removed: 4 });
    expect(await app.storage.sessions.get(session.id)).toBeNull();
    expect(await app.storage.users.get(keep.id)).not.toBeNull();
    expect((await app.call('POST', '/api/v1/auth/demo-residual/cleanup')).body).toEqual({ removed: 0 });

    await demo.services.people.seedDemo();
    const refused = await demo.call('POST', '/api/v1/auth/demo-residual/cleanup');
    expect(refused.status).toBe(503);
    expect((await demo.storage.users.list({ tenant_id: 'default' })).total).toBe(4);
  });
});
