import {
  type AuthUser,
  type AuthUserRepository,
  type BreakglassCredential,
  type BreakglassCredentialRepository,
  CertwrightError,
  newId,
  notFound,
  type OidcGroupMapping,
  type OidcGroupMappingRepository,
  type OidcProvider,
  type OidcProviderRepository,
  type PeopleStorage,
  type Permission,
  type Role,
  type RoleRepository,
  type Session,
  type SessionRepository,
} from '@certwright/core';
import type { Selectable } from 'kysely';
import { atomic, type Ctx, defined, parseJson, toBool } from '../context.js';
import type {
  AuthOidcGroupMappingsTable,
  AuthOidcProvidersTable,
  AuthRolesTable,
  AuthSessionsTable,
  AuthUsersTable,
} from '../schema.js';
import { listPage } from './crud.js';

/** Local users have no provider; the column stores '' so the unique constraint still holds. */
const LOCAL = '';

const toUser = (r: Selectable<AuthUsersTable>): AuthUser => ({
  id: r.id,
  tenant_id: r.tenant_id,
  subject: r.subject,
  provider_id: r.provider_key === LOCAL ? null : r.provider_key,
  email: r.email,
  display_name: r.display_name,
  created_at: r.created_at,
  last_login_at: r.last_login_at,
  deactivated_at: r.deactivated_at,
});

const toRole = (r: Selectable<AuthRolesTable>): Role => ({
  tenant_id: r.tenant_id,
  name: r.name,
  description: r.description,
  permissions: parseJson<Permission[]>(r.permissions, []),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const SESSION_COLUMNS = [
  'id',
  'user_id',
  'tenant_id',
  'auth_method',
  'provider_id',
  'oidc_sid',
  'groups',
  'ip_address',
  'user_agent',
  'created_at',
  'last_seen_at',
  'expires_at',
  'idle_expires_at',
] as const;

const toSession = (r: Pick<Selectable<AuthSessionsTable>, (typeof SESSION_COLUMNS)[number]>): Session => ({
  id: r.id,
  user_id: r.user_id,
  tenant_id: r.tenant_id,
  auth_method: r.auth_method as Session['auth_method'],
  provider_id: r.provider_id,
  oidc_sid: r.oidc_sid,
  groups: parseJson<string[]>(r.groups, []),
  ip_address: r.ip_address,
  user_agent: r.user_agent,
  created_at: r.created_at,
  last_seen_at: r.last_seen_at,
  expires_at: r.expires_at,
  idle_expires_at: r.idle_expires_at,
});

const toMapping = (r: Selectable<AuthOidcGroupMappingsTable>): OidcGroupMapping => ({
  id: r.id,
  tenant_id: r.tenant_id,
  provider_id: r.provider_id,
  group: r.group_name,
  role: r.role,
  created_at: r.created_at,
});

function userRepository(ctx: Ctx): AuthUserRepository {
  const get = async (id: string) => {
    const r = await ctx.db.selectFrom('auth_users').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toUser(r) : null;
  };
  return {
    get,
    async create(input) {
      const user: AuthUser = {
        id: input.id ?? newId('user'),
        tenant_id: input.tenant_id,
        subject: input.subject,
        provider_id: input.provider_id,
        email: input.email ?? null,
        display_name: input.display_name ?? null,
        created_at: ctx.clock.now(),
        last_login_at: input.last_login_at ?? null,
        deactivated_at: null,
      };
      const { provider_id, ...row } = user;
      await ctx.db
        .insertInto('auth_users')
        .values({ ...row, provider_key: provider_id ?? LOCAL })
        .execute();
      return user;
    },
    async findBySubject(tenantId, providerId, subject) {
      const r = await ctx.db
        .selectFrom('auth_users')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('provider_key', '=', providerId ?? LOCAL)
        .where('subject', '=', subject)
        .executeTakeFirst();
      return r ? toUser(r) : null;
    },
    async list(query = {}) {
      let q = ctx.db.selectFrom('auth_users');
      if (query.tenant_id !== undefined) q = q.where('tenant_id', '=', query.tenant_id);
      return listPage(q, query, (s) => s.selectAll().orderBy('created_at').orderBy('id'), toUser);
    },
    async delete(id) {
      const res = await ctx.db.deleteFrom('auth_users').where('id', '=', id).executeTakeFirst();
      return Number(res.numDeletedRows) > 0;
    },
    async update(id, patch) {
      const values = defined(patch);
      if (Object.keys(values).length > 0) {
        const res = await ctx.db
          .updateTable('auth_users')
          .set(values)
          .where('id', '=', id)
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) === 0 && !(await get(id))) throw notFound('user', id);
      }
      const user = await get(id);
      if (!user) throw notFound('user', id);
      return user;
    },
  };
}

