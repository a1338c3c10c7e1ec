import { type AuditEvent, type AuthUser, DEFAULT_TENANT_ID, MemoryEphemeralStore } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PRELOGIN_COOKIE } from '../src/auth/oidc.js';
import { CSRF_HEADER, csrfTokenFor, SESSION_COOKIE } from '../src/index.js';
import { type CallResult, createTestApp, TEST_API_KEY, type TestApp } from './support/test-app.js';

/**
 * The authentication, session, OIDC, break-glass and permission failures of
 * docs/auth/failures.md, one test per row: the status, the body's shape, the audit events it
 * leaves (category `auth` where the table says so, none otherwise) and that nothing else
 * changed (users, roles, sessions, credentials, providers, mappings).
 */

const UA = 'Mozilla/5.0 (failure table)';
const PASSWORD = 'a break-glass password of some length';

/** What a failure must leave as it was. */
async function state(app: TestApp) {
  const users = await app.storage.users.list({ tenant_id: DEFAULT_TENANT_ID, perPage: 500 });
  const sessions = await app.storage.sessions.list({ perPage: 500 });
  return {
    users: await Promise.all(
      users.items.map(async (u) => ({
        id: u.id,
        deactivated_at: u.deactivated_at,
        roles: await app.storage.roles.rolesOf(u.id),
      })),
    ),
    sessions: sessions.items.map((s) => s.id).sort(),
    // A lockout is what some failures are for: it is asserted where expected, not here.
    credentials: (await app.storage.breakglass.list()).map(({ locked_until: _, ...c }) => c),
    providers: await app.storage.oidcProviders.list(),
    mappings: await app.storage.oidcGroupMappings.list(DEFAULT_TENANT_ID),
    owners: (await app.storage.owners.list({ perPage: 500 })).total,
  };
}

async function auditEvents(app: TestApp): Promise<AuditEvent[]> {
  return (await app.storage.audit.list({ perPage: 1000 })).items;
}

/** Runs `failure`, and answers the audit events it added after checking nothing else changed. */
async function unchangedBut(app: TestApp, failure: () => Promise<void>): Promise<AuditEvent[]> {
  const before = await state(app);
  const seen = new Set((await auditEvents(app)).map((e) => e.seq));
  await failure();
  expect(await state(app)).toEqual(before);
  return (await auditEvents(app)).filter((e) => !seen.has(e.seq)).sort((a, b) => a.seq - b.seq);
}

function expectProblem(res: CallResult, status: number, error: string, detail?: string | RegExp): void {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, error, type: `urn:certwright:error:${error}` });
  expect(typeof res.body.request_id).toBe('string');
  if (typeof detail === 'string') expect(res.body.detail).toBe(detail);
  else if (detail) expect(res.body.detail).toMatch(detail);
  expect(JSON.stringify(res.body)).not.toMatch(/at .+\.(ts|js):\d+|select |insert |\/work\/|node_modules/i);
}

const withoutRequestId = (body: Record<string, unknown>) => ({ ...body, request_id: undefined });

let counter = 0;
async function user(app: TestApp, roles: string[]): Promise<AuthUser> {
  counter += 1;
  const created = await app.storage.users.create({
    tenant_id: DEFAULT_TENANT_ID,
    subject: `failure-user-${counter}`,
    provider_id: null,
  });
  await app.storage.roles.setRolesOf(created.id, roles);
  return created;
}

async function signIn(app: TestApp, u: AuthUser): Promise<string> {
  const { token } = await app.services.sessions.start(u, { auth_method: 'oidc', user_agent: UA });
  return token;
}

function browser(token: string, options: { csrf?: boolean; ua?: string } = {}) {
  return {
    token: null,
    headers: {
      cookie: `${SESSION_COOKIE}=${token}`,
      'user-agent': options.ua ?? UA,
      ...(options.csrf === false ? {} : { [CSRF_HEADER]: csrfTokenFor(token) }),
    },
  };
}

