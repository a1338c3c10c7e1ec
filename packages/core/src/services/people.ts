import { z } from 'zod';
import {
  type AuthUser,
  DEFAULT_TENANT_ID,
  type OidcGroupMapping,
  type OidcProvider,
  type Role,
} from '../domain/people.js';
import {
  BUILT_IN_ROLE_NAMES,
  BUILT_IN_ROLES,
  isPermission,
  type Permission,
  permissionsOf,
} from '../domain/permissions.js';
import { fail, isCertwrightError, notFound, validationError } from '../errors.js';
import type { NewOidcProvider, OidcProviderPatch } from '../ports/people-storage.js';
import type { AuditService } from './audit.js';
import { requireSecretsForNewOrigin } from './bound-secrets.js';
import type { Actor, ServiceDeps } from './context.js';
import { parseInput } from './input.js';
import { type ListPage, type Paged, paged, pageQuerySchema, storagePage } from './paging.js';

/**
 * A user made ahead of their first sign-in, with their roles: an OIDC user (`provider_id` and
 * the provider's `sub`) gets these roles when they first sign in; a local user (no provider)
 * signs in through break-glass once a credential is set for them.
 */
export const userCreateSchema = z.strictObject({
  subject: z.string().trim().min(1).max(255).describe("the identity provider's `sub`, or a local actor id"),
  provider_id: z
    .string()
    .min(1)
    .max(128)
    .nullable()
    .optional()
    .describe('the OIDC provider; absent or null: local'),
  email: z.email().max(320).nullable().optional().describe('where notifications for the user go'),
  display_name: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .nullable()
    .optional()
    .describe('the name the console and the audit trail show'),
  roles: z.array(z.string().min(1).max(64)).max(64).optional().describe('directly assigned roles'),
});
export type UserCreate = z.input<typeof userCreateSchema>;

/** A role as the API shows it: built-in ones first, then the tenant's own. */
export interface RoleView {
  name: string;
  description: string;
  permissions: Permission[];
  built_in: boolean;
}

export interface BootstrapAdmin {
  /** The identity provider's `sub` of the first administrator, or a local actor id. */
  subject: string;
  /** The OIDC provider id the subject belongs to; absent for a local (break-glass) actor. */
  provider_id?: string;
  email?: string;
}

/** Local users a demo seeds; nothing else uses this subject prefix. */
export const DEMO_SUBJECT_PREFIX = 'demo:';

const ROLE_NAME = /^[a-z][a-z0-9_.-]{0,63}$/;

/**
 * Users, roles and OIDC group mappings. Everything is scoped to the caller's tenant: another
 * tenant's records answer not_found, never forbidden, so ids leak nothing.
 */
