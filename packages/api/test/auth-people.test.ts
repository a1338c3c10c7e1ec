import { type AuthUser, DEFAULT_TENANT_ID, ManualClock } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CSRF_HEADER, csrfTokenFor, SESSION_COOKIE } from '../src/index.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const UA = 'Mozilla/5.0 (test browser)';
const MINUTE = 60_000;

let app: TestApp;
let clock: ManualClock;

beforeAll(async () => {
  clock = new ManualClock('2026-03-01T08:00:00Z');
  app = await createTestApp({ clock });
}, 180_000);
afterAll(() => app.close());

let counter = 0;
async function user(roles: string[], provider: string | null = null): Promise<AuthUser> {
  counter += 1;
  const created = await app.storage.users.create({
    tenant_id: DEFAULT_TENANT_ID,
    subject: `person-${counter}`,
    provider_id: provider,
  });
  await app.storage.roles.setRolesOf(created.id, roles);
  return created;
}

async function signIn(u: AuthUser, extra: { groups?: string[]; provider_id?: string } = {}) {
  const { token, session } = await app.services.sessions.start(u, {
    auth_method: 'oidc',
    user_agent: UA,
    ip_address: '192.0.2.10',
    ...extra,
  });
  return { token, session };
}

/** A browser call: the session cookie, its user agent and (for changes) the CSRF header. */
function browser(token: string, options: { csrf?: boolean; ua?: string } = {}) {
  const headers: Record<string, string> = {
    cookie: `${SESSION_COOKIE}=${token}`,
    'user-agent': options.ua ?? UA,
  };
  if (options.csrf !== false) headers[CSRF_HEADER] = csrfTokenFor(token);
  return { token: null, headers };
}

describe('a signed-in user', () => {
  it('does exactly what their roles allow, and nothing is called when refused', async () => {
    const viewer = await user(['viewer']);
    const { token } = await signIn(viewer);
    expect((await app.call('GET', '/api/v1/certificates', undefined, browser(token))).status).toBe(200);
    const spy = vi.spyOn(app.services.owners, 'create');
    const refused = await app.call('POST', '/api/v1/owners', { name: 'nope' }, browser(token));
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe('this operation requires the permission owner.write');
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
    // An operator may write owners; the role applies from the next request on.
    await app.call('PUT', `/api/v1/auth/users/${viewer.id}/roles`, { roles: ['operator'] });
    expect((await app.call('POST', '/api/v1/owners', { name: 'now yes' }, browser(token))).status).toBe(201);
  });

  it('needs the CSRF header for a cookie-authenticated change, and only then', async () => {
    const op = await user(['operator']);
    const { token } = await signIn(op);
    const spy = vi.spyOn(app.services.owners, 'create');
    const missing = await app.call('POST', '/api/v1/owners', { name: 'x' }, browser(token, { csrf: false }));
    expect(missing.status).toBe(403);
    expect(missing.body.detail).toMatch(/X-CSRF-Token/);
    const wrong = browser(token);
    wrong.headers[CSRF_HEADER] = csrfTokenFor('another-session-token-000000');
    expect((await app.call('POST', '/api/v1/owners', { name: 'x' }, wrong)).status).toBe(403);
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
    // Reads need no header.
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(token, { csrf: false }))).status).toBe(
      200,
    );
  });

  it('gets group-mapped roles from the provider groups of the sign-in', async () => {
    const member = await user([], 'oidc-corp');
    const mapping = await app.call('POST', '/api/v1/auth/oidc/group-mappings', {
      provider_id: 'oidc-corp',
      group: 'pki-admins',
      role: 'auditor',
    });
    expect(mapping.status).toBe(201);
    expect(mapping.body.tenant_id).toBe(DEFAULT_TENANT_ID);
    const plain = await signIn(member, { provider_id: 'oidc-corp', groups: ['staff'] });
    const mapped = await signIn(member, { provider_id: 'oidc-corp', groups: ['staff', 'pki-admins'] });
    expect((await app.call('GET', '/api/v1/audit', undefined, browser(plain.token))).status).toBe(403);
    expect((await app.call('GET', '/api/v1/audit', undefined, browser(mapped.token))).status).toBe(200);
    expect(
      (
        await app.call('POST', '/api/v1/auth/oidc/group-mappings', {
          provider_id: 'oidc-corp',
          group: 'g',
          role: 'no-such-role',
        })
      ).status,
    ).toBe(400);
    expect((await app.call('DELETE', `/api/v1/auth/oidc/group-mappings/${mapping.body.id}`)).status).toBe(
      204,
    );
    expect((await app.call('GET', '/api/v1/audit', undefined, browser(mapped.token))).status).toBe(403);
  });
});

