import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import type { Storage } from '../ports/storage.js';
import type { ContractOptions } from './ephemeral-contract.js';

/** What a factory hands the people contract suite: a migrated storage of its own. */
export interface PeopleContractSubject {
  storage: Storage;
  close(): Promise<void>;
}

const codeOf = async (p: Promise<unknown>): Promise<unknown> => {
  try {
    await p;
    return 'resolved';
  } catch (error) {
    return isCertwrightError(error) ? error.code : error;
  }
};

const HOUR = 3_600_000;

/**
 * Users, roles, sessions and OIDC group mappings behave the same on every engine: unique
 * subjects per tenant and provider, tenant-scoped roles and mappings, sessions that go with
 * their user, expiry and back-channel deletes that touch exactly the matching rows.
 */
export function describePeopleStorageContract(
  name: string,
  factory: () => Promise<PeopleContractSubject>,
  options: ContractOptions = {},
): void {
  if (options.skip) {
    console.warn(`[people contract] skipping ${name}: ${options.skip}`);
    describe.skip(`People storage contract: ${name}`, () => {
      it('skipped', () => {});
    });
    return;
  }

  describe(`People storage contract: ${name}`, () => {
    let subject: PeopleContractSubject;
    let s: Storage;
    beforeAll(async () => {
      subject = await factory();
      s = subject.storage;
    }, 120_000);
    afterAll(async () => {
      await subject?.close();
    });

    const tenant = () => `t-${randomUUID().slice(0, 8)}`;

    async function session(userId: string, tenantId: string, extra: Record<string, unknown> = {}) {
      const now = Date.now();
      return s.sessions.create({
        user_id: userId,
        tenant_id: tenantId,
        auth_method: 'oidc',
        provider_id: 'oidc-a',
        oidc_sid: null,
        groups: ['pki', 'ops'],
        ip_address: '192.0.2.1',
        user_agent: 'test agent',
        expires_at: new Date(now + 8 * HOUR),
        idle_expires_at: new Date(now + HOUR),
        token_hash: randomUUID().replace(/-/g, '').padEnd(64, '0'),
        ...extra,
      });
    }

    it('stores users with the nine fields; one user per tenant, provider and subject', async () => {
      const t = tenant();
      const user = await s.users.create({
        tenant_id: t,
        subject: 'alice',
        provider_id: 'oidc-a',
        email: 'a@x.test',
      });
      expect(Object.keys(user).sort()).toEqual(
        [
          'created_at',
          'deactivated_at',
          'display_name',
          'email',
          'id',
          'last_login_at',
          'provider_id',
          'subject',
          'tenant_id',
        ].sort(),
      );
      expect(user.id).toMatch(/^usr-/);
      expect(await s.users.get(user.id)).toEqual(user);
      expect(await codeOf(s.users.create({ tenant_id: t, subject: 'alice', provider_id: 'oidc-a' }))).toBe(
        'conflict',
      );
      // The same subject at another provider, locally, or in another tenant is another person.
      const local = await s.users.create({ tenant_id: t, subject: 'alice', provider_id: null });
      expect(local.provider_id).toBeNull();
      expect(await codeOf(s.users.create({ tenant_id: t, subject: 'alice', provider_id: null }))).toBe(
        'conflict',
      );
      await s.users.create({ tenant_id: tenant(), subject: 'alice', provider_id: 'oidc-a' });
      expect((await s.users.findBySubject(t, null, 'alice'))?.id).toBe(local.id);
      expect((await s.users.findBySubject(t, 'oidc-a', 'alice'))?.id).toBe(user.id);
      expect(await s.users.findBySubject(t, 'oidc-b', 'alice')).toBeNull();
      const page = await s.users.list({ tenant_id: t });
      expect(page.total).toBe(2);
      expect(page.items.map((u) => u.id)).toEqual([user.id, local.id]);
    });

    it('deactivates and reactivates a user; an unknown id is not_found', async () => {
      const user = await s.users.create({ tenant_id: tenant(), subject: 'bob', provider_id: null });
      const when = new Date(Math.floor(Date.now() / 1000) * 1000);
      expect((await s.users.update(user.id, { deactivated_at: when })).deactivated_at?.getTime()).toBe(
        when.getTime(),
      );
      expect((await s.users.update(user.id, { deactivated_at: null })).deactivated_at).toBeNull();
      expect(await codeOf(s.users.update('usr-missing', { email: 'x' }))).toBe('not_found');
    });

    it('keeps custom roles per tenant and removes their assignments and mappings with them', async () => {
      const t = tenant();
      const role = await s.roles.create({
        tenant_id: t,
        name: 'certs',
        description: 'certificates',
        permissions: ['cert.read', 'cert.write'],
      });
      expect(role.permissions).toEqual(['cert.read', 'cert.write']);
      expect(await codeOf(s.roles.create({ ...role }))).toBe('conflict');
      await s.roles.create({ ...role, tenant_id: tenant() });
      expect((await s.roles.list(t)).map((r) => r.name)).toEqual(['certs']);
      const updated = await s.roles.update(t, 'certs', { permissions: ['cert.read'] });
      expect(updated.permissions).toEqual(['cert.read']);
      expect(updated.description).toBe('certificates');
      expect(await codeOf(s.roles.update(t, 'nope', { description: 'x' }))).toBe('not_found');

      const user = await s.users.create({ tenant_id: t, subject: 'carol', provider_id: null });
      await s.roles.setRolesOf(user.id, ['viewer', 'certs', 'certs']);
      expect(await s.roles.rolesOf(user.id)).toEqual(['certs', 'viewer']);
      await s.oidcGroupMappings.create({ tenant_id: t, provider_id: 'oidc-a', group: 'pki', role: 'certs' });
      await s.roles.delete(t, 'certs');
      expect(await s.roles.get(t, 'certs')).toBeNull();
      expect(await s.roles.rolesOf(user.id)).toEqual(['viewer']);
      expect(await s.oidcGroupMappings.list(t)).toEqual([]);
      expect(await codeOf(s.roles.delete(t, 'certs'))).toBe('not_found');
      expect(await codeOf(s.roles.setRolesOf('usr-missing', ['viewer']))).toBe('invalid_reference');
    });

    it('finds a session by its token hash only, touches it, and lists newest first', async () => {
      const t = tenant();
      const user = await s.users.create({ tenant_id: t, subject: 'dave', provider_id: 'oidc-a' });
      const first = await session(user.id, t);
      const second = await session(user.id, t, { token_hash: 'f'.repeat(64) });
      expect(first.id).toMatch(/^ses-/);
      expect(Object.keys(first)).not.toContain('token_hash');
      expect((await s.sessions.get(first.id))?.groups).toEqual(['pki', 'ops']);
      expect((await s.sessions.findByTokenHash('f'.repeat(64)))?.id).toBe(second.id);
      expect(await s.sessions.findByTokenHash('0'.repeat(64))).toBeNull();
      expect(await codeOf(session(user.id, t, { token_hash: 'f'.repeat(64) }))).toBe('conflict');
      expect(await codeOf(session('usr-missing', t))).toBe('invalid_reference');
      const seen = new Date(first.last_seen_at.getTime() + 60_000);
      const idle = new Date(first.idle_expires_at.getTime() + 60_000);
      await s.sessions.touch(first.id, seen, idle);
      const touched = await s.sessions.get(first.id);
      expect(touched?.last_seen_at.getTime()).toBe(seen.getTime());
      expect(touched?.idle_expires_at.getTime()).toBe(idle.getTime());
      const listed = await s.sessions.list({ user_id: user.id });
      expect(listed.total).toBe(2);
      expect(new Set(listed.items.map((x) => x.id))).toEqual(new Set([first.id, second.id]));
      expect((await s.sessions.list({ tenant_id: t })).total).toBe(2);
    });

    it('deletes one session, all but one, and every session of a deleted-with-cascade user', async () => {
      const t = tenant();
      const user = await s.users.create({ tenant_id: t, subject: 'erin', provider_id: null });
      const a = await session(user.id, t);
      const b = await session(user.id, t);
      const c = await session(user.id, t);
      expect(await s.sessions.delete(a.id)).toBe(true);
      expect(await s.sessions.delete(a.id)).toBe(false);
      expect(await s.sessions.deleteForUser(user.id, b.id)).toBe(1);
      expect(await s.sessions.get(c.id)).toBeNull();
      expect((await s.sessions.get(b.id))?.id).toBe(b.id);
      expect(await s.sessions.deleteForUser(user.id)).toBe(1);
      const gone = await session(user.id, t);
      await s.roles.setRolesOf(user.id, ['viewer']);
      expect(await s.users.delete(user.id)).toBe(true);
      expect(await s.sessions.get(gone.id)).toBeNull();
      expect(await s.roles.rolesOf(user.id)).toEqual([]);
      expect(await s.users.delete(user.id)).toBe(false);
    });

    it('deletes for back-channel logout exactly the sessions of the sid or subject at the provider', async () => {
      const t = tenant();
      const frank = await s.users.create({ tenant_id: t, subject: 'frank', provider_id: 'oidc-bcl' });
      const gina = await s.users.create({ tenant_id: t, subject: 'gina', provider_id: 'oidc-bcl' });
      const f1 = await session(frank.id, t, { provider_id: 'oidc-bcl', oidc_sid: 'sid-1' });
      const f2 = await session(frank.id, t, { provider_id: 'oidc-bcl', oidc_sid: 'sid-2' });
      const g1 = await session(gina.id, t, { provider_id: 'oidc-bcl', oidc_sid: 'sid-1' });
      const other = await session(frank.id, t, { provider_id: 'oidc-other', oidc_sid: 'sid-1' });
      expect(await s.sessions.deleteForProvider('oidc-bcl', {})).toBe(0);
      expect(await s.sessions.deleteForProvider('oidc-bcl', { sid: 'sid-1', subject: 'frank' })).toBe(1);
      expect(await s.sessions.get(f1.id)).toBeNull();
      expect(await s.sessions.get(g1.id)).not.toBeNull();
      expect(await s.sessions.deleteForProvider('oidc-bcl', { subject: 'frank' })).toBe(1);
      expect(await s.sessions.get(f2.id)).toBeNull();
      expect(await s.sessions.deleteForProvider('oidc-bcl', { sid: 'sid-1' })).toBe(1);
      expect(await s.sessions.get(other.id)).not.toBeNull();
    });

    it('garbage-collects sessions past their idle or absolute end, and nothing else', async () => {
      const t = tenant();
      const user = await s.users.create({ tenant_id: t, subject: 'hank', provider_id: null });
      const now = Date.now();
      const idleGone = await session(user.id, t, { idle_expires_at: new Date(now - 1000) });
      const absoluteGone = await session(user.id, t, {
        idle_expires_at: new Date(now + HOUR),
        expires_at: new Date(now - 1000),
      });
      const alive = await session(user.id, t);
      expect(await s.sessions.deleteExpired(new Date(now))).toBeGreaterThanOrEqual(2);
      expect(await s.sessions.get(idleGone.id)).toBeNull();
      expect(await s.sessions.get(absoluteGone.id)).toBeNull();
      expect(await s.sessions.get(alive.id)).not.toBeNull();
    });

    it('stores OIDC providers with the client secret sealed, write-only and removable', async () => {
      const t = tenant();
      const base = {
        tenant_id: t,
        name: 'Corp IdP',
        issuer: 'https://idp.example.test',
        client_id: 'certwright',
        scopes: ['openid', 'email'],
        groups_claim: 'groups',
        email_claim: 'email',
        name_claim: 'name',
        redirect_uri: 'https://cw.example.test/auth/oidc/callback',
        post_login_url: '/',
        enabled: true,
      };
      const p = await s.oidcProviders.create({ ...base, client_secret: 's3cret-value' });
      expect(p.id).toMatch(/^oidc-/);
      expect(p.client_secret_set).toBe(true);
      expect(Object.keys(p).length).toBe(15);
      expect(JSON.stringify(p)).not.toContain('s3cret-value');
      expect((await s.oidcProviders.getWithSecret(p.id))?.client_secret).toBe('s3cret-value');
      expect(await codeOf(s.oidcProviders.create({ ...base }))).toBe('conflict');
      const renamed = await s.oidcProviders.update(p.id, { name: 'Corp', scopes: ['openid'] });
      expect(renamed.scopes).toEqual(['openid']);
      expect((await s.oidcProviders.getWithSecret(p.id))?.client_secret).toBe('s3cret-value');
      const cleared = await s.oidcProviders.update(p.id, { client_secret: null, enabled: false });
      expect(cleared.client_secret_set).toBe(false);
      expect(cleared.enabled).toBe(false);
      expect((await s.oidcProviders.list(t)).map((x) => x.id)).toEqual([p.id]);
      expect(await codeOf(s.oidcProviders.update('oidc-missing', { name: 'x' }))).toBe('not_found');
      await s.oidcProviders.delete(p.id);
      expect(await s.oidcProviders.get(p.id)).toBeNull();
      expect(await codeOf(s.oidcProviders.delete(p.id))).toBe('not_found');
    });

    it('keeps one break-glass hash per actor, replaced on set, gone with its user', async () => {
      const user = await s.users.create({
        tenant_id: tenant(),
        subject: `bg-${randomUUID()}`,
        provider_id: null,
      });
      const actor = `ops-${randomUUID().slice(0, 8)}`;
      const first = await s.breakglass.set(actor, user.id, 'scrypt$hash-1');
      expect(Object.keys(first).sort()).toEqual([
        'actor_id',
        'created_at',
        'last_used_at',
        'updated_at',
        'user_id',
      ]);
      expect((await s.breakglass.get(actor))?.password_hash).toBe('scrypt$hash-1');
      const second = await s.breakglass.set(actor, user.id, 'scrypt$hash-2');
      expect(second.created_at.getTime()).toBe(first.created_at.getTime());
      expect((await s.breakglass.get(actor))?.password_hash).toBe('scrypt$hash-2');
      expect(JSON.stringify(await s.breakglass.list())).not.toContain('scrypt$');
      const used = new Date(Math.floor(Date.now() / 1000) * 1000);
      await s.breakglass.markUsed(actor, used);
      expect((await s.breakglass.get(actor))?.last_used_at?.getTime()).toBe(used.getTime());
      expect(await codeOf(s.breakglass.set('nobody', 'usr-missing', 'h'))).toBe('invalid_reference');
      await s.breakglass.delete(actor);
      expect(await s.breakglass.get(actor)).toBeNull();
      expect(await codeOf(s.breakglass.delete(actor))).toBe('not_found');
    });

    it('counts break-glass failures in runs, locks once at the threshold, and forgets on clear', async () => {
      const user = await s.users.create({
        tenant_id: tenant(),
        subject: `bg-lock-${randomUUID()}`,
        provider_id: null,
      });
      const actor = `lock-${randomUUID().slice(0, 8)}`;
      await s.breakglass.set(actor, user.id, 'scrypt$hash');
      const policy = { windowMs: 60_000, threshold: 3, lockMs: 300_000 };
      const t0 = new Date(Math.floor(Date.now() / 1000) * 1000);
      const at = (ms: number) => new Date(t0.getTime() + ms);
      expect(await s.breakglass.recordFailure('nobody-at-all', t0, policy)).toBeNull();
      expect(await s.breakglass.recordFailure(actor, t0, policy)).toEqual({ failures: 1, lockedNow: false });
      // Past the window a new run begins.
      expect(await s.breakglass.recordFailure(actor, at(60_000), policy)).toEqual({
        failures: 1,
        lockedNow: false,
      });
      expect(await s.breakglass.recordFailure(actor, at(61_000), policy)).toEqual({
        failures: 2,
        lockedNow: false,
      });
      expect((await s.breakglass.get(actor))?.locked_until).toBeNull();
      expect(await s.breakglass.recordFailure(actor, at(62_000), policy)).toEqual({
        failures: 3,
        lockedNow: true,
      });
      expect((await s.breakglass.get(actor))?.locked_until?.getTime()).toBe(at(362_000).getTime());
      expect((await s.breakglass.list()).find((c) => c.actor_id === actor)?.locked_until?.getTime()).toBe(
        at(362_000).getTime(),
      );
      // Already locked: counted, never locked twice, the lockout not extended.
      expect(await s.breakglass.recordFailure(actor, at(63_000), policy)).toEqual({
        failures: 4,
        lockedNow: false,
      });
      expect((await s.breakglass.get(actor))?.locked_until?.getTime()).toBe(at(362_000).getTime());
      await s.breakglass.clearFailures(actor);
      expect((await s.breakglass.get(actor))?.locked_until).toBeNull();
      expect(await s.breakglass.recordFailure(actor, at(64_000), policy)).toEqual({
        failures: 1,
        lockedNow: false,
      });

      // Concurrent failures (several instances): each is counted once, exactly one locks.
      await s.breakglass.clearFailures(actor);
      const racing = await Promise.all(
        Array.from({ length: 6 }, () => s.breakglass.recordFailure(actor, at(70_000), policy)),
      );
      expect(racing.map((r) => r!.failures).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(racing.filter((r) => r!.lockedNow)).toHaveLength(1);
      await s.breakglass.delete(actor);
    });

    it('maps groups to roles per tenant and provider; deleting needs the owning tenant', async () => {
      const t = tenant();
      const m1 = await s.oidcGroupMappings.create({
        tenant_id: t,
        provider_id: 'oidc-a',
        group: 'pki',
        role: 'operator',
      });
      expect(Object.keys(m1).sort()).toEqual([
        'created_at',
        'group',
        'id',
        'provider_id',
        'role',
        'tenant_id',
      ]);
      await s.oidcGroupMappings.create({
        tenant_id: t,
        provider_id: 'oidc-a',
        group: 'audit',
        role: 'auditor',
      });
      await s.oidcGroupMappings.create({
        tenant_id: t,
        provider_id: 'oidc-a',
        group: 'ops',
        role: 'operator',
      });
      await s.oidcGroupMappings.create({ tenant_id: t, provider_id: 'oidc-b', group: 'pki', role: 'admin' });
      expect(
        await codeOf(
          s.oidcGroupMappings.create({ tenant_id: t, provider_id: 'oidc-a', group: 'pki', role: 'operator' }),
        ),
      ).toBe('conflict');
      expect(await s.oidcGroupMappings.rolesFor(t, 'oidc-a', ['pki', 'ops', 'unknown'])).toEqual([
        'operator',
      ]);
      expect(await s.oidcGroupMappings.rolesFor(t, 'oidc-a', ['pki', 'audit'])).toEqual([
        'auditor',
        'operator',
      ]);
      expect(await s.oidcGroupMappings.rolesFor(t, 'oidc-a', [])).toEqual([]);
      expect(await s.oidcGroupMappings.rolesFor(tenant(), 'oidc-a', ['pki'])).toEqual([]);
      expect((await s.oidcGroupMappings.list(t, 'oidc-b')).map((m) => m.role)).toEqual(['admin']);
      expect(await codeOf(s.oidcGroupMappings.delete(tenant(), m1.id))).toBe('not_found');
      await s.oidcGroupMappings.delete(t, m1.id);
      expect((await s.oidcGroupMappings.list(t)).length).toBe(3);
    });
  });
}