function roleRepository(ctx: Ctx): RoleRepository {
  const get = async (tenantId: string, name: string) => {
    const r = await ctx.db
      .selectFrom('auth_roles')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('name', '=', name)
      .executeTakeFirst();
    return r ? toRole(r) : null;
  };
  return {
    get,
    async create(input) {
      const now = ctx.clock.now();
      const role: Role = { ...input, permissions: [...input.permissions], created_at: now, updated_at: now };
      await ctx.db
        .insertInto('auth_roles')
        .values({ ...role, permissions: JSON.stringify(role.permissions) })
        .execute();
      return role;
    },
    async list(tenantId) {
      const rows = await ctx.db
        .selectFrom('auth_roles')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .orderBy('name')
        .execute();
      return rows.map(toRole);
    },
    async update(tenantId, name, patch) {
      if (!(await get(tenantId, name))) throw notFound('role', name);
      await ctx.db
        .updateTable('auth_roles')
        .set({
          ...defined({
            description: patch.description,
            permissions: patch.permissions === undefined ? undefined : JSON.stringify(patch.permissions),
          }),
          updated_at: ctx.clock.now(),
        })
        .where('tenant_id', '=', tenantId)
        .where('name', '=', name)
        .execute();
      return (await get(tenantId, name)) as Role;
    },
    delete: (tenantId, name) =>
      atomic(ctx, async (tx) => {
        const res = await tx.db
          .deleteFrom('auth_roles')
          .where('tenant_id', '=', tenantId)
          .where('name', '=', name)
          .executeTakeFirst();
        if (Number(res.numDeletedRows) === 0) throw notFound('role', name);
        const users = tx.db.selectFrom('auth_users').select('id').where('tenant_id', '=', tenantId);
        await tx.db
          .deleteFrom('auth_user_roles')
          .where('role', '=', name)
          .where('user_id', 'in', users)
          .execute();
        await tx.db
          .deleteFrom('auth_oidc_group_mappings')
          .where('tenant_id', '=', tenantId)
          .where('role', '=', name)
          .execute();
      }),
    async rolesOf(userId) {
      const rows = await ctx.db
        .selectFrom('auth_user_roles')
        .select('role')
        .where('user_id', '=', userId)
        .orderBy('role')
        .execute();
      return rows.map((r) => r.role);
    },
    setRolesOf: (userId, roles) =>
      atomic(ctx, async (tx) => {
        const user = await tx.db
          .selectFrom('auth_users')
          .select('id')
          .where('id', '=', userId)
          .executeTakeFirst();
        if (!user) throw new CertwrightError('invalid_reference', `unknown user '${userId}'`);
        await tx.db.deleteFrom('auth_user_roles').where('user_id', '=', userId).execute();
        const unique = [...new Set(roles)];
        if (unique.length > 0) {
          await tx.db
            .insertInto('auth_user_roles')
            .values(unique.map((role) => ({ user_id: userId, role })))
            .execute();
        }
      }),
  };
}