describe('sessions', () => {
  it('end after the idle timeout, and after the absolute one however busy', async () => {
    const u = await user(['viewer']);
    const idle = await signIn(u);
    clock.advance(29 * MINUTE);
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(idle.token))).status).toBe(200);
    clock.advance(29 * MINUTE); // still alive: the previous request pushed the idle end
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(idle.token))).status).toBe(200);
    clock.advance(31 * MINUTE);
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(idle.token))).status).toBe(401);
    expect(await app.storage.sessions.get(idle.session.id)).toBeNull();

    const busy = await signIn(u);
    for (let i = 0; i < 25; i += 1) {
      clock.advance(29 * MINUTE);
      const status = (await app.call('GET', '/api/v1/owners', undefined, browser(busy.token))).status;
      if (i < 24) expect(status, `after ${(i + 1) * 29} minutes`).toBe(200);
      else expect(status).toBe(401);
    }
  });

  it('are bound to the sign-in user agent', async () => {
    const u = await user(['viewer']);
    const { token } = await signIn(u);
    expect(
      (await app.call('GET', '/api/v1/owners', undefined, browser(token, { ua: 'curl/8' }))).status,
    ).toBe(401);
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(token))).status).toBe(200);
  });

  it('are listed for their user with the current one marked; all users only with auth.session.list.all', async () => {
    const u = await user(['viewer']);
    const a = await signIn(u);
    const b = await signIn(u);
    const mine = await app.call('GET', '/api/v1/auth/sessions', undefined, browser(a.token));
    expect(mine.status).toBe(200);
    expect(mine.body.total).toBe(2);
    expect(Object.keys(mine.body.data[0]).length).toBe(10);
    expect(mine.body.data.find((s: { id: string }) => s.id === a.session.id).current).toBe(true);
    expect(mine.body.data.find((s: { id: string }) => s.id === b.session.id).current).toBe(false);
    expect(
      (await app.call('GET', '/api/v1/auth/sessions?all=true', undefined, browser(a.token))).status,
    ).toBe(403);
    const everyone = await app.call('GET', '/api/v1/auth/sessions?all=true');
    expect(everyone.body.total).toBeGreaterThan(2);
  });

  it("revoke all but the current, or one; another user's session is 404 to a non-admin", async () => {
    const u = await user(['viewer']);
    const other = await user(['viewer']);
    const keep = await signIn(u);
    const drop1 = await signIn(u);
    const drop2 = await signIn(u);
    const theirs = await signIn(other);
    const revoked = await app.call('DELETE', '/api/v1/auth/sessions', undefined, browser(keep.token));
    expect(revoked.body).toEqual({ revoked: 2 });
    for (const t of [drop1.token, drop2.token]) {
      expect((await app.call('GET', '/api/v1/owners', undefined, browser(t))).status).toBe(401);
    }
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(keep.token))).status).toBe(200);
    expect(
      (await app.call('DELETE', `/api/v1/auth/sessions/${theirs.session.id}`, undefined, browser(keep.token)))
        .status,
    ).toBe(404);
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(theirs.token))).status).toBe(200);
    expect((await app.call('DELETE', `/api/v1/auth/sessions/${theirs.session.id}`)).status).toBe(204);
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(theirs.token))).status).toBe(401);
  });

  it('end at logout, which clears the cookies; the cookie replayed afterwards is 401', async () => {
    const u = await user(['viewer']);
    const { token, session } = await signIn(u);
    const out = await app.call('POST', '/auth/logout', undefined, browser(token));
    expect(out.status).toBe(204);
    const cleared = out.headers.getSetCookie();
    expect(cleared.some((c) => c.startsWith(`${SESSION_COOKIE}=;`) && /Max-Age=0/.test(c))).toBe(true);
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(token))).status).toBe(401);
    const audit = await app.storage.audit.list({ action: 'logout', perPage: 500 });
    expect(audit.items.some((e) => e.resource_id === session.id && e.category === 'auth')).toBe(true);
  });

  it('are garbage-collected once past their ends', async () => {
    const u = await user(['viewer']);
    const { session } = await signIn(u);
    clock.advance(31 * MINUTE);
    expect(await app.services.sessions.gc()).toBeGreaterThanOrEqual(1);
    expect(await app.storage.sessions.get(session.id)).toBeNull();
  });
});

