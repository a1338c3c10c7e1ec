import type { Permission } from './permissions.js';

/** The tenant of a deployment that does not partition its users. */
export const DEFAULT_TENANT_ID = 'default';

/** A person who signs in: through an OIDC provider (`provider_id`), or locally (null). */
export interface AuthUser {
  id: string;
  tenant_id: string;
  /** The identity provider's `sub`, or the local actor id. */
  subject: string;
  provider_id: string | null;
  email: string | null;
  display_name: string | null;
  created_at: Date;
  last_login_at: Date | null;
  /** Set while the user is deactivated: no session of theirs authenticates. */
  deactivated_at: Date | null;
}

/** A custom role: a named set of permissions within a tenant. */
export interface Role {
  tenant_id: string;
  name: string;
  description: string;
  permissions: Permission[];
  created_at: Date;
  updated_at: Date;
}

export type SessionAuthMethod = 'oidc' | 'breakglass' | 'bootstrap';

/** A server-side session; the cookie carries a random token whose SHA-256 is `token_hash`. */
export interface Session {
  id: string;
  user_id: string;
  tenant_id: string;
  auth_method: SessionAuthMethod;
  provider_id: string | null;
  /** The provider's `sid` claim, for back-channel logout (OpenID Connect Back-Channel Logout 1.0). */
  oidc_sid: string | null;
  /** The provider's group claims at sign-in; group mappings turn them into roles on every request. */
  groups: string[];
  ip_address: string | null;
  user_agent: string | null;
  created_at: Date;
  last_seen_at: Date;
  /** Absolute end, fixed at creation. */
  expires_at: Date;
  /** Idle end, pushed forward while the session is used, never past `expires_at`. */
  idle_expires_at: Date;
}

/** An OpenID Provider this service signs users in with, as a relying party. */
export interface OidcProvider {
  id: string;
  tenant_id: string;
  name: string;
  /** The issuer identifier; discovery is read from `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  client_id: string;
  /** Whether a client secret is stored (it is write-only and sealed at rest). */
  client_secret_set: boolean;
  scopes: string[];
  /** The ID token claim holding the user's groups. */
  groups_claim: string;
  email_claim: string;
  name_claim: string;
  /** Where the provider sends the browser back (`…/auth/oidc/callback`). */
  redirect_uri: string;
  /** Where the browser lands after a successful sign-in. */
  post_login_url: string;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A local password for signing in while the identity provider is down; the hash never leaves storage. */
export interface BreakglassCredential {
  actor_id: string;
  user_id: string;
  created_at: Date;
  updated_at: Date;
  last_used_at: Date | null;
}

/** Members of `group` at `provider_id` receive `role` in the tenant. */
export interface OidcGroupMapping {
  id: string;
  tenant_id: string;
  provider_id: string;
  group: string;
  role: string;
  created_at: Date;
}