function sessionRepository(ctx: Ctx): SessionRepository {
  const count = (n: bigint | number | undefined) => Number(n ?? 0);
  return {
    async create(input) {
      const now = ctx.clock.now();
      const { token_hash, id, ...rest } = input;
      const session: Session = {
        ...rest,
        groups: [...rest.groups],
        id: id ?? newId('session'),
        created_at: now,
        last_seen_at: now,
      };
      await ctx.db
        .insertInto('auth_sessions')
        .values({ ...session, groups: JSON.stringify(session.groups), token_hash })
        .execute();
      return session;
    },
    async get(id) {
      const r = await ctx.db
        .selectFrom('auth_sessions')
        .select(SESSION_COLUMNS)
        .where('id', '=', id)
        .executeTakeFirst();
      return r ? toSession(r) : null;
    },
    async findByTokenHash(tokenHash) {
      const r = await ctx.db
        .selectFrom('auth_sessions')
        .select(SESSION_COLUMNS)
        .where('token_hash', '=', tokenHash)
        .executeTakeFirst();
      return r ? toSession(r) : null;
    },
    async touch(id, lastSeenAt, idleExpiresAt) {
      await ctx.db
        .updateTable('auth_sessions')
        .set({ last_seen_at: lastSeenAt, idle_expires_at: idleExpiresAt })
        .where('id', '=', id)
        .execute();
    },
    async list(query = {}) {
      let q = ctx.db.selectFrom('auth_sessions');
      if (query.user_id !== undefined) q = q.where('user_id', '=', query.user_id);
      if (query.tenant_id !== undefined) q = q.where('tenant_id', '=', query.tenant_id);
      return listPage(
        q,
        query,
        (s) => s.select(SESSION_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
        toSession,
      );
    },
    async delete(id) {
      const res = await ctx.db.deleteFrom('auth_sessions').where('id', '=', id).executeTakeFirst();
      return count(res.numDeletedRows) > 0;
    },
    async deleteForUser(userId, exceptId) {
      let q = ctx.db.deleteFrom('auth_sessions').where('user_id', '=', userId);
      if (exceptId !== undefined) q = q.where('id', '<>', exceptId);
      return count((await q.executeTakeFirst()).numDeletedRows);
    },
    async deleteForProvider(providerId, match) {
      if (match.sid === undefined && match.subject === undefined) return 0;
      let q = ctx.db.deleteFrom('auth_sessions').where('provider_id', '=', providerId);
      if (match.sid !== undefined) q = q.where('oidc_sid', '=', match.sid);
      if (match.subject !== undefined) {
        const users = ctx.db
          .selectFrom('auth_users')
          .select('id')
          .where('provider_key', '=', providerId)
          .where('subject', '=', match.subject);
        q = q.where('user_id', 'in', users);
      }
      return count((await q.executeTakeFirst()).numDeletedRows);
    },
    async deleteExpired(now) {
      const res = await ctx.db
        .deleteFrom('auth_sessions')
        .where((eb) => eb.or([eb('expires_at', '<=', now), eb('idle_expires_at', '<=', now)]))
        .executeTakeFirst();
      return count(res.numDeletedRows);
    },
  };
}

function groupMappingRepository(ctx: Ctx): OidcGroupMappingRepository {
  return {
    async create(input) {
      const mapping: OidcGroupMapping = {
        ...input,
        id: newId('oidcGroupMapping'),
        created_at: ctx.clock.now(),
      };
      const { group, ...rest } = mapping;
      await ctx.db
        .insertInto('auth_oidc_group_mappings')
        .values({ ...rest, group_name: group })
        .execute();
      return mapping;
    },
    async list(tenantId, providerId) {
      let q = ctx.db.selectFrom('auth_oidc_group_mappings').selectAll().where('tenant_id', '=', tenantId);
      if (providerId !== undefined) q = q.where('provider_id', '=', providerId);
      return (await q.orderBy('created_at').orderBy('id').execute()).map(toMapping);
    },
    async delete(tenantId, id) {
      const res = await ctx.db
        .deleteFrom('auth_oidc_group_mappings')
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) throw notFound('group mapping', id);
    },
    async rolesFor(tenantId, providerId, groups) {
      if (groups.length === 0) return [];
      const rows = await ctx.db
        .selectFrom('auth_oidc_group_mappings')
        .select('role')
        .distinct()
        .where('tenant_id', '=', tenantId)
        .where('provider_id', '=', providerId)
        .where('group_name', 'in', [...groups])
        .orderBy('role')
        .execute();
      return rows.map((r) => r.role);
    },
  };
}