describe('authentication failures', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp({
      services: { breakglass: { enabled: true, lockoutThreshold: 2, lockoutMs: 60_000 } },
      handler: { ephemeral: new MemoryEphemeralStore(), rateLimits: { public: 0 } },
    });
  }, 180_000);
  afterAll(() => app?.close());

  it('no credentials, a wrong API key or a dead session cookie: the same 401, nothing audited', async () => {
    const viewer = await user(app, ['viewer']);
    const ended = await signIn(app, viewer);
    await app.services.sessions.logout(ended);
    const added = await unchangedBut(app, async () => {
      const none = await app.call('GET', '/api/v1/owners', undefined, { token: null });
      expectProblem(none, 401, 'unauthorized', 'a valid API key is required');
      expect(none.headers.get('www-authenticate')).toBe('Bearer');
      const wrong = await app.call('GET', '/api/v1/owners', undefined, { token: `${TEST_API_KEY}x` });
      const dead = await app.call('GET', '/api/v1/owners', undefined, browser(ended));
      const unknown = await app.call('GET', '/api/v1/owners', undefined, browser('not-a-session-token'));
      for (const res of [wrong, dead, unknown]) {
        expectProblem(res, 401, 'unauthorized');
        expect(withoutRequestId(res.body)).toEqual(withoutRequestId(none.body));
      }
    });
    expect(added).toEqual([]);
  });

  it('a session cookie from another user agent: 401, and the session stays for its own browser', async () => {
    const viewer = await user(app, ['viewer']);
    const token = await signIn(app, viewer);
    const added = await unchangedBut(app, async () => {
      expectProblem(
        await app.call('GET', '/api/v1/owners', undefined, browser(token, { ua: 'curl/8.0' })),
        401,
        'unauthorized',
      );
    });
    expect(added).toEqual([]);
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(token))).status).toBe(200);
  });

  it('a cookie-authenticated change without the CSRF header: 403, the service not called', async () => {
    const operator = await user(app, ['operator']);
    const token = await signIn(app, operator);
    const spy = vi.spyOn(app.services.owners, 'create');
    const added = await unchangedBut(app, async () => {
      expectProblem(
        await app.call('POST', '/api/v1/owners', { name: 'csrf' }, browser(token, { csrf: false })),
        403,
        'forbidden',
        'a cookie-authenticated change needs the X-CSRF-Token header',
      );
      const forged = browser(token);
      forged.headers[CSRF_HEADER] = csrfTokenFor('another-session-token');
      expectProblem(await app.call('POST', '/api/v1/owners', { name: 'csrf' }, forged), 403, 'forbidden');
    });
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
    expect(added).toEqual([]);
  });

  it('an admin-only route without the permission: 403 naming it, the service not called', async () => {
    const operator = await user(app, ['operator']);
    const token = await signIn(app, operator);
    const spies = [
      vi.spyOn(app.services.breakglass, 'setPassword'),
      vi.spyOn(app.services.people, 'deactivate'),
      vi.spyOn(app.services.people, 'cleanupDemoResidue'),
    ];
    const target = await user(app, ['viewer']);
    const added = await unchangedBut(app, async () => {
      const cases: [string, string, unknown, string][] = [
        [
          'POST',
          '/api/v1/auth/breakglass/credentials',
          { actor_id: 'x', password: PASSWORD },
          'auth.breakglass.admin',
        ],
        ['DELETE', `/api/v1/auth/users/${target.id}`, undefined, 'auth.user.deactivate'],
        ['POST', '/api/v1/auth/demo-residual/cleanup', undefined, 'auth.role.assign'],
        ['GET', '/api/v1/auth/runtime-config', undefined, 'auth.role.assign'],
        [
          'POST',
          '/api/v1/auth/oidc/providers',
          {
            name: 'x',
            issuer: 'https://idp.example.test',
            client_id: 'c',
            redirect_uri: 'https://cw.example.test/auth/oidc/callback',
          },
          'auth.oidc.create',
        ],
        ['GET', '/api/v1/admin/est/profiles', undefined, 'admin.est.read'],
        [
          'POST',
          '/api/v1/est/certificates/bulk-revoke',
          { criteria: { ids: ['c-1'] }, reason: 'keyCompromise' },
          'cert.revoke',
        ],
      ];
      for (const [method, path, body, permission] of cases) {
        expectProblem(
          await app.call(method, path, body, browser(token)),
          403,
          'forbidden',
          `this operation requires the permission ${permission}`,
        );
      }
    });
    for (const spy of spies) {
      expect(spy).not.toHaveBeenCalled();
      spy.mockRestore();
    }
    expect(added).toEqual([]);
  });

  it('an agent key outside the agent routes: 403', async () => {
    const agent = await app.call('POST', '/api/v1/agents', {
      name: 'failure-agent',
      hostname: 'a.example.test',
    });
    expect(agent.status).toBe(201);
    const added = await unchangedBut(app, async () => {
      expectProblem(
        await app.call('GET', '/api/v1/auth/users', undefined, { token: agent.body.api_key }),
        403,
        'forbidden',
        'agent keys may call only agent routes',
      );
    });
    expect(added).toEqual([]);
  });
});

