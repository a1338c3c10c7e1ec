import { createHash, randomBytes } from 'node:crypto';
import {
  type Clock,
  type EphemeralStore,
  type Logger,
  type OidcProvider,
  type Services,
  SYSTEM_ACTOR,
} from '@certwright/core';
import { administratorFetchFailed, type OutboundClient, refusedDestination } from '@certwright/core/net';
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { parseCookies } from './session-cookie.js';

/** The pre-login cookie: ties the callback to the browser that started the sign-in. */
export const PRELOGIN_COOKIE = '__Host-cw_prelogin';
const PRELOGIN_TTL_MS = 10 * 60_000;
const BCL_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** Logout tokens larger than this are refused before any parser sees them. */
const MAX_LOGOUT_TOKEN = 16 * 1024;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Why a sign-in failed, as the `reason` of `/login?error=oidc_failed&reason=…` (docs/auth/oidc.md). */
export type OidcFailure =
  | 'unknown_provider'
  | 'missing_prelogin'
  | 'prelogin_mismatch'
  | 'provider_error'
  | 'provider_unavailable'
  | 'token_invalid'
  | 'user_deactivated';

export interface OidcSettings {
  /** `SVC_OIDC_PRELOGIN_REQUIRE_UA` (default true): the callback must come from the same User-Agent. */
  preloginRequireUa: boolean;
  /** `SVC_OIDC_PRELOGIN_REQUIRE_IP` (default false): the callback must come from the same client address. */
  preloginRequireIp: boolean;
  /** `SVC_OIDC_BCL_MAX_AGE_SECONDS` (default 300): logout tokens older than this are refused. */
  bclMaxAgeSeconds: number;
}

export const DEFAULT_OIDC_SETTINGS: OidcSettings = Object.freeze({
  preloginRequireUa: true,
  preloginRequireIp: false,
  bclMaxAgeSeconds: 300,
});

export interface OidcRelyingPartyOptions {
  services: Services;
  /** Identity providers are configured by administrators: an operator-configured client (no metadata addresses). */
  outbound: OutboundClient;
  /** Trust anchors for identity providers on a private CA; default the system roots. */
  ca?: string | readonly string[];
  settings?: Partial<OidcSettings>;
  logger: Logger;
}

interface Prelogin {
  provider_id: string;
  state: string;
  nonce: string;
  verifier: string;
  ua: string | null;
  ip: string | null;
}

interface Discovered {
  config: client.Configuration;
  jwks?: { set: JSONWebKeySet; fetchedAt: Date; error: string | null };
  key: string;
}

export interface JwksStatus {
  provider_id: string;
  issuer: string;
  jwks_uri: string | null;
  key_ids: string[];
  key_count: number;
  fetched_at: Date | null;
  last_error: string | null;
}

export interface DiscoveryResult {
  ok: boolean;
  issuer: string | null;
  authorization_endpoint: string | null;
  token_endpoint: string | null;
  userinfo_endpoint: string | null;
  jwks_uri: string | null;
  end_session_endpoint: string | null;
  backchannel_logout_supported: boolean;
  backchannel_logout_session_supported: boolean;
  scopes_supported: string[];
  error: string | null;
}

class Refused extends Error {
  constructor(readonly reason: OidcFailure) {
    super(reason);
  }
}

/**
 * The relying party of OpenID Connect Core 1.0 (authorization code flow with PKCE, RFC 7636,
 * `state` and `nonce`) and of OpenID Connect Back-Channel Logout 1.0. Discovery and keys are
 * fetched through the outbound client and cached per provider version.
 */
export class OidcRelyingParty {
  readonly settings: OidcSettings;
  readonly #services: Services;
  readonly #outbound: OutboundClient;
  readonly #ca: string | readonly string[] | undefined;
  readonly #logger: Logger;
  readonly #cache = new Map<string, Discovered>();

  constructor(options: OidcRelyingPartyOptions) {
    this.settings = { ...DEFAULT_OIDC_SETTINGS, ...options.settings };
    this.#services = options.services;
    this.#outbound = options.outbound;
    this.#ca = options.ca;
    this.#logger = options.logger;
  }