export class PeopleService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
  ) {}

  private get storage() {
    return this.deps.storage;
  }

  async listUsers(tenantId: string, page: ListPage = {}): Promise<Paged<AuthUser>> {
    const window = pageQuerySchema.parse(page);
    return paged(await this.storage.users.list({ ...storagePage(window), tenant_id: tenantId }), window);
  }

  async getUser(tenantId: string, id: string): Promise<AuthUser> {
    const user = await this.storage.users.get(id);
    if (!user || user.tenant_id !== tenantId) throw notFound('user', id);
    return user;
  }

  /**
   * Deactivates a user and ends every session of theirs in the same transaction, so an old
   * cookie stops working at once. `selfId` is the caller's own user: deactivating it is a
   * conflict (nobody locks themselves out by accident).
   */
  async deactivate(
    actor: Actor,
    tenantId: string,
    id: string,
    selfId: string | undefined,
  ): Promise<AuthUser> {
    if (selfId !== undefined && selfId === id) {
      throw fail('invalid_state', 'you cannot deactivate your own user');
    }
    return this.storage.transaction(async (tx) => {
      const user = await tx.users.get(id);
      if (!user || user.tenant_id !== tenantId) throw notFound('user', id);
      if (user.deactivated_at !== null) return user;
      const updated = await tx.users.update(id, { deactivated_at: this.deps.clock.now() });
      const ended = await tx.sessions.deleteForUser(id);
      await this.audit.record(
        actor,
        {
          action: 'user_deactivate',
          category: 'auth',
          resource_type: 'user',
          resource_id: id,
          details: { sessions_ended: ended },
        },
        tx,
      );
      return updated;
    });
  }

  async reactivate(actor: Actor, tenantId: string, id: string): Promise<AuthUser> {
    return this.storage.transaction(async (tx) => {
      const user = await tx.users.get(id);
      if (!user || user.tenant_id !== tenantId) throw notFound('user', id);
      if (user.deactivated_at === null) return user;
      const updated = await tx.users.update(id, { deactivated_at: null });
      await this.audit.record(
        actor,
        { action: 'user_reactivate', category: 'auth', resource_type: 'user', resource_id: id },
        tx,
      );
      return updated;
    });
  }

  async listRoles(tenantId: string): Promise<RoleView[]> {
    const custom = await this.storage.roles.list(tenantId);
    return [
      ...BUILT_IN_ROLES.map((r) => ({ ...r, permissions: [...r.permissions], built_in: true })),
      ...custom.map((r) => roleView(r)),
    ];
  }

  async createRole(
    actor: Actor,
    tenantId: string,
    input: { name: string; description?: string; permissions: string[] },
  ): Promise<RoleView> {
    const permissions = checkRole(input.name, input.permissions);
    const role = await this.storage.transaction(async (tx) => {
      const created = await tx.roles.create({
        tenant_id: tenantId,
        name: input.name,
        description: input.description ?? '',
        permissions,
      });
      await this.audit.record(
        actor,
        {
          action: 'role_create',
          category: 'auth',
          resource_type: 'role',
          resource_id: input.name,
          details: { permissions },
        },
        tx,
      );
      return created;
    });
    return roleView(role);
  }

  async updateRole(
    actor: Actor,
    tenantId: string,
    name: string,
    input: { description?: string; permissions?: string[] },
  ): Promise<RoleView> {
    const permissions = input.permissions === undefined ? undefined : checkRole(name, input.permissions);
    const role = await this.storage.transaction(async (tx) => {
      const updated = await tx.roles.update(tenantId, name, {
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(permissions !== undefined ? { permissions } : {}),
      });
      await this.audit.record(
        actor,
        {
          action: 'role_update',
          category: 'auth',
          resource_type: 'role',
          resource_id: name,
          details: { permissions: updated.permissions },
        },
        tx,
      );
      return updated;
    });
    return roleView(role);
  }

  async deleteRole(actor: Actor, tenantId: string, name: string): Promise<void> {
    if (BUILT_IN_ROLE_NAMES.has(name))
      throw fail('invalid_state', `the built-in role '${name}' cannot be removed`);
    await this.storage.transaction(async (tx) => {
      await tx.roles.delete(tenantId, name);
      await this.audit.record(
        actor,
        { action: 'role_delete', category: 'auth', resource_type: 'role', resource_id: name },
        tx,
      );
    });
  }

  /**
   * Creates a user of the tenant with their roles. The provider must be one of the tenant's;
   * a local subject may not take the demo prefix (demo cleanup removes those users); the same
   * subject at the same provider twice is 409.
   */
  async createUser(actor: Actor, tenantId: string, input: UserCreate): Promise<AuthUser> {
    const data = parseInput(userCreateSchema, input);
    const providerId = data.provider_id ?? null;
    if (providerId !== null) {
      const provider = await this.storage.oidcProviders.get(providerId);
      if (!provider || provider.tenant_id !== tenantId) {
        throw fail('invalid_reference', `OIDC provider '${providerId}' does not exist`, {
          fields: [{ field: 'provider_id', message: `no OIDC provider '${providerId}'` }],
        });
      }
    } else if (data.subject.startsWith(DEMO_SUBJECT_PREFIX)) {
      throw validationError([
        {
          field: 'subject',
          message: `'${DEMO_SUBJECT_PREFIX}' is kept for demo users; choose another subject`,
        },
      ]);
    }
    const roles = [...new Set(data.roles ?? [])];
    await this.checkRolesExist(tenantId, roles, 'roles');
    return this.storage.transaction(async (tx) => {
      const user = await tx.users
        .create({
          tenant_id: tenantId,
          provider_id: providerId,
          subject: data.subject,
          email: data.email ?? null,
          display_name: data.display_name ?? null,
        })
        .catch((error: unknown) => {
          if (isCertwrightError(error) && error.code === 'conflict') {
            const where = providerId === null ? 'as a local user' : `at provider '${providerId}'`;
            throw fail('duplicate', `a user with subject '${data.subject}' exists ${where}`, {
              fields: [{ field: 'subject', message: `taken ${where}` }],
            });
          }
          throw error;
        });
      if (roles.length > 0) await tx.roles.setRolesOf(user.id, roles);
      await this.audit.record(
        actor,
        {
          action: 'user_create',
          category: 'auth',
          resource_type: 'user',
          resource_id: user.id,
          details: { provider_id: providerId, roles },
        },
        tx,
      );
      return user;
    });
  }

  async rolesOfUser(tenantId: string, userId: string): Promise<string[]> {
    await this.getUser(tenantId, userId);
    return this.storage.roles.rolesOf(userId);
  }

  /** Replaces a user's directly assigned roles; every name must be a built-in or tenant role. */
  async setUserRoles(actor: Actor, tenantId: string, userId: string, roles: string[]): Promise<string[]> {
    await this.getUser(tenantId, userId);
    await this.checkRolesExist(tenantId, roles, 'roles');
    await this.storage.transaction(async (tx) => {
      await tx.roles.setRolesOf(userId, roles);
      await this.audit.record(
        actor,
        {
          action: 'role_assign',
          category: 'auth',
          resource_type: 'user',
          resource_id: userId,
          details: { roles },
        },
        tx,
      );
    });
    return this.storage.roles.rolesOf(userId);
  }

  listGroupMappings(tenantId: string): Promise<OidcGroupMapping[]> {
    return this.storage.oidcGroupMappings.list(tenantId);
  }

  async addGroupMapping(
    actor: Actor,
    tenantId: string,
    input: { provider_id: string; group: string; role: string },
  ): Promise<OidcGroupMapping> {
    await this.checkRolesExist(tenantId, [input.role], 'role');
    return this.storage.transaction(async (tx) => {
      const mapping = await tx.oidcGroupMappings.create({ tenant_id: tenantId, ...input });
      await this.audit.record(
        actor,
        {
          action: 'oidc_group_mapping_create',
          category: 'auth',
          resource_type: 'oidc_group_mapping',
          resource_id: mapping.id,
          details: { ...input },
        },
        tx,
      );
      return mapping;
    });
  }

  async removeGroupMapping(actor: Actor, tenantId: string, id: string): Promise<void> {
    await this.storage.transaction(async (tx) => {
      await tx.oidcGroupMappings.delete(tenantId, id);
      await this.audit.record(
        actor,
        {
          action: 'oidc_group_mapping_delete',
          category: 'auth',
          resource_type: 'oidc_group_mapping',
          resource_id: id,
        },
        tx,
      );
    });
  }

  listProviders(tenantId: string): Promise<OidcProvider[]> {
    return this.storage.oidcProviders.list(tenantId);
  }

  async getProvider(tenantId: string, id: string): Promise<OidcProvider> {
    const provider = await this.storage.oidcProviders.get(id);
    if (!provider || provider.tenant_id !== tenantId) throw notFound('OIDC provider', id);
    return provider;
  }

  async createProvider(
    actor: Actor,
    tenantId: string,
    input: Omit<NewOidcProvider, 'tenant_id'>,
  ): Promise<OidcProvider> {
    return this.storage.transaction(async (tx) => {
      const provider = await tx.oidcProviders.create({ ...input, tenant_id: tenantId });
      await this.audit.record(
        actor,
        {
          action: 'oidc_provider_create',
          category: 'auth',
          resource_type: 'oidc_provider',
          resource_id: provider.id,
          details: { issuer: provider.issuer },
        },
        tx,
      );
      return provider;
    });
  }

  async updateProvider(
    actor: Actor,
    tenantId: string,
    id: string,
    patch: OidcProviderPatch,
  ): Promise<OidcProvider> {
    const current = await this.getProvider(tenantId, id);
    // The client secret goes to the issuer's token endpoint: it stays with the issuer's origin.
    if (patch.issuer !== undefined) {
      const kept = current.client_secret_set && patch.client_secret === undefined;
      requireSecretsForNewOrigin({
        from: current.issuer,
        to: patch.issuer,
        kept: kept ? [{ field: 'client_secret' }] : [],
      });
    }
    return this.storage.transaction(async (tx) => {
      const provider = await tx.oidcProviders.update(id, patch);
      await this.audit.record(
        actor,
        {
          action: 'oidc_provider_update',
          category: 'auth',
          resource_type: 'oidc_provider',
          resource_id: id,
          details: { fields: Object.keys(patch).sort() },
        },
        tx,
      );
      return provider;
    });
  }

  async deleteProvider(actor: Actor, tenantId: string, id: string): Promise<void> {
    await this.getProvider(tenantId, id);
    await this.storage.transaction(async (tx) => {
      await tx.oidcProviders.delete(id);
      await this.audit.record(
        actor,
        { action: 'oidc_provider_delete', category: 'auth', resource_type: 'oidc_provider', resource_id: id },
        tx,
      );
    });
  }

  /**
   * The user an OIDC sign-in names, created on first sign-in; email and name follow the
   * provider. A deactivated user is answered as is: the caller refuses the sign-in.
   */
  async userForSignIn(
    provider: OidcProvider,
    claims: { subject: string; email: string | null; display_name: string | null },
  ): Promise<AuthUser> {
    const existing = await this.storage.users.findBySubject(provider.tenant_id, provider.id, claims.subject);
    if (!existing) {
      return this.storage.users.create({
        tenant_id: provider.tenant_id,
        provider_id: provider.id,
        subject: claims.subject,
        email: claims.email,
        display_name: claims.display_name,
      });
    }
    if (existing.email === claims.email && existing.display_name === claims.display_name) return existing;
    return this.storage.users.update(existing.id, { email: claims.email, display_name: claims.display_name });
  }

  /**
   * What a user may do now: the union of their direct roles and the roles their groups at
   * `providerId` map to. A deactivated user holds nothing.
   */
  async permissionsOf(
    user: AuthUser,
    providerId: string | null,
    groups: readonly string[],
  ): Promise<Set<Permission>> {
    if (user.deactivated_at !== null) return new Set();
    const [direct, mapped, custom] = await Promise.all([
      this.storage.roles.rolesOf(user.id),
      providerId === null
        ? Promise.resolve([])
        : this.storage.oidcGroupMappings.rolesFor(user.tenant_id, providerId, groups),
      this.storage.roles.list(user.tenant_id),
    ]);
    return permissionsOf([...direct, ...mapped], custom);
  }

  /**
   * `SVC_DEMO_SEED`: demo users (local, subject `demo:<role>`) with the built-in roles, created
   * when missing. They have no credential of their own; a demo deployment signs them in
   * through break-glass or an embedder's own authenticator.
   */
  async seedDemo(): Promise<AuthUser[]> {
    const seeded: AuthUser[] = [];
    for (const role of ['admin', 'operator', 'viewer', 'auditor']) {
      const subject = `${DEMO_SUBJECT_PREFIX}${role}`;
      const existing = await this.storage.users.findBySubject(DEFAULT_TENANT_ID, null, subject);
      if (existing) continue;
      await this.storage.transaction(async (tx) => {
        const user = await tx.users.create({
          tenant_id: DEFAULT_TENANT_ID,
          provider_id: null,
          subject,
          display_name: `Demo ${role}`,
        });
        await tx.roles.setRolesOf(user.id, [role]);
        seeded.push(user);
      });
    }
    return seeded;
  }

  /**
   * Removes what a demo left behind — the demo users with their sessions, roles and
   * break-glass credentials — and answers how many users went. Refused while demo mode is on.
   */
  async cleanupDemoResidue(actor: Actor, demoMode: boolean): Promise<number> {
    if (demoMode)
      throw fail('unavailable', 'demo mode is on (SVC_DEMO_SEED); restart without it to clean up');
    const demo: string[] = [];
    for (let page = 1; ; page += 1) {
      const batch = await this.storage.users.list({ tenant_id: DEFAULT_TENANT_ID, page, perPage: 500 });
      for (const user of batch.items) {
        if (user.provider_id === null && user.subject.startsWith(DEMO_SUBJECT_PREFIX)) demo.push(user.id);
      }
      if (batch.items.length < 500) break;
    }
    let removed = 0;
    for (const id of demo) if (await this.storage.users.delete(id)) removed += 1;
    await this.audit.record(actor, {
      action: 'demo_residue_cleanup',
      category: 'auth',
      resource_type: 'user',
      resource_id: 'demo',
      details: { removed },
    });
    return removed;
  }

  /**
   * Makes sure the first administrator exists (`SVC_BOOTSTRAP_ADMIN_*`): created once with the
   * `admin` role; an existing user is left as administrators have since made it.
   */
  async bootstrap(admin: BootstrapAdmin): Promise<{ user: AuthUser; created: boolean }> {
    const providerId = admin.provider_id ?? null;
    return this.storage.transaction(async (tx) => {
      const existing = await tx.users.findBySubject(DEFAULT_TENANT_ID, providerId, admin.subject);
      if (existing) return { user: existing, created: false };
      const user = await tx.users.create({
        tenant_id: DEFAULT_TENANT_ID,
        subject: admin.subject,
        provider_id: providerId,
        ...(admin.email ? { email: admin.email } : {}),
      });
      await tx.roles.setRolesOf(user.id, ['admin']);
      await this.audit.record(
        { type: 'system', id: 'bootstrap' },
        {
          action: 'user_bootstrap',
          category: 'auth',
          resource_type: 'user',
          resource_id: user.id,
          details: { roles: ['admin'] },
        },
        tx,
      );
      return { user, created: true };
    });
  }

  private async checkRolesExist(tenantId: string, roles: readonly string[], field: string): Promise<void> {
    const custom = new Set((await this.storage.roles.list(tenantId)).map((r) => r.name));
    const unknown = roles.filter((r) => !BUILT_IN_ROLE_NAMES.has(r) && !custom.has(r));
    if (unknown.length > 0) {
      throw validationError([{ field, message: `unknown role ${unknown.map((r) => `'${r}'`).join(', ')}` }]);
    }
  }
}

function roleView(role: Role): RoleView {
  return { name: role.name, description: role.description, permissions: role.permissions, built_in: false };
}

function checkRole(name: string, permissions: readonly string[]): Permission[] {
  if (BUILT_IN_ROLE_NAMES.has(name)) {
    throw fail('invalid_state', `'${name}' is a built-in role; choose another name`);
  }
  if (!ROLE_NAME.test(name)) {
    throw validationError([
      { field: 'name', message: 'lower-case letters, digits, _ . - (1–64), starting with a letter' },
    ]);
  }
  const unknown = permissions.filter((p) => !isPermission(p));
  if (unknown.length > 0) {
    throw validationError([
      { field: 'permissions', message: `unknown permission ${unknown.map((p) => `'${p}'`).join(', ')}` },
    ]);
  }
  return [...new Set(permissions as Permission[])];
}
