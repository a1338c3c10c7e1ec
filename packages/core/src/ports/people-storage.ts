import type { PageRequest, PageResult } from '../domain/common.js';
import type {
  AuthUser,
  BreakglassCredential,
  OidcGroupMapping,
  OidcProvider,
  Role,
  Session,
} from '../domain/people.js';

/*
 * Storage of users, roles, sessions and OIDC group mappings. Same error rules as the rest of
 * the storage port: not_found, conflict (reason `duplicate` for a taken unique value),
 * invalid_reference, unavailable.
 */

export type NewAuthUser = Pick<AuthUser, 'tenant_id' | 'subject' | 'provider_id'> &
  Partial<Pick<AuthUser, 'id' | 'email' | 'display_name' | 'last_login_at'>>;
export type AuthUserPatch = Partial<
  Pick<AuthUser, 'email' | 'display_name' | 'last_login_at' | 'deactivated_at'>
>;

export interface AuthUserRepository {
  /** `conflict` (duplicate) when the tenant already has a user for this provider and subject. */
  create(input: NewAuthUser): Promise<AuthUser>;
  get(id: string): Promise<AuthUser | null>;
  findBySubject(tenantId: string, providerId: string | null, subject: string): Promise<AuthUser | null>;
  /** Oldest first. */
  list(query?: PageRequest & { tenant_id?: string }): Promise<PageResult<AuthUser>>;
  /** `not_found` for an unknown id. */
  update(id: string, patch: AuthUserPatch): Promise<AuthUser>;
  /** Removes the user with their sessions, role assignments and break-glass credential; whether one existed. */
  delete(id: string): Promise<boolean>;
}

export type NewRole = Pick<Role, 'tenant_id' | 'name' | 'description' | 'permissions'>;

export interface RoleRepository {
  /** `conflict` (duplicate) when the tenant already has a role of that name. */
  create(input: NewRole): Promise<Role>;
  get(tenantId: string, name: string): Promise<Role | null>;
  /** By name. */
  list(tenantId: string): Promise<Role[]>;
  /** `not_found` for an unknown role. */
  update(
    tenantId: string,
    name: string,
    patch: Partial<Pick<Role, 'description' | 'permissions'>>,
  ): Promise<Role>;
  /** `not_found` for an unknown role; its assignments and group mappings go with it. */
  delete(tenantId: string, name: string): Promise<void>;
  /** The role names assigned to a user directly, sorted. */
  rolesOf(userId: string): Promise<string[]>;
  /** Replaces the user's direct assignments; `invalid_reference` for an unknown user. */
  setRolesOf(userId: string, roles: readonly string[]): Promise<void>;
}

export type NewSession = Omit<Session, 'id' | 'created_at' | 'last_seen_at'> & {
  id?: string;
  token_hash: string;
};

export interface SessionRepository {
  /** `invalid_reference` for an unknown user; `conflict` for a token hash in use. */
  create(input: NewSession): Promise<Session>;
  get(id: string): Promise<Session | null>;
  findByTokenHash(tokenHash: string): Promise<Session | null>;
  /** Records use: `last_seen_at` and the new idle end. Unknown ids are ignored. */
  touch(id: string, lastSeenAt: Date, idleExpiresAt: Date): Promise<void>;
  /** Newest first. */
  list(query?: PageRequest & { user_id?: string; tenant_id?: string }): Promise<PageResult<Session>>;
  /** Whether a session was removed. */
  delete(id: string): Promise<boolean>;
  /** Removes every session of the user except `exceptId`; answers how many. */
  deleteForUser(userId: string, exceptId?: string): Promise<number>;
  /**
   * Back-channel logout: removes the sessions from `providerId` with this `sid`, or of the user
   * with this `subject` at the provider, or both conditions (OpenID Connect Back-Channel Logout
   * 1.0 §2.6). Answers how many.
   */
  deleteForProvider(providerId: string, match: { sid?: string; subject?: string }): Promise<number>;
  /** Removes sessions whose absolute or idle end is at or before `now`; answers how many. */
  deleteExpired(now: Date): Promise<number>;
}

export type NewOidcGroupMapping = Pick<OidcGroupMapping, 'tenant_id' | 'provider_id' | 'group' | 'role'>;

export interface OidcGroupMappingRepository {
  /** `conflict` (duplicate) for the same tenant, provider, group and role. */
  create(input: NewOidcGroupMapping): Promise<OidcGroupMapping>;
  /** Oldest first. */
  list(tenantId: string, providerId?: string): Promise<OidcGroupMapping[]>;
  /** `not_found` when the tenant has no mapping with this id. */
  delete(tenantId: string, id: string): Promise<void>;
  /** Distinct roles mapped from any of `groups` at the provider, sorted. */
  rolesFor(tenantId: string, providerId: string, groups: readonly string[]): Promise<string[]>;
}

export type NewOidcProvider = Omit<OidcProvider, 'id' | 'client_secret_set' | 'created_at' | 'updated_at'> & {
  id?: string;
  client_secret?: string | null;
};
export type OidcProviderPatch = Partial<Omit<NewOidcProvider, 'id' | 'tenant_id'>>;

export interface OidcProviderRepository {
  /** `conflict` (duplicate) for a taken id or a tenant's second provider with the same name. */
  create(input: NewOidcProvider): Promise<OidcProvider>;
  get(id: string): Promise<OidcProvider | null>;
  /** The provider with its client secret opened (null when none is stored). */
  getWithSecret(id: string): Promise<(OidcProvider & { client_secret: string | null }) | null>;
  /** By name. `tenantId` absent: every tenant's (sign-in pages list them all). */
  list(tenantId?: string): Promise<OidcProvider[]>;
  /** `not_found` for an unknown id; `client_secret: null` removes the secret, absent keeps it. */
  update(id: string, patch: OidcProviderPatch): Promise<OidcProvider>;
  /** `not_found` for an unknown id. */
  delete(id: string): Promise<void>;
}

export interface BreakglassCredentialRepository {
  /** Creates or replaces the actor's password hash; `invalid_reference` for an unknown user. */
  set(actorId: string, userId: string, passwordHash: string): Promise<BreakglassCredential>;
  get(
    actorId: string,
  ): Promise<(BreakglassCredential & { password_hash: string; locked_until: Date | null }) | null>;
  /** By actor id, each with the end of its lockout (null: none set). */
  list(): Promise<(BreakglassCredential & { locked_until: Date | null })[]>;
  /**
   * Counts one failed password, atomically across every instance on the database. A run of
   * failures begins with its first one and lasts `windowMs`; a failure after that begins a new
   * run at 1. The failure that brings a run to `threshold` while the actor is not locked sets
   * `locked_until` to `now + lockMs` and is the only one answered `lockedNow: true`. Null for an
   * unknown actor.
   */
  recordFailure(
    actorId: string,
    now: Date,
    policy: { windowMs: number; threshold: number; lockMs: number },
  ): Promise<{ failures: number; lockedNow: boolean } | null>;
  /** Forgets the failures and any lockout (after a successful login or an unlock). */
  clearFailures(actorId: string): Promise<void>;
  /** `not_found` for an unknown actor. */
  delete(actorId: string): Promise<void>;
  markUsed(actorId: string, at: Date): Promise<void>;
}

/** The people repositories, part of {@link Storage}. */
export interface PeopleStorage {
  readonly users: AuthUserRepository;
  readonly roles: RoleRepository;
  readonly sessions: SessionRepository;
  readonly oidcGroupMappings: OidcGroupMappingRepository;
  readonly oidcProviders: OidcProviderRepository;
  readonly breakglass: BreakglassCredentialRepository;
}