describe('session failures', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp({ handler: { ephemeral: new MemoryEphemeralStore() } });
  }, 180_000);
  afterAll(() => app?.close());

  it("revoking another user's session without auth.session.list.all: 404, the session lives", async () => {
    const a = await user(app, ['viewer']);
    const b = await user(app, ['viewer']);
    const tokenA = await signIn(app, a);
    await signIn(app, b);
    const [other] = (await app.storage.sessions.list({ user_id: b.id })).items;
    const added = await unchangedBut(app, async () => {
      expectProblem(
        await app.call('DELETE', `/api/v1/auth/sessions/${other!.id}`, undefined, browser(tokenA)),
        404,
        'not_found',
      );
    });
    expect(added).toEqual([]);
  });

  it('deactivating your own user: 409, still active, sessions kept, nothing audited', async () => {
    const admin = await user(app, ['admin']);
    const token = await signIn(app, admin);
    const added = await unchangedBut(app, async () => {
      expectProblem(
        await app.call('DELETE', `/api/v1/auth/users/${admin.id}`, undefined, browser(token)),
        409,
        'conflict',
        'you cannot deactivate your own user',
      );
    });
    expect(added).toEqual([]);
    expect((await app.call('GET', '/api/v1/auth/users', undefined, browser(token))).status).toBe(200);
  });

  it('deactivating or reactivating an unknown user: 404', async () => {
    const added = await unchangedBut(app, async () => {
      expectProblem(await app.call('DELETE', '/api/v1/auth/users/usr-nobody'), 404, 'not_found');
      expectProblem(await app.call('POST', '/api/v1/auth/users/usr-nobody/reactivate'), 404, 'not_found');
    });
    expect(added).toEqual([]);
  });
});