describe('users', () => {
  it('lists the nine fields; deactivating yourself is 409; deactivation ends sessions at once', async () => {
    const admin = await user(['admin']);
    const target = await user(['viewer']);
    const adminSession = await signIn(admin);
    const targetSession = await signIn(target);
    const list = await app.call('GET', '/api/v1/auth/users?per_page=500');
    const row = list.body.data.find((x: { id: string }) => x.id === target.id);
    expect(Object.keys(row).length).toBe(9);
    expect(row.deactivated_at).toBeNull();

    const self = await app.call(
      'DELETE',
      `/api/v1/auth/users/${admin.id}`,
      undefined,
      browser(adminSession.token),
    );
    expect(self.status).toBe(409);
    expect((await app.storage.users.get(admin.id))?.deactivated_at).toBeNull();

    const off = await app.call(
      'DELETE',
      `/api/v1/auth/users/${target.id}`,
      undefined,
      browser(adminSession.token),
    );
    expect(off.status).toBe(200);
    expect(off.body.deactivated_at).not.toBeNull();
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(targetSession.token))).status).toBe(
      401,
    );
    expect((await app.storage.sessions.list({ user_id: target.id })).total).toBe(0);

    const on = await app.call('POST', `/api/v1/auth/users/${target.id}/reactivate`);
    expect(on.status).toBe(200);
    expect(on.body.deactivated_at).toBeNull();
    // The old cookie stays dead: reactivation starts nothing.
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(targetSession.token))).status).toBe(
      401,
    );
    const audit = await app.storage.audit.list({ action: 'user_deactivate', perPage: 500 });
    expect(audit.items.some((e) => e.resource_id === target.id && e.category === 'auth')).toBe(true);
    expect((await app.call('DELETE', '/api/v1/auth/users/usr-unknown')).status).toBe(404);
  });

  it('custom roles: defined, assigned, refused for built-in names and unknown permissions', async () => {
    const created = await app.call('POST', '/api/v1/auth/roles', {
      name: 'cert-reader',
      description: 'reads certificates',
      permissions: ['cert.read'],
    });
    expect(created.status).toBe(201);
    expect(
      (await app.call('POST', '/api/v1/auth/roles', { name: 'admin', permissions: ['cert.read'] })).status,
    ).toBe(409);
    const bad = await app.call('POST', '/api/v1/auth/roles', { name: 'x', permissions: ['cert.everything'] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toMatch(/permissions/);
    expect((await app.call('DELETE', '/api/v1/auth/roles/viewer')).status).toBe(409);

    const u = await user([]);
    const { token } = await signIn(u);
    expect((await app.call('GET', '/api/v1/certificates', undefined, browser(token))).status).toBe(403);
    const assigned = await app.call('PUT', `/api/v1/auth/users/${u.id}/roles`, { roles: ['cert-reader'] });
    expect(assigned.body).toEqual({ user_id: u.id, roles: ['cert-reader'] });
    expect((await app.call('GET', '/api/v1/certificates', undefined, browser(token))).status).toBe(200);
    expect((await app.call('GET', '/api/v1/owners', undefined, browser(token))).status).toBe(403);
    expect((await app.call('PUT', `/api/v1/auth/users/${u.id}/roles`, { roles: ['ghost'] })).status).toBe(
      400,
    );
    expect((await app.call('DELETE', '/api/v1/auth/roles/cert-reader')).status).toBe(204);
    expect((await app.call('GET', '/api/v1/certificates', undefined, browser(token))).status).toBe(403);
    const roles = await app.call('GET', '/api/v1/auth/roles');
    expect(roles.body.data.map((r: { name: string }) => r.name)).toEqual([
      'admin',
      'operator',
      'viewer',
      'auditor',
    ]);
  });

  it('bootstrap creates the first administrator once and leaves later changes alone', async () => {
    const first = await app.services.people.bootstrap({ subject: 'root-admin', email: 'root@example.test' });
    expect(first.created).toBe(true);
    expect(await app.storage.roles.rolesOf(first.user.id)).toEqual(['admin']);
    await app.storage.roles.setRolesOf(first.user.id, ['viewer']);
    const again = await app.services.people.bootstrap({ subject: 'root-admin' });
    expect(again).toEqual({ user: first.user, created: false });
    expect(await app.storage.roles.rolesOf(first.user.id)).toEqual(['viewer']);
  });
});