  get #ephemeral(): EphemeralStore {
    return this.#services.deps.ephemeral as EphemeralStore;
  }

  get #clock(): Clock {
    return this.#services.deps.clock;
  }

  /** `fetch` for openid-client over the outbound client: checked addresses, bounded answers. */
  readonly #fetch = async (url: string, init: client.CustomFetchOptions): Promise<Response> => {
    const headers: [string, string][] = [];
    new Headers(init.headers as HeadersInit).forEach((value, name) => {
      headers.push([name, value]);
    });
    const body =
      typeof init.body === 'string'
        ? init.body
        : init.body instanceof URLSearchParams
          ? init.body.toString()
          : undefined;
    const answer = await this.#outbound.request(url, {
      method: init.method,
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(this.#ca ? { tls: { ca: this.#ca } } : {}),
      maxResponseBytes: 512 * 1024,
    });
    return new Response(answer.status === 204 ? null : Buffer.from(answer.body), {
      status: answer.status,
      headers: answer.headers,
    });
  };

  async #discover(provider: OidcProvider & { client_secret: string | null }): Promise<Discovered> {
    const key = `${provider.id}@${provider.updated_at.getTime()}`;
    const cached = this.#cache.get(provider.id);
    if (cached && cached.key === key) return cached;
    const auth = provider.client_secret ? client.ClientSecretBasic(provider.client_secret) : client.None();
    const config = await client.discovery(new URL(provider.issuer), provider.client_id, undefined, auth, {
      [client.customFetch]: this.#fetch,
      timeout: 10,
    });
    config[client.customFetch] = this.#fetch;
    const found: Discovered = { config, key };
    this.#cache.set(provider.id, found);
    return found;
  }

  async #provider(id: string) {
    const provider = await this.#services.deps.storage.oidcProviders.getWithSecret(id);
    return provider?.enabled ? provider : null;
  }

  /** `GET /auth/oidc/login`: where to send the browser, and the pre-login cookie to set. */
  async login(
    providerId: string,
    request: Request,
    clientAddress: string,
  ): Promise<{ location: string; cookie: string }> {
    const provider = await this.#provider(providerId);
    if (!provider) {
      // The id is the caller's text: recorded only when it names a provider (perhaps a disabled one).
      const known = await this.#services.deps.storage.oidcProviders.get(providerId);
      await this.#loginFailed(known ? known.id : null, 'unknown_provider', clientAddress);
      throw new Refused('unknown_provider');
    }
    let discovered: Discovered;
    try {
      discovered = await this.#discover(provider);
    } catch (error) {
      this.#logger.warn({ err: error, provider_id: provider.id }, 'OIDC discovery failed');
      await this.#loginFailed(provider.id, 'provider_unavailable', clientAddress);
      throw new Refused('provider_unavailable');
    }
    const prelogin: Prelogin = {
      provider_id: provider.id,
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      ua: request.headers.get('user-agent'),
      ip: clientAddress,
    };
    const id = randomBytes(32).toString('base64url');
    await this.#ephemeral.putIfAbsent(preloginKey(id), JSON.stringify(prelogin), PRELOGIN_TTL_MS);
    const url = client.buildAuthorizationUrl(discovered.config, {
      redirect_uri: provider.redirect_uri,
      scope: provider.scopes.join(' '),
      state: prelogin.state,
      nonce: prelogin.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(prelogin.verifier),
      code_challenge_method: 'S256',
    });
    return {
      location: url.href,
      cookie: `${PRELOGIN_COOKIE}=${id}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${PRELOGIN_TTL_MS / 1000}`,
    };
  }

  /**
   * `GET /auth/oidc/callback`: the authorization response checked against the pre-login
   * (browser, state, PKCE verifier, nonce) and exchanged for an ID token; a session on success.
   */
  async callback(
    request: Request,
    clientAddress: string,
  ): Promise<
    { ok: true; token: string; location: string; maxAgeSeconds: number } | { ok: false; reason: OidcFailure }
  > {
    const id = parseCookies(request.headers.get('cookie')).get(PRELOGIN_COOKIE);
    const stored =
      id && /^[A-Za-z0-9_-]{43}$/.test(id) ? await this.#ephemeral.consume(preloginKey(id)) : undefined;
    let providerId: string | null = null;
    try {
      if (!stored) throw new Refused('missing_prelogin');
      const prelogin = JSON.parse(stored) as Prelogin;
      providerId = prelogin.provider_id;
      if (this.settings.preloginRequireUa && prelogin.ua !== request.headers.get('user-agent')) {
        throw new Refused('prelogin_mismatch');
      }
      if (this.settings.preloginRequireIp && prelogin.ip !== clientAddress)
        throw new Refused('prelogin_mismatch');
      const provider = await this.#provider(prelogin.provider_id);
      if (!provider) throw new Refused('unknown_provider');
      const incoming = new URL(request.url);
      if (incoming.searchParams.has('error')) throw new Refused('provider_error');
      const current = new URL(provider.redirect_uri);
      current.search = incoming.search;
      let discovered: Discovered;
      try {
        discovered = await this.#discover(provider);
      } catch {
        throw new Refused('provider_unavailable');
      }
      let claims: client.IDToken;
      try {
        const tokens = await client.authorizationCodeGrant(discovered.config, current, {
          pkceCodeVerifier: prelogin.verifier,
          expectedState: prelogin.state,
          expectedNonce: prelogin.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims() as client.IDToken;
      } catch (error) {
        this.#logger.info({ err: error, provider_id: provider.id }, 'OIDC callback refused');
        throw new Refused('token_invalid');
      }
      const user = await this.#services.people.userForSignIn(provider, {
        subject: claims.sub,
        email: stringClaim(claims[provider.email_claim]),
        display_name: stringClaim(claims[provider.name_claim]),
      });
      if (user.deactivated_at !== null) throw new Refused('user_deactivated');
      const { token, session } = await this.#services.sessions.start(user, {
        auth_method: 'oidc',
        provider_id: provider.id,
        oidc_sid: stringClaim(claims.sid),
        groups: groupsClaim(claims[provider.groups_claim]),
        ip_address: clientAddress,
        user_agent: request.headers.get('user-agent'),
      });
      const maxAgeSeconds = (session.expires_at.getTime() - this.#clock.now().getTime()) / 1000;
      return { ok: true, token, location: provider.post_login_url, maxAgeSeconds };
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
      await this.#loginFailed(providerId, error.reason, clientAddress);
      return { ok: false, reason: error.reason };
    }
  }

  /** Every refused sign-in, at its start or at the callback: `login_failed`, category `auth`. */
  async #loginFailed(providerId: string | null, reason: OidcFailure, clientAddress: string): Promise<void> {
    await this.#services.audit.record(SYSTEM_ACTOR, {
      action: 'login_failed',
      category: 'auth',
      resource_type: 'oidc_provider',
      resource_id: providerId ?? 'unknown',
      details: { reason, ip: clientAddress },
    });
  }

  /**
   * Back-channel logout: true when the logout token was valid and its sessions are gone. Any
   * failure is false, and the caller answers every false the same way.
   */
  async backChannelLogout(logoutToken: string | null): Promise<boolean> {
    if (!logoutToken || logoutToken.length > MAX_LOGOUT_TOKEN || !JWT_SHAPE.test(logoutToken)) return false;
    let unverified: ReturnType<typeof decodeJwt>;
    try {
      unverified = decodeJwt(logoutToken);
    } catch {
      return false;
    }
    if (typeof unverified.iss !== 'string') return false;
    const candidates = (await this.#services.deps.storage.oidcProviders.list()).filter(
      (p) => p.enabled && sameIssuer(p.issuer, unverified.iss as string),
    );
    for (const candidate of candidates) {
      const provider = await this.#provider(candidate.id);
      if (!provider) continue;
      const claims = await this.#verifyLogoutToken(provider, logoutToken);
      if (!claims) continue;
      const sid = stringClaim(claims.sid) ?? undefined;
      const sub = stringClaim(claims.sub) ?? undefined;
      const fresh = await this.#ephemeral.putIfAbsent(
        `oidc:bcl:jti:${provider.id}:${createHash('sha256').update(String(claims.jti)).digest('hex')}`,
        '1',
        this.settings.bclMaxAgeSeconds * 2000,
      );
      if (!fresh) return false;
      const ended = await this.#services.deps.storage.sessions.deleteForProvider(provider.id, {
        ...(sid !== undefined ? { sid } : {}),
        ...(sub !== undefined ? { subject: sub } : {}),
      });
      await this.#services.audit.record(SYSTEM_ACTOR, {
        action: 'oidc_backchannel_logout',
        category: 'auth',
        resource_type: 'oidc_provider',
        resource_id: provider.id,
        details: {
          sessions_ended: ended,
          ...(sub !== undefined ? { sub } : {}),
          ...(sid !== undefined ? { sid } : {}),
        },
      });
      return true;
    }
    await this.#services.audit.record(SYSTEM_ACTOR, {
      action: 'oidc_backchannel_logout_refused',
      category: 'auth',
      resource_type: 'oidc_provider',
      resource_id: candidates[0]?.id ?? 'unknown',
    });
    return false;
  }

  async #verifyLogoutToken(provider: OidcProvider & { client_secret: string | null }, token: string) {
    let discovered: Discovered;
    try {
      discovered = await this.#discover(provider);
    } catch {
      return null;
    }
    for (const refresh of [false, true]) {
      const set = await this.#jwks(discovered, refresh).catch(() => null);
      if (!set) return null;
      try {
        const { payload } = await jwtVerify(token, createLocalJWKSet(set), {
          issuer: discovered.config.serverMetadata().issuer,
          audience: provider.client_id,
          algorithms: ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'],
          currentDate: this.#clock.now(),
          clockTolerance: 30,
        });
        const now = this.#clock.now().getTime() / 1000;
        const events = payload.events as Record<string, unknown> | undefined;
        if (
          typeof payload.iat !== 'number' ||
          now - payload.iat > this.settings.bclMaxAgeSeconds ||
          payload.iat - now > 30
        )
          return null;
        if (
          !events ||
          typeof events !== 'object' ||
          typeof events[BCL_EVENT] !== 'object' ||
          events[BCL_EVENT] === null
        )
          return null;
        if (payload.sid === undefined && payload.sub === undefined) return null;
        if (payload.nonce !== undefined) return null;
        if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256)
          return null;
        return payload;
      } catch (error) {
        // A key the cached set lacks may be a rotation: fetch the set once more.
        if (!refresh && (error as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY') continue;
        return null;
      }
    }
    return null;
  }

  async #jwks(discovered: Discovered, refresh: boolean): Promise<JSONWebKeySet> {
    if (discovered.jwks && !refresh) return discovered.jwks.set;
    const uri = discovered.config.serverMetadata().jwks_uri;
    if (!uri) throw new Error('the provider publishes no jwks_uri');
    try {
      const answer = await this.#fetch(uri, {
        method: 'GET',
        headers: { accept: 'application/json' },
      } as never);
      if (answer.status !== 200) throw new Error(`jwks_uri answered ${answer.status}`);
      const set = (await answer.json()) as JSONWebKeySet;
      if (!Array.isArray(set?.keys)) throw new Error('jwks_uri did not answer a JWK set');
      discovered.jwks = { set, fetchedAt: this.#clock.now(), error: null };
      return set;
    } catch (error) {
      const shown = this.#failure(error, "the provider's key set");
      if (discovered.jwks) discovered.jwks.error = shown;
      else discovered.jwks = { set: { keys: [] }, fetchedAt: this.#clock.now(), error: shown };
      throw error;
    }
  }

  /** The provider's discovery and key set as cached; `refresh` fetches both again first. */
  async jwksStatus(provider: OidcProvider, refresh: boolean): Promise<JwksStatus> {
    const withSecret = await this.#services.deps.storage.oidcProviders.getWithSecret(provider.id);
    if (refresh) this.#cache.delete(provider.id);
    const status: JwksStatus = {
      provider_id: provider.id,
      issuer: provider.issuer,
      jwks_uri: null,
      key_ids: [],
      key_count: 0,
      fetched_at: null,
      last_error: null,
    };
    try {
      const discovered = await this.#discover(withSecret as OidcProvider & { client_secret: string | null });
      status.jwks_uri = discovered.config.serverMetadata().jwks_uri ?? null;
      await this.#jwks(discovered, refresh).catch(() => undefined);
      const jwks = discovered.jwks;
      if (jwks) {
        status.key_ids = jwks.set.keys.map((k) => k.kid ?? '').filter((k) => k !== '');
        status.key_count = jwks.set.keys.length;
        status.fetched_at = jwks.fetchedAt;
        status.last_error = jwks.error;
      }
    } catch (error) {
      status.last_error = this.#failure(error, "the provider's discovery document");
    }
    return status;
  }

  /** Dry-run discovery for a provider not saved yet. */
  async test(input: {
    issuer: string;
    client_id: string;
    client_secret?: string;
    redirect_uri: string;
  }): Promise<DiscoveryResult> {
    const result: DiscoveryResult = {
      ok: false,
      issuer: null,
      authorization_endpoint: null,
      token_endpoint: null,
      userinfo_endpoint: null,
      jwks_uri: null,
      end_session_endpoint: null,
      backchannel_logout_supported: false,
      backchannel_logout_session_supported: false,
      scopes_supported: [],
      error: null,
    };
    try {
      const auth = input.client_secret ? client.ClientSecretBasic(input.client_secret) : client.None();
      const config = await client.discovery(new URL(input.issuer), input.client_id, undefined, auth, {
        [client.customFetch]: this.#fetch,
        timeout: 10,
      });
      const m = config.serverMetadata();
      Object.assign(result, {
        ok: true,
        issuer: m.issuer,
        authorization_endpoint: m.authorization_endpoint ?? null,
        token_endpoint: m.token_endpoint ?? null,
        userinfo_endpoint: m.userinfo_endpoint ?? null,
        jwks_uri: m.jwks_uri ?? null,
        end_session_endpoint: m.end_session_endpoint ?? null,
        backchannel_logout_supported: m.backchannel_logout_supported === true,
        backchannel_logout_session_supported: m.backchannel_logout_session_supported === true,
        scopes_supported: Array.isArray(m.scopes_supported) ? m.scopes_supported : [],
      });
    } catch (error) {
      result.error = this.#failure(error, "the provider's discovery document").slice(0, 300);
    }
    return result;
  }

  /**
   * What a caller sees of a failed fetch of the provider's documents: the guard's refusal of the
   * URL as it is (the caller's own input), any other failure one sentence — no listener, TLS,
   * timeout, an HTTP error and an answer that is not a discovery document look the same, so an
   * issuer URL cannot map internal ports. The cause goes to the log.
   */
  #failure(error: unknown, what: string): string {
    const refused = refusedDestination(error);
    if (refused) return refused.message;
    this.#logger.warn({ err: error }, `OIDC: ${what} could not be fetched`);
    return administratorFetchFailed(what, error).message;
  }

  /** Forgets a provider's cached discovery and keys (after an update or delete). */
  forget(providerId: string): void {
    this.#cache.delete(providerId);
  }
}

function preloginKey(id: string): string {
  return `oidc:prelogin:${createHash('sha256').update(id).digest('hex')}`;
}

function stringClaim(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 && value.length <= 1024 ? value : null;
}

function groupsClaim(value: unknown): string[] {
  if (!Array.isArray(value)) return typeof value === 'string' && value.length <= 255 ? [value] : [];
  return value
    .filter((g): g is string => typeof g === 'string' && g.length > 0 && g.length <= 255)
    .slice(0, 256);
}

function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}