describe('break-glass failures', () => {
  let enabled: TestApp;
  let disabled: TestApp;
  beforeAll(async () => {
    enabled = await createTestApp({
      services: { breakglass: { enabled: true, lockoutThreshold: 2, lockoutMs: 60_000 } },
      handler: { ephemeral: new MemoryEphemeralStore(), rateLimits: { public: 0 } },
    });
    disabled = await createTestApp({ handler: { ephemeral: new MemoryEphemeralStore() } });
    const set = await enabled.call('POST', '/api/v1/auth/breakglass/credentials', {
      actor_id: 'ops',
      password: PASSWORD,
    });
    expect(set.status).toBe(200);
  }, 180_000);
  afterAll(async () => {
    await enabled?.close();
    await disabled?.close();
  });

  const login = (app: TestApp, actor_id: string, password: string) =>
    app.call(
      'POST',
      '/auth/breakglass/login',
      { actor_id, password },
      { token: null, headers: { 'user-agent': UA } },
    );

  it('disabled: every break-glass route and the login are 404, nothing stored or audited', async () => {
    const added = await unchangedBut(disabled, async () => {
      for (const [method, path, body] of [
        ['GET', '/api/v1/auth/breakglass/credentials', undefined],
        ['POST', '/api/v1/auth/breakglass/credentials', { actor_id: 'ops', password: PASSWORD }],
        ['DELETE', '/api/v1/auth/breakglass/credentials/ops', undefined],
        ['POST', '/api/v1/auth/breakglass/credentials/ops/unlock', undefined],
      ] as const) {
        expectProblem(
          await disabled.call(method, path, body),
          404,
          'not_found',
          'break-glass credentials are disabled',
        );
      }
      expectProblem(
        await login(disabled, 'ops', PASSWORD),
        404,
        'not_found',
        'break-glass credentials are disabled',
      );
    });
    expect(added).toEqual([]);
  });

  it('an unknown actor and a wrong password: the same 401, no session, each audited with its reason', async () => {
    const added = await unchangedBut(enabled, async () => {
      const unknown = await login(enabled, 'nobody', PASSWORD);
      const wrong = await login(enabled, 'ops', 'not the password at all');
      for (const res of [unknown, wrong]) {
        expectProblem(res, 401, 'unauthorized', 'invalid break-glass credentials');
        expect(res.headers.get('set-cookie')).toBeNull();
      }
      expect(withoutRequestId(unknown.body)).toEqual(withoutRequestId(wrong.body));
    });
    expect(added.map((e) => [e.action, e.category, e.resource_id, e.details.reason])).toEqual([
      ['breakglass_login_failed', 'auth', 'nobody', 'unknown_actor'],
      ['breakglass_login_failed', 'auth', 'ops', 'wrong_password'],
    ]);
    expect(JSON.stringify(added)).not.toContain('not the password');
    // Below the threshold of 2 the right password still works.
    expect((await login(enabled, 'ops', PASSWORD)).status).toBe(204);
  });

  it('the threshold reached: locked out (audited), the right password refused alike until unlocked', async () => {
    const sessionsBefore = (await enabled.storage.sessions.list({ perPage: 500 })).total;
    const added = await unchangedBut(enabled, async () => {
      await login(enabled, 'ops', 'wrong password number one');
      await login(enabled, 'ops', 'wrong password number two');
      const locked = await login(enabled, 'ops', PASSWORD);
      expectProblem(locked, 401, 'unauthorized', 'invalid break-glass credentials');
    });
    expect(added.map((e) => [e.action, e.category, e.details.reason ?? e.details.failures])).toEqual([
      ['breakglass_login_failed', 'auth', 'wrong_password'],
      ['breakglass_lockout', 'auth', 2],
      ['breakglass_login_failed', 'auth', 'wrong_password'],
      ['breakglass_login_failed', 'auth', 'locked'],
    ]);
    expect((await enabled.storage.sessions.list({ perPage: 500 })).total).toBe(sessionsBefore);
    const listed = await enabled.call('GET', '/api/v1/auth/breakglass/credentials');
    expect(listed.body.data.find((c: { actor_id: string }) => c.actor_id === 'ops').locked).toBe(true);
    expect((await enabled.call('POST', '/api/v1/auth/breakglass/credentials/ops/unlock')).status).toBe(204);
    // The unlock starts the count afresh: one wrong password is one, not a third.
    expect((await login(enabled, 'ops', 'one more wrong password')).status).toBe(401);
    expect((await login(enabled, 'ops', PASSWORD)).status).toBe(204);
    // And so does a success: one wrong password after it does not lock.
    expect((await login(enabled, 'ops', 'one more wrong password')).status).toBe(401);
    expect((await login(enabled, 'ops', PASSWORD)).status).toBe(204);
  });

  it('a deactivated break-glass user: 401 like any other failure, audited as user_deactivated', async () => {
    const set = await enabled.call('POST', '/api/v1/auth/breakglass/credentials', {
      actor_id: 'retired-ops',
      password: PASSWORD,
    });
    expect(set.status).toBe(200);
    const u = await enabled.storage.users.findBySubject(DEFAULT_TENANT_ID, null, 'retired-ops');
    expect((await enabled.call('DELETE', `/api/v1/auth/users/${u!.id}`)).status).toBe(200);
    const added = await unchangedBut(enabled, async () => {
      expectProblem(
        await login(enabled, 'retired-ops', PASSWORD),
        401,
        'unauthorized',
        'invalid break-glass credentials',
      );
    });
    expect(added.map((e) => [e.action, e.category, e.details.reason])).toEqual([
      ['breakglass_login_failed', 'auth', 'user_deactivated'],
    ]);
  });

  it('a password or actor id out of bounds: 400 naming the field; an unknown actor to unlock or remove: 404', async () => {
    const added = await unchangedBut(enabled, async () => {
      const bad = await enabled.call('POST', '/api/v1/auth/breakglass/credentials', {
        actor_id: 'has spaces',
        password: 'short',
      });
      expectProblem(bad, 400, 'validation_failed');
      expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['actor_id', 'password']);
      expectProblem(
        await enabled.call('POST', '/api/v1/auth/breakglass/credentials/ghost/unlock'),
        404,
        'not_found',
      );
    });
    expect(added).toEqual([]);
  });
});