export function peopleRepositories(ctx: Ctx): PeopleStorage {
  return {
    users: userRepository(ctx),
    roles: roleRepository(ctx),
    sessions: sessionRepository(ctx),
    oidcGroupMappings: groupMappingRepository(ctx),
    oidcProviders: oidcProviderRepository(ctx),
    breakglass: breakglassRepository(ctx),
  };
}

export const secretContext = (id: string) => `oidc-provider:${id}:client-secret`;

const toProvider = (r: Selectable<AuthOidcProvidersTable>): OidcProvider => ({
  id: r.id,
  tenant_id: r.tenant_id,
  name: r.name,
  issuer: r.issuer,
  client_id: r.client_id,
  client_secret_set: r.client_secret_sealed !== null,
  scopes: parseJson<string[]>(r.scopes, []),
  groups_claim: r.groups_claim,
  email_claim: r.email_claim,
  name_claim: r.name_claim,
  redirect_uri: r.redirect_uri,
  post_login_url: r.post_login_url,
  enabled: toBool(r.enabled),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export function oidcProviderRepository(ctx: Ctx): OidcProviderRepository {
  const row = (id: string) =>
    ctx.db.selectFrom('auth_oidc_providers').selectAll().where('id', '=', id).executeTakeFirst();
  const get = async (id: string) => {
    const r = await row(id);
    return r ? toProvider(r) : null;
  };
  const seal = (id: string, secret: string | null | undefined) =>
    secret === null || secret === undefined ? Promise.resolve(null) : ctx.box.seal(secret, secretContext(id));
  return {
    get,
    async getWithSecret(id) {
      const r = await row(id);
      if (!r) return null;
      const secret =
        r.client_secret_sealed === null
          ? null
          : await ctx.box.open(r.client_secret_sealed, secretContext(id));
      return { ...toProvider(r), client_secret: secret };
    },
    async create(input) {
      const now = ctx.clock.now();
      const id = input.id ?? newId('oidcProvider');
      const { client_secret, ...rest } = input;
      await ctx.db
        .insertInto('auth_oidc_providers')
        .values({
          ...rest,
          id,
          scopes: JSON.stringify(rest.scopes),
          client_secret_sealed: await seal(id, client_secret),
          created_at: now,
          updated_at: now,
        })
        .execute();
      return (await get(id)) as OidcProvider;
    },
    async list(tenantId) {
      let q = ctx.db.selectFrom('auth_oidc_providers').selectAll();
      if (tenantId !== undefined) q = q.where('tenant_id', '=', tenantId);
      return (await q.orderBy('name').orderBy('id').execute()).map(toProvider);
    },
    async update(id, patch) {
      if (!(await row(id))) throw notFound('OIDC provider', id);
      const { client_secret, scopes, ...rest } = patch;
      await ctx.db
        .updateTable('auth_oidc_providers')
        .set({
          ...defined(rest),
          ...(scopes !== undefined ? { scopes: JSON.stringify(scopes) } : {}),
          ...(client_secret !== undefined ? { client_secret_sealed: await seal(id, client_secret) } : {}),
          updated_at: ctx.clock.now(),
        })
        .where('id', '=', id)
        .execute();
      return (await get(id)) as OidcProvider;
    },
    async delete(id) {
      const res = await ctx.db.deleteFrom('auth_oidc_providers').where('id', '=', id).executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) throw notFound('OIDC provider', id);
    },
  };
}

const CREDENTIAL_COLUMNS = ['actor_id', 'user_id', 'created_at', 'updated_at', 'last_used_at'] as const;

function breakglassRepository(ctx: Ctx): BreakglassCredentialRepository {
  const get = async (actorId: string) => {
    const r = await ctx.db
      .selectFrom('auth_breakglass_credentials')
      .select([...CREDENTIAL_COLUMNS, 'password_hash', 'locked_until'])
      .where('actor_id', '=', actorId)
      .executeTakeFirst();
    if (!r) return null;
    return {
      ...view(r),
      password_hash: r.password_hash,
      locked_until: r.locked_until ? new Date(r.locked_until) : null,
    };
  };
  const view = (
    r: Pick<BreakglassCredential, (typeof CREDENTIAL_COLUMNS)[number]>,
  ): BreakglassCredential => ({
    actor_id: r.actor_id,
    user_id: r.user_id,
    created_at: r.created_at,
    updated_at: r.updated_at,
    last_used_at: r.last_used_at,
  });
  return {
    get,
    set: (actorId, userId, passwordHash) =>
      atomic(ctx, async (tx) => {
        const now = ctx.clock.now();
        const existing = await tx.db
          .selectFrom('auth_breakglass_credentials')
          .select('actor_id')
          .where('actor_id', '=', actorId)
          .forUpdate()
          .executeTakeFirst();
        if (existing) {
          await tx.db
            .updateTable('auth_breakglass_credentials')
            .set({ user_id: userId, password_hash: passwordHash, updated_at: now })
            .where('actor_id', '=', actorId)
            .execute();
        } else {
          await tx.db
            .insertInto('auth_breakglass_credentials')
            .values({
              actor_id: actorId,
              user_id: userId,
              password_hash: passwordHash,
              created_at: now,
              updated_at: now,
              last_used_at: null,
            })
            .execute();
        }
        const row = await tx.db
          .selectFrom('auth_breakglass_credentials')
          .select(CREDENTIAL_COLUMNS)
          .where('actor_id', '=', actorId)
          .executeTakeFirstOrThrow();
        return view(row);
      }),
    async list() {
      const rows = await ctx.db
        .selectFrom('auth_breakglass_credentials')
        .select([...CREDENTIAL_COLUMNS, 'locked_until'])
        .orderBy('actor_id')
        .execute();
      return rows.map((r) => ({
        ...view(r),
        locked_until: r.locked_until ? new Date(r.locked_until) : null,
      }));
    },
    recordFailure: (actorId, now, policy) =>
      atomic(ctx, async (tx) => {
        // The row lock serializes concurrent failures, so exactly one of them reaches the threshold.
        const row = await tx.db
          .selectFrom('auth_breakglass_credentials')
          .select(['failed_attempts', 'failures_since', 'locked_until'])
          .where('actor_id', '=', actorId)
          .forUpdate()
          .executeTakeFirst();
        if (!row) return null;
        const since = row.failures_since ? new Date(row.failures_since) : null;
        const fresh = since === null || now.getTime() - since.getTime() >= policy.windowMs;
        const failures = fresh ? 1 : Number(row.failed_attempts) + 1;
        const locked = row.locked_until !== null && new Date(row.locked_until).getTime() > now.getTime();
        const lockedNow = !locked && failures >= policy.threshold;
        await tx.db
          .updateTable('auth_breakglass_credentials')
          .set({
            failed_attempts: failures,
            failures_since: fresh ? now : since,
            ...(lockedNow ? { locked_until: new Date(now.getTime() + policy.lockMs) } : {}),
          })
          .where('actor_id', '=', actorId)
          .execute();
        return { failures, lockedNow };
      }),
    async clearFailures(actorId) {
      await ctx.db
        .updateTable('auth_breakglass_credentials')
        .set({ failed_attempts: 0, failures_since: null, locked_until: null })
        .where('actor_id', '=', actorId)
        .execute();
    },
    async delete(actorId) {
      const res = await ctx.db
        .deleteFrom('auth_breakglass_credentials')
        .where('actor_id', '=', actorId)
        .executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) throw notFound('break-glass credential', actorId);
    },
    async markUsed(actorId, at) {
      await ctx.db
        .updateTable('auth_breakglass_credentials')
        .set({ last_used_at: at })
        .where('actor_id', '=', actorId)
        .execute();
    },
  };
}
