import { createServices, MemoryEphemeralStore, type Services, silentLogger } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type CertwrightHandler, createHandler, SESSION_COOKIE } from '../src/index.js';
import { conformance } from './support/openapi-conformance.js';
import { createTestApp, TEST_API_KEY, type TestApp } from './support/test-app.js';

const UA = 'Mozilla/5.0 (operator laptop)';
const PASSWORD = 'correct horse battery staple';

describe('break-glass disabled', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp();
  }, 180_000);
  afterAll(() => app.close());

  it('answers 404 on its admin routes and its login', async () => {
    expect((await app.call('GET', '/api/v1/auth/breakglass/credentials')).status).toBe(404);
    expect(
      (await app.call('POST', '/api/v1/auth/breakglass/credentials', { actor_id: 'ops', password: PASSWORD }))
        .status,
    ).toBe(404);
    expect((await app.call('POST', '/api/v1/auth/breakglass/credentials/ops/unlock')).status).toBe(404);
    expect((await app.call('DELETE', '/api/v1/auth/breakglass/credentials/ops')).status).toBe(404);
    const login = await app.call(
      'POST',
      '/auth/breakglass/login',
      { actor_id: 'ops', password: PASSWORD },
      { token: null },
    );
    expect(login.status).toBe(404);
  });
});

describe('break-glass enabled', () => {
  const shared = new MemoryEphemeralStore();
  let app: TestApp;
  let second: CertwrightHandler;
  let secondServices: Services;
  const settings = { enabled: true, lockoutThreshold: 3, lockoutMs: 15 * 60_000 };

  beforeAll(async () => {
    app = await createTestApp({ deps: { ephemeral: shared }, services: { breakglass: settings } });
    // A second instance on the same database and the same shared store (Redis in production).
    secondServices = createServices(
      { storage: app.storage, clock: app.clock, logger: silentLogger, ephemeral: shared },
      { breakglass: settings },
    );
    second = createHandler({
      auth: { type: 'api-key', secret: TEST_API_KEY },
      services: secondServices,
      ephemeral: new MemoryEphemeralStore(),
      ...conformance.options(),
    });
  }, 180_000);
  afterAll(() => app.close());

  const login = (actor_id: string, password: string, handler?: CertwrightHandler) =>
    handler
      ? conformance.call(
          handler,
          new Request('https://localhost:8443/auth/breakglass/login', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'user-agent': UA },
            body: JSON.stringify({ actor_id, password }),
          }),
          { remoteAddress: '127.0.0.1' },
        )
      : app.call(
          'POST',
          '/auth/breakglass/login',
          { actor_id, password },
          { token: null, headers: { 'user-agent': UA } },
        );

  it('sets a password (write-only), lists credentials without hashes', async () => {
    const set = await app.call('POST', '/api/v1/auth/breakglass/credentials', {
      actor_id: 'ops',
      password: PASSWORD,
    });
    expect(set.status).toBe(200);
    expect(Object.keys(set.body).sort()).toEqual(['actor_id', 'created_at']);
    const list = await app.call('GET', '/api/v1/auth/breakglass/credentials');
    expect(list.body.data).toHaveLength(1);
    expect(Object.keys(list.body.data[0]).sort()).toEqual(
      ['actor_id', 'created_at', 'last_used_at', 'locked', 'updated_at', 'user_id'].sort(),
    );
    expect(JSON.stringify(list.body)).not.toMatch(/scrypt|correct horse/);
    const short = await app.call('POST', '/api/v1/auth/breakglass/credentials', {
      actor_id: 'ops2',
      password: 'short',
    });
    expect(short.status).toBe(400);
    expect(short.body.errors[0].field).toBe('password');
  });

  it('signs an operator in while no identity provider is involved; the session is an admin one', async () => {
    const res = await login('ops', PASSWORD);
    expect(res.status).toBe(204);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(cookie).toMatch(/HttpOnly/);
    const token = cookie.split(';')[0]!.split('=')[1]!;
    const inside = await app.call('GET', '/api/v1/issuers', undefined, {
      token: null,
      headers: { cookie: `${SESSION_COOKIE}=${token}`, 'user-agent': UA },
    });
    expect(inside.status).toBe(200);
    const listed = await app.call('GET', '/api/v1/auth/breakglass/credentials');
    expect(listed.body.data[0].last_used_at).not.toBeNull();
  });

  it('answers unknown actors and wrong passwords alike', async () => {
    const unknown = await login('nobody', PASSWORD);
    const wrong = await login('ops', 'wrong password, long enough');
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    const strip = (b: Record<string, unknown>) => ({ ...b, request_id: undefined });
    expect(strip(unknown.body)).toEqual(strip(wrong.body));
    await app.call('POST', '/api/v1/auth/breakglass/credentials/ops/unlock');
  });

  it('locks an actor out after the threshold across instances, until an administrator unlocks', async () => {
    const spy = vi.spyOn(secondServices.sessions, 'start');
    await login('ops', 'wrong password number 1');
    await login('ops', 'wrong password number 2', second);
    await login('ops', 'wrong password number 3');
    // The right password on the other instance: still locked.
    expect((await login('ops', PASSWORD, second)).status).toBe(401);
    expect(spy).not.toHaveBeenCalled();
    const listed = await app.call('GET', '/api/v1/auth/breakglass/credentials');
    expect(listed.body.data[0].locked).toBe(true);
    const lockouts = await app.storage.audit.list({ action: 'breakglass_lockout', perPage: 10 });
    expect(lockouts.items[0]?.category).toBe('auth');
    expect((await app.call('POST', '/api/v1/auth/breakglass/credentials/ops/unlock')).status).toBe(204);
    expect((await login('ops', PASSWORD, second)).status).toBe(204);
    expect((await app.call('POST', '/api/v1/auth/breakglass/credentials/ghost/unlock')).status).toBe(404);
    spy.mockRestore();
  });

  it('removes a credential; its actor cannot sign in any more', async () => {
    expect((await app.call('DELETE', '/api/v1/auth/breakglass/credentials/ops')).status).toBe(204);
    expect((await login('ops', PASSWORD)).status).toBe(401);
  });
});