describe('break-glass login over the rate limit', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp({
      services: { breakglass: { enabled: true, lockoutThreshold: 100, lockoutMs: 60_000 } },
      handler: { ephemeral: new MemoryEphemeralStore(), rateLimits: { public: 2, windowMs: 60_000 } },
    });
    await app.services.breakglass.setPassword({ type: 'api_key', id: 'api-key' }, 'ops', PASSWORD);
  }, 180_000);
  afterAll(() => app?.close());

  it('429 with Retry-After once a client spent the public budget; the password is not even checked', async () => {
    const login = (password: string) =>
      app.call(
        'POST',
        '/auth/breakglass/login',
        { actor_id: 'ops', password },
        {
          token: null,
          headers: { 'user-agent': UA },
        },
      );
    const spy = vi.spyOn(app.services.breakglass, 'login');
    const added = await unchangedBut(app, async () => {
      expect((await login('a wrong password, first')).status).toBe(401);
      expect((await login('a wrong password, second')).status).toBe(401);
      const limited = await login(PASSWORD);
      expectProblem(limited, 429, 'rate_limited');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(limited.headers.get('set-cookie')).toBeNull();
    });
    expect(spy).toHaveBeenCalledTimes(2);
    spy.mockRestore();
    // Only the two attempts that reached the service are audited.
    expect(added.map((e) => [e.action, e.details.reason])).toEqual([
      ['breakglass_login_failed', 'wrong_password'],
      ['breakglass_login_failed', 'wrong_password'],
    ]);
  });
});

