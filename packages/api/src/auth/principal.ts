import { createHash, timingSafeEqual } from 'node:crypto';
import type { Actor } from '@certwright/core';

/** Who is calling. `admin` gates §5.4 admin-only routes. */
export interface Principal {
  kind: 'api-key' | 'anonymous' | 'agent' | 'session';
  id: string;
  admin: boolean;
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
  const principal: Principal = Object.freeze({ kind: 'api-key', id: 'api-key', admin: true });
  return async (token) => (timingSafeEqual(sha256(token), expected) ? principal : null);
}

export const ANONYMOUS_ADMIN: Principal = Object.freeze({ kind: 'anonymous', id: 'anonymous', admin: true });

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
