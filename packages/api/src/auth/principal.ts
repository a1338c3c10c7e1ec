import { createHash, timingSafeEqual } from 'node:crypto';
import { type Actor, DEFAULT_TENANT_ID, type Permission } from '@certwright/core';

/**
 * Who is calling and what it may do. `permissions: 'all'` is the full-admin principal (the API
 * key, and `anonymous` with `SVC_AUTH_TYPE=none`); everyone else holds the set their roles grant.
 */
export interface Principal {
  kind: 'api-key' | 'anonymous' | 'agent' | 'session';
  id: string;
  permissions: 'all' | ReadonlySet<Permission>;
  /** The session behind a `session` principal (logout, "all but the current"). */
  sessionId?: string;
  /** The tenant of a `session` principal; mappings and users are scoped to it. */
  tenantId?: string;
  /** Authenticated by the session cookie: state-changing calls must carry the CSRF header. */
  viaCookie?: true;
}

/** The tenant a principal acts in: its own, or the default one for keys and `none`. */
export function tenantOf(principal: Principal | null): string {
  return principal?.tenantId ?? DEFAULT_TENANT_ID;
}

/** Whether the principal may do what the permission names. */
export function holds(principal: Principal | null, permission: Permission): boolean {
  if (!principal || !Object.hasOwn(principal, 'permissions')) return false;
  const granted = principal.permissions as unknown;
  // Checked by shape: an embedder's authenticator may hand over any object, and a missing or
  // malformed grant must deny rather than throw.
  if (granted === 'all') return true;
  return granted instanceof Set && granted.has(permission);
}

/** Resolves a bearer token to a principal, or null when the token is not one of its kind. */
export type Authenticator = (token: string) => Promise<Principal | null>;

export type AuthSettings = { type: 'api-key'; secret: string } | { type: 'none' };

/**
 * The configured API key is the admin principal. Both sides are hashed first so the
 * comparison is constant-time regardless of the presented token's length.
 */
export function apiKeyAuthenticator(secret: string): Authenticator {
  const expected = sha256(secret);
  const principal: Principal = Object.freeze({ kind: 'api-key', id: 'api-key', permissions: 'all' });
  return async (token) => (timingSafeEqual(sha256(token), expected) ? principal : null);
}

export const ANONYMOUS_ADMIN: Principal = Object.freeze({
  kind: 'anonymous',
  id: 'anonymous',
  permissions: 'all',
});

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** `Authorization: Bearer <token>`; anything else yields null. */
export function bearerToken(header: string | null): string | null {
  if (!header) return null;
  const match = /^Bearer[ \t]+([^\s]+)\s*$/i.exec(header);
  return match ? (match[1] as string) : null;
}

/** The audit actor for a principal (`api-key` principals are recorded as `api_key`). */
export function actorOf(principal: Principal | null): Actor {
  if (!principal) return { type: 'anonymous', id: 'anonymous' };
  const type =
    principal.kind === 'api-key' ? 'api_key' : principal.kind === 'session' ? 'user' : principal.kind;
  return { type, id: principal.id };
}
