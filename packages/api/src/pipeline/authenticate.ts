import type { Permission, RequestHead, Services, TransportContext } from '@certwright/core';
import {
  ANONYMOUS_ADMIN,
  type Authenticator,
  type AuthSettings,
  apiKeyAuthenticator,
  bearerToken,
  type Principal,
} from '../auth/principal.js';
import { sessionTokenOf } from '../auth/session-cookie.js';
import { type ClientAddressResolver, clientKey } from '../http/client-address.js';
import { problem } from '../http/problem.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { Outcome } from './outcome.js';
import { tooManyRequests } from './rate-limit.js';

export interface AuthenticateOptions {
  auth: AuthSettings;
  /** Tried after the API key, before agent keys. */
  authenticators?: readonly Authenticator[];
  /** Sessions (cookie) and agent keys; without services only the API key and `authenticators`. */
  services?: Services;
  limiter: RateLimiter;
  clientAddress: ClientAddressResolver;
}

/**
 * The principal of a request to a route or mount that is not public, or the answer refusing
 * it: 401 for no or wrong credentials (counted against the client), 429 while the client is
 * locked out for too many wrong ones. A 401 never says which part was wrong.
 */
export type Authenticate = (
  head: RequestHead,
  transport: TransportContext,
  requestId: string,
  outcome: Outcome,
) => Promise<Principal | Response>;

export function authenticator(options: AuthenticateOptions): Authenticate {
  const { services, limiter } = options;
  const bearers: Authenticator[] = [
    ...(options.auth.type === 'api-key' ? [apiKeyAuthenticator(options.auth.secret)] : []),
    ...(options.authenticators ?? []),
    ...(services ? [agentKeyAuthenticator(services)] : []),
  ];

  /**
   * The principal of a session cookie (sent only when no Authorization header is): the user's
   * permissions now, so a role change or deactivation applies to the next request.
   */
  const sessionPrincipal = async (head: RequestHead): Promise<Principal | null> => {
    const token = services ? sessionTokenOf(head) : null;
    if (!services || token === null) return null;
    const active = await services.sessions.resolve(token, { user_agent: head.headers.get('user-agent') });
    if (!active) return null;
    return {
      kind: 'session',
      id: active.user.id,
      permissions: active.permissions,
      sessionId: active.session.id,
      tenantId: active.session.tenant_id,
      viaCookie: true,
    };
  };

  /** A principal; null for no or wrong credentials; a number: locked out for that many seconds. */
  const principalOf = async (head: RequestHead, client: string): Promise<Principal | null | number> => {
    if (options.auth.type === 'none') return ANONYMOUS_ADMIN;
    const header = head.headers.get('authorization');
    if (header === null) {
      if (sessionTokenOf(head) === null) return null;
      const locked = await limiter.authLockedOut(client);
      if (!locked.allowed) return locked.retryAfterSeconds;
      const principal = await sessionPrincipal(head);
      if (!principal) await limiter.authFailed(client);
      return principal;
    }
    const locked = await limiter.authLockedOut(client);
    if (!locked.allowed) return locked.retryAfterSeconds;
    const token = bearerToken(header);
    for (const bearer of token === null ? [] : bearers) {
      const principal = await bearer(token as string);
      if (principal) return principal;
    }
    await limiter.authFailed(client);
    return null;
  };

  return async (head, transport, requestId, outcome) => {
    const principal = await principalOf(head, clientKey(options.clientAddress(head, transport)));
    if (typeof principal === 'number') {
      outcome.rateLimited = true;
      return tooManyRequests(requestId, principal, 'too many failed API keys from this client');
    }
    if (principal) {
      outcome.principal = principal;
      return principal;
    }
    return problem({
      status: 401,
      code: 'unauthorized',
      detail: 'a valid API key is required',
      requestId,
      headers: { 'www-authenticate': 'Bearer' },
    });
  };
}

/**
 * Agent keys (`cwa_…`) as principals: the token's SHA-256 is looked up by hash.
 * Retired agents still authenticate so that their heartbeat gets 410 rather than 401.
 */
function agentKeyAuthenticator(services: Services): Authenticator {
  return async (token) => {
    const agent = await services.agents.authenticate(token);
    return agent ? { kind: 'agent', id: agent.id, permissions: AGENT_PERMISSIONS } : null;
  };
}

const AGENT_PERMISSIONS: ReadonlySet<Permission> = Object.freeze(new Set<Permission>(['agent.self']));