describe('OIDC failures without a reachable provider', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp({
      handler: { ephemeral: new MemoryEphemeralStore(), rateLimits: { public: 0 } },
    });
    // An issuer on a port nobody listens on: discovery fails.
    const created = await app.call('POST', '/api/v1/auth/oidc/providers', {
      id: 'down',
      name: 'Down IdP',
      issuer: 'https://127.0.0.1:9/',
      client_id: 'cw',
      redirect_uri: 'https://cw.example.test/auth/oidc/callback',
    });
    expect(created.status).toBe(201);
    await app.call('POST', '/api/v1/auth/oidc/providers', {
      id: 'off',
      name: 'Disabled IdP',
      issuer: 'https://127.0.0.1:9/off',
      client_id: 'cw',
      redirect_uri: 'https://cw.example.test/auth/oidc/callback',
      enabled: false,
    });
  }, 180_000);
  afterAll(() => app?.close());

  const browserGet = (path: string, headers: Record<string, string> = {}) =>
    app.call('GET', path, undefined, { token: null, headers: { 'user-agent': UA, ...headers } });

  function expectOidcFailure(res: CallResult, reason: string): void {
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`/login?error=oidc_failed&reason=${reason}`);
    const cookies = res.headers.getSetCookie();
    expect(cookies).toContain(`${PRELOGIN_COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0`);
    expect(cookies.some((c) => c.startsWith(`${SESSION_COOKIE}=`) && !/Max-Age=0/.test(c))).toBe(false);
  }

  it('sign-in with an unknown or disabled provider: unknown_provider, audited', async () => {
    const added = await unchangedBut(app, async () => {
      expectOidcFailure(await browserGet('/auth/oidc/login?provider=nope'), 'unknown_provider');
      expectOidcFailure(await browserGet('/auth/oidc/login?provider=off'), 'unknown_provider');
    });
    expect(added.map((e) => [e.action, e.category, e.resource_id, e.details.reason])).toEqual([
      ['login_failed', 'auth', 'unknown', 'unknown_provider'],
      ['login_failed', 'auth', 'off', 'unknown_provider'],
    ]);
  });

  it('sign-in with a provider that cannot be reached: provider_unavailable, audited', async () => {
    const added = await unchangedBut(app, async () => {
      expectOidcFailure(await browserGet('/auth/oidc/login?provider=down'), 'provider_unavailable');
    });
    expect(added.map((e) => [e.action, e.category, e.resource_id, e.details.reason])).toEqual([
      ['login_failed', 'auth', 'down', 'provider_unavailable'],
    ]);
  });

  it('a callback without a pre-login, or with a forged one: missing_prelogin, audited, no user or session', async () => {
    const added = await unchangedBut(app, async () => {
      expectOidcFailure(await browserGet('/auth/oidc/callback?code=c&state=s'), 'missing_prelogin');
      expectOidcFailure(
        await browserGet('/auth/oidc/callback?code=c&state=s', {
          cookie: `${PRELOGIN_COOKIE}=${'A'.repeat(43)}`,
        }),
        'missing_prelogin',
      );
    });
    expect(added.map((e) => [e.action, e.category, e.details.reason])).toEqual([
      ['login_failed', 'auth', 'missing_prelogin'],
      ['login_failed', 'auth', 'missing_prelogin'],
    ]);
  });

  it('a back-channel logout that fails: the uniform 400, sessions kept; refused tokens of a known issuer audited', async () => {
    const viewer = await user(app, ['viewer']);
    await signIn(app, viewer);
    // Straight to the handler: this answer is OpenID Connect Back-Channel Logout 1.0's JSON error,
    // not the problem document of the REST routes.
    const post = async (body: string) => {
      const res = await app.handler(
        new Request('https://localhost:8443/auth/oidc/back-channel-logout', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
        }),
        { remoteAddress: '127.0.0.1' },
      );
      return { status: res.status, headers: res.headers, body: await res.json() };
    };
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    // Well-formed, naming a configured issuer, signed by nobody it trusts.
    const forged = `${b64({ alg: 'RS256', kid: 'k' })}.${b64({ iss: 'https://127.0.0.1:9/', aud: 'cw', sub: 'x', jti: 'j', iat: 1, events: {} })}.${'A'.repeat(43)}`;
    const added = await unchangedBut(app, async () => {
      for (const body of [
        '',
        'logout_token=',
        'logout_token=not-a-jwt',
        `logout_token=${'a'.repeat(20_000)}`,
        `logout_token=${forged}`,
      ]) {
        const res = await post(body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'invalid_request' });
        expect(res.headers.get('cache-control')).toBe('no-store');
      }
    });
    expect(added.map((e) => [e.action, e.category, e.resource_id])).toEqual([
      ['oidc_backchannel_logout_refused', 'auth', 'down'],
    ]);
  });
});

describe('demo residue', () => {
  let demo: TestApp;
  beforeAll(async () => {
    demo = await createTestApp({ handler: { runtime: { demoSeeded: true, demoModeAck: true } } });
    await demo.services.people.seedDemo();
  }, 180_000);
  afterAll(() => demo?.close());

  it('cleanup while in demo mode: 503, every demo user still there, nothing audited', async () => {
    const added = await unchangedBut(demo, async () => {
      expectProblem(
        await demo.call('POST', '/api/v1/auth/demo-residual/cleanup'),
        503,
        'unavailable',
        /demo mode is on/,
      );
    });
    expect(added).toEqual([]);
    expect((await demo.storage.users.list({ tenant_id: DEFAULT_TENANT_ID })).total).toBe(4);
  });
});
